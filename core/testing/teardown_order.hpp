// Test helper: did every rank let go of its mappings of peers' buffers
// before any rank freed one (freeing an exported allocation a peer still
// maps is undefined)? Compares the ranks' steady_clock times, the node's
// monotonic clock, so the ranks must share a node.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace fftune::testing {

inline void expect_closed_before_freed(const std::vector<std::chrono::steady_clock::time_point>& closed,
                                       const std::vector<std::chrono::steady_clock::time_point>& freed) {
    ASSERT_FALSE(closed.empty());
    ASSERT_FALSE(freed.empty());
    const auto ns = [](std::chrono::steady_clock::time_point t) {
        return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    };
    long long last_close = ns(*std::max_element(closed.begin(), closed.end()));
    long long first_free = ns(*std::min_element(freed.begin(), freed.end()));
    long long all_closed = 0, any_freed = 0;
    MPI_Allreduce(&last_close, &all_closed, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&first_free, &any_freed, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    EXPECT_GE(any_freed, all_closed) << "a rank freed memory " << (all_closed - any_freed) / 1e6
                                     << " ms before the last rank let go of its mappings";
}

}  // namespace fftune::testing
