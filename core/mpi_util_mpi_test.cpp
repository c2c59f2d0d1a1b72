// MPI helpers (MPI test, 1-4 ranks): agreed errors and agreed failures of
// rank-local work, which must leave every rank at the same point, also when
// that work is asynchronous and the others cannot finish without the rank
// that failed.
#include "core/mpi_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/testing/world.hpp"

namespace fftune {
namespace {

using testing::world_rank;
using testing::world_size;

TEST(AgreeError, LowestFailingRankWins) {
    const int r = world_rank(), p = world_size();
    EXPECT_FALSE(agree_error(MPI_COMM_WORLD, ""));
    const auto e = agree_error(MPI_COMM_WORLD, r == p - 1 ? "last rank broke" : "");
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("last rank broke"), std::string::npos);
    const auto all = agree_error(MPI_COMM_WORLD, "rank " + std::to_string(r));
    ASSERT_TRUE(all);
    EXPECT_NE(all->find("rank 0"), std::string::npos);
}

TEST(AllOrNone, SucceedsOnEveryRankWhenEveryRankDoes) {
    int ran = 0;
    EXPECT_NO_THROW(all_or_none(MPI_COMM_WORLD, [&] { ++ran; }));
    EXPECT_EQ(ran, 1);
}

TEST(AllOrNone, OneRanksFailureStopsEveryRankThere) {
    const int p = world_size(), last = p - 1;
    // The failing rank keeps its own exception (type and message); the others
    // learn which rank failed.
    try {
        all_or_none(MPI_COMM_WORLD, [&] {
            if (world_rank() == last) throw std::range_error("out of device memory on the last rank");
        });
        ADD_FAILURE() << "no rank may go on past a failure";
    } catch (const PeerFailed& e) {
        EXPECT_NE(world_rank(), last);
        EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last) + " of " + std::to_string(p)),
                  std::string::npos) << e.what();
    } catch (const std::range_error& e) {
        EXPECT_EQ(world_rank(), last);
        EXPECT_STREQ(e.what(), "out of device memory on the last rank");
    }
    // Every rank is still in step: the next collective call matches.
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(sum, p);
}

TEST(AgreeFailure, NamesTheLowestFailingRank) {
    // Ranks 1 and up fail (at one rank: none, so nothing throws).
    std::exception_ptr mine;
    if (world_rank() >= 1) mine = std::make_exception_ptr(std::runtime_error("broke"));
    if (world_size() == 1) {
        EXPECT_NO_THROW(agree_failure(MPI_COMM_WORLD, mine));
        return;
    }
    try {
        agree_failure(MPI_COMM_WORLD, mine);
        ADD_FAILURE() << "rank 1 failed: every rank must throw";
    } catch (const PeerFailed& e) {
        EXPECT_EQ(world_rank(), 0);
        EXPECT_NE(std::string(e.what()).find("rank 1 of"), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
        EXPECT_GE(world_rank(), 1);
        EXPECT_STREQ(e.what(), "broke");
    }
}

// Seconds since `t0`.
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every rank still in step: the next collective call matches.
void expect_in_step() {
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(sum, world_size());
}

TEST(CompleteTogether, FinishesWhenEveryRanksPartDoes) {
    int polls = 0, cancels = 0;
    const int needed = 1 + 3 * world_rank();  // ranks finish at different times
    EXPECT_NO_THROW(complete_together(
        MPI_COMM_WORLD, [&] { return ++polls >= needed; }, [&] { ++cancels; }, 60.0, "init"));
    EXPECT_EQ(polls, needed);
    EXPECT_EQ(cancels, 0);
    expect_in_step();
}

TEST(CompleteTogether, AFailureStopsPeersThatWaitOnTheFailedRank) {
    // As a communicator's set-up: the last rank fails after a few polls; the
    // others could only finish with it, so they would poll until the timeout
    // (here a minute) unless told.
    const int last = world_size() - 1;
    int polls = 0, cancels = 0;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        complete_together(
            MPI_COMM_WORLD,
            [&] {
                if (world_rank() == last && ++polls == 5) throw std::range_error("bootstrap failed on the last rank");
                return false;
            },
            [&] { ++cancels; }, 60.0, "init");
        ADD_FAILURE() << "every rank must throw";
    } catch (const PeerFailed& e) {
        EXPECT_NE(world_rank(), last);
        EXPECT_NE(std::string(e.what()).find("init: stopped because rank " + std::to_string(last) + " of"),
                  std::string::npos)
            << e.what();
    } catch (const std::range_error& e) {
        EXPECT_EQ(world_rank(), last);
        EXPECT_STREQ(e.what(), "bootstrap failed on the last rank");
    }
    EXPECT_EQ(cancels, 1);  // a part that may still run is stopped on every rank
    EXPECT_LT(since(t0), 10.0) << "the others waited for their timeout instead of being told";
    expect_in_step();
}

TEST(CompleteTogether, ARankNotDoneInTimeFailsAndStopsTheOthers) {
    // Rank 0's part never finishes; the others' finish at once and then hear
    // from rank 0 when its timeout expires.
    int cancels = 0;
    try {
        complete_together(
            MPI_COMM_WORLD, [&] { return world_rank() != 0; }, [&] { ++cancels; }, 0.5, "init");
        ADD_FAILURE() << "every rank must throw";
    } catch (const PeerFailed& e) {
        EXPECT_NE(world_rank(), 0);
        EXPECT_NE(std::string(e.what()).find("rank 0 of"), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(world_rank(), 0);
        EXPECT_NE(std::string(e.what()).find("init: not done after 0.5 s"), std::string::npos) << e.what();
    }
    EXPECT_EQ(cancels, 1);  // also where the part had finished: a peer's is gone
    expect_in_step();
}

TEST(CompleteTogether, TheLowestRankThatFailedIsNamed) {
    // Ranks 1 and up fail at once (at one rank nothing fails).
    int cancels = 0;
    try {
        complete_together(
            MPI_COMM_WORLD,
            [&] {
                if (world_rank() >= 1) throw std::runtime_error("broke");
                return false;  // rank 0 waits on the others
            },
            [&] { ++cancels; }, world_size() == 1 ? 0.2 : 60.0, "init");
        ADD_FAILURE() << "every rank must throw";
    } catch (const PeerFailed& e) {
        EXPECT_EQ(world_rank(), 0);
        EXPECT_NE(std::string(e.what()).find("rank 1 of"), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
        if (world_rank() == 0)
            EXPECT_NE(std::string(e.what()).find("not done after"), std::string::npos) << e.what();  // alone
        else
            EXPECT_STREQ(e.what(), "broke");
    }
    EXPECT_EQ(cancels, 1);
    expect_in_step();
}

}  // namespace
}  // namespace fftune
