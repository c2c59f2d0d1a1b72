#include "core/platform/parallel.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace fftune {
namespace {

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
    for (int threads : {1, 2, 3, 7, 64})
        for (std::int64_t n : {0, 1, 5, 64, 1001}) {
            std::vector<std::atomic<int>> hits(n);
            parallel_for(10, 10 + n, [&](std::int64_t lo, std::int64_t hi) {
                for (auto i = lo; i < hi; ++i) hits[i - 10]++;
            }, threads);
            for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " threads=" << threads;
        }
}

TEST(ParallelFor, UsesSeveralThreadsAndHonoursTheMinimumChunk) {
    std::mutex m;
    std::set<std::thread::id> ids;
    std::atomic<int> calls{0};
    auto record = [&](std::int64_t, std::int64_t) {
        calls++;
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
    };
    parallel_for(0, 1000, record, 4);
    EXPECT_EQ(calls.load(), 4);
    EXPECT_EQ(ids.size(), 4u);
    calls = 0;
    parallel_for(0, 1000, record, 4, 600);  // 1000 / 600 -> one chunk, on the caller's thread
    EXPECT_EQ(calls.load(), 1);
}

TEST(ParallelFor, RethrowsAfterEveryChunkFinished) {
    std::atomic<int> done{0};
    EXPECT_THROW(parallel_for(0, 8, [&](std::int64_t lo, std::int64_t) {
        if (lo == 0) throw std::runtime_error("chunk 0");
        done++;
    }, 8), std::runtime_error);
    EXPECT_EQ(done.load(), 7);
}

// The second loop's chunks run on threads the first one ran on: a thread
// started per call has never run a chunk before.
TEST(ParallelFor, KeepsItsThreadsForTheNextCall) {
    static thread_local int chunks_run = 0;
    std::atomic<int> on_used_thread{0};
    auto body = [&](std::int64_t lo, std::int64_t) {
        if (lo != 0 && chunks_run > 0) on_used_thread++;  // lo 0: the caller's chunk
        ++chunks_run;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    parallel_for(0, 4, body, 4);
    on_used_thread = 0;
    parallel_for(0, 4, body, 4);
    EXPECT_EQ(on_used_thread.load(), 3);
}

// Started ahead, the threads are there for the next loop, which starts none.
TEST(ParallelFor, StartedThreadsServeTheNextLoop) {
    const int kept = start_host_threads(6);
    EXPECT_GE(kept, 5);
    EXPECT_EQ(start_host_threads(6), kept);
    parallel_for(0, 600, [](std::int64_t, std::int64_t) {}, 6);
    EXPECT_EQ(start_host_threads(1), kept);
}

TEST(ParallelFor, ANestedCallRunsOnItsChunksThread) {
    std::vector<std::atomic<int>> hits(64);
    std::atomic<int> other_thread{0};
    parallel_for(0, 8, [&](std::int64_t lo, std::int64_t hi) {
        const auto me = std::this_thread::get_id();
        parallel_for(lo * 8, hi * 8, [&](std::int64_t a, std::int64_t b) {
            if (std::this_thread::get_id() != me) other_thread++;
            for (auto i = a; i < b; ++i) hits[i]++;
        }, 4);
    }, 4);
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    EXPECT_EQ(other_thread.load(), 0);
}

// Two callers at once: the second gets threads of its own, and both cover their ranges.
TEST(ParallelFor, ConcurrentCallersEachCoverTheirRange) {
    constexpr int n = 4000;
    std::vector<std::atomic<int>> a(n), b(n);
    auto loop = [](std::vector<std::atomic<int>>& hits) {
        for (int rep = 0; rep < 50; ++rep)
            parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
                for (auto i = lo; i < hi; ++i) hits[i]++;
            }, 3);
    };
    std::thread t1(loop, std::ref(a)), t2(loop, std::ref(b));
    t1.join(), t2.join();
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(a[i].load(), 50);
        EXPECT_EQ(b[i].load(), 50);
    }
}

// After a chunk threw, the kept threads still run the next loop.
TEST(ParallelFor, RunsAgainAfterAChunkThrew) {
    EXPECT_THROW(parallel_for(0, 4, [](std::int64_t lo, std::int64_t) {
        if (lo == 3) throw std::runtime_error("chunk 3");
    }, 4), std::runtime_error);
    std::vector<std::atomic<int>> hits(100);
    parallel_for(0, 100, [&](std::int64_t lo, std::int64_t hi) {
        for (auto i = lo; i < hi; ++i) hits[i]++;
    }, 4);
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(HostThreads, SharesTheCoresAmongTheNodesRanks) {
    setenv("FFTUNE_HOST_THREADS", "3", 1);
    EXPECT_EQ(host_threads(), 3);
    unsetenv("FFTUNE_HOST_THREADS");
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "100000", 1);
    EXPECT_EQ(host_threads(), 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
    cpu_set_t mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
    EXPECT_EQ(host_threads(), std::min(std::max(1, static_cast<int>(std::thread::hardware_concurrency())),
                                       CPU_COUNT(&mask)));
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

// A rank that mpirun bound to one core gets one thread, not the node's count.
TEST(HostThreads, StaysWithinTheCoresTheProcessIsBoundTo) {
    cpu_set_t saved, one;
    ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &saved)) {
            CPU_SET(c, &one);
            break;
        }
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    const int threads = host_threads();
    sched_setaffinity(0, sizeof(saved), &saved);
    EXPECT_EQ(threads, 1);
}

}  // namespace
}  // namespace fftune
