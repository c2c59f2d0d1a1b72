// collective_try (MPI test, 1-4 ranks): every rank gets the same outcome of a
// step; a real failure outranks a refusal, which outranks a PeerFailed, and
// the message is the one of the lowest rank with the deciding kind, named
// by rank unless every rank threw it.
#include "core/platform/collective_try.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/testing/world.hpp"

namespace fftune {
namespace {

using testing::world_rank;
using testing::world_size;

TEST(CollectiveTry, NothingWhenEveryRankSucceeds) {
    bool unsupported = true;
    int ran = 0;
    EXPECT_FALSE(collective_try(MPI_COMM_WORLD, [&] { ++ran; }, &unsupported));
    EXPECT_EQ(ran, 1);
    EXPECT_FALSE(unsupported);
}

TEST(CollectiveTry, TheFailingRanksOwnErrorWinsOverThePeerFailedItCaused) {
    // The last rank fails; the others stop because of it (as all_or_none makes them).
    const int last = world_size() - 1;
    bool unsupported = true;
    const auto err = collective_try(
        MPI_COMM_WORLD,
        [&] {
            if (world_rank() == last) throw std::runtime_error("out of device memory");
            throw PeerFailed("stopped because rank " + std::to_string(last) + " failed");
        },
        &unsupported);
    ASSERT_TRUE(err);
    const std::string want = world_size() > 1 ? "rank " + std::to_string(last) + ": out of device memory"
                                              : "out of device memory";
    EXPECT_EQ(*err, want);
    EXPECT_FALSE(unsupported);
}

TEST(CollectiveTry, ARefusalEveryRankRaisesIsASkipWithoutARankName) {
    bool unsupported = false;
    const auto err = collective_try(
        MPI_COMM_WORLD, [] { throw Unsupported("the library refuses this size"); }, &unsupported);
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "the library refuses this size");
    EXPECT_TRUE(unsupported);
}

TEST(CollectiveTry, ARealFailureOnOneRankOutranksARefusalOnTheOthers) {
    if (world_size() == 1) GTEST_SKIP() << "needs a rank that refuses and one that fails";
    bool unsupported = true;
    const auto err = collective_try(
        MPI_COMM_WORLD,
        [] {
            if (world_rank() == 0) throw Unsupported("refused");
            throw std::runtime_error("broke");
        },
        &unsupported);
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "rank 1: broke");
    EXPECT_FALSE(unsupported);
}

}  // namespace
}  // namespace fftune
