// MPI helpers (MPI test, 1-4 ranks): agreed errors and agreed failures of
// rank-local work, which must leave every rank at the same point.
#include "core/platform/mpi_util.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fftune
