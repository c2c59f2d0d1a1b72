#include "core/run/point_watchdog.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/platform/device_fault.hpp"

namespace fftune {

PointWatchdog::PointWatchdog(MPI_Comm comm, double limit_s, std::string limit_name)
    : comm_(comm), limit_s_(limit_s), limit_name_(std::move(limit_name)) {
    MPI_Comm_rank(comm, &rank_);
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    may_abort_ = level == MPI_THREAD_MULTIPLE;  // MPI_Abort from this object's own thread
    // Rank 0 writes the note; the others end the job only if it cannot (a
    // grace of 10% of the limit, 1 to 60 s). Past ~9e9 s a deadline's
    // nanoseconds overflow; 1e9 s (31 years) is never.
    const double grace = rank_ == 0 ? 0.0 : std::clamp(0.1 * limit_s_, 1.0, 60.0);
    wait_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::min(limit_s_ + grace, 1e9)));
    if (limit_s_ > 0) thread_ = std::thread([this] { watch(); });
}

PointWatchdog::~PointWatchdog() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void PointWatchdog::arm(std::string what) {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        armed_ = true;
        what_ = std::move(what);
        deadline_ = std::chrono::steady_clock::now() + wait_;
    }
    changed_.notify_all();
}

void PointWatchdog::disarm() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        armed_ = false;
    }
    changed_.notify_all();
}

void PointWatchdog::watch() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
        if (!armed_) {
            changed_.wait(lock);
            continue;
        }
        const auto deadline = deadline_;
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ && !stop_ &&
            deadline_ == deadline) {
            const std::string why = fmt::format("rank {}: {} still running after {:g} s ({})", rank_, what_,
                                                limit_s_, limit_name_);
            // Still holding the lock: the point cannot be disarmed and its
            // record written now, so the sweep blames the right point.
            end_job(comm_, why, point_timeout_status, /*write_note=*/rank_ == 0, may_abort_);
        }
    }
}

}  // namespace fftune
