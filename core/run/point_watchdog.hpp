// Ends the MPI job when one point (or probe) runs past its time limit (the
// testcase's point_timeout_s, fftune probe's --timeout): a rank left waiting
// in an exchange that a failed peer never joins, or a hung driver, would
// otherwise hold the job until the batch system kills it, and a resubmitted
// job would hang on the same point.
// Rank 0 leaves the reason in the job's note (core/platform/device_fault.hpp), which
// the sweep adds to the record it writes for the point before resuming after
// it (core/run/sweep.cpp). The other ranks end the job too, a grace period later,
// should rank 0 be unable to.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <mpi.h>

namespace fftune {

// Exit status of a job the watchdog ended.
inline constexpr int point_timeout_status = 5;

class PointWatchdog {
public:
    // limit_s <= 0: never fires (no thread). `limit_name` names the setting
    // in the note ("point_timeout_s", "--timeout").
    PointWatchdog(MPI_Comm comm, double limit_s, std::string limit_name = "point_timeout_s");
    ~PointWatchdog();
    PointWatchdog(const PointWatchdog&) = delete;
    PointWatchdog& operator=(const PointWatchdog&) = delete;

    // A point starts; `what` names it in the note.
    void arm(std::string what);
    // The point ended.
    void disarm();

private:
    void watch();

    MPI_Comm comm_;
    double limit_s_;
    std::string limit_name_;
    int rank_ = 0;
    bool may_abort_ = false;
    std::chrono::steady_clock::duration wait_{};  // from arming to ending the job, on this rank
    std::mutex mutex_;
    std::condition_variable changed_;
    bool armed_ = false, stop_ = false;
    std::chrono::steady_clock::time_point deadline_;
    std::string what_;
    std::thread thread_;
};

}  // namespace fftune
