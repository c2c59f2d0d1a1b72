// PointWatchdog: it lets a point run that ends in time, however often it is
// re-armed, and a limit too large to add to a clock is "never". Should it
// fire, the job ends and this test fails with it; that it does fire for a
// point past its limit is hung_point_job's test (core/tests.cmake).
#include "core/run/point_watchdog.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>

namespace fftune {
namespace {

using namespace std::chrono_literals;

TEST(PointWatchdog, APointThatEndsInTimeRunsOn) {
    PointWatchdog watchdog(MPI_COMM_WORLD, 0.3);
    watchdog.arm("point A");
    std::this_thread::sleep_for(100ms);
    watchdog.disarm();
    std::this_thread::sleep_for(500ms);  // past A's deadline, disarmed
    for (int i = 0; i < 3; ++i) {  // each point gets its own 0.3 s: 0.6 s in all
        watchdog.arm("point B");
        std::this_thread::sleep_for(200ms);
    }
    watchdog.disarm();
    SUCCEED();
}

TEST(PointWatchdog, ALimitTooLargeForTheClockIsNever) {
    for (double limit : {1e10, 1e18, 1e300}) {
        PointWatchdog watchdog(MPI_COMM_WORLD, limit);
        watchdog.arm("a long point");
        std::this_thread::sleep_for(200ms);
        watchdog.disarm();
    }
    SUCCEED();
}

TEST(PointWatchdog, NoLimitStartsNoWatch) {
    PointWatchdog watchdog(MPI_COMM_WORLD, 0);
    watchdog.arm("any point");
    std::this_thread::sleep_for(50ms);
    watchdog.disarm();
    SUCCEED();
}

}  // namespace
}  // namespace fftune
