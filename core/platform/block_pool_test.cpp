// The pool's bookkeeping with fake addresses: a freed block serves the next
// allocation of its exact size on its device only, the cap evicts the oldest,
// and whatever the pool does not keep goes back to the caller to free.
#include "core/platform/block_pool.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace fftune {
namespace {

void* at(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

TEST(BlockPool, AFreedBlockServesTheNextAllocationOfItsSizeOnItsDevice) {
    BlockPool pool;
    pool.set_cap(0, 1000);
    pool.adopt(at(0x100), 0, 300);
    EXPECT_TRUE(pool.give(at(0x100)).empty()) << "under the cap: kept";
    EXPECT_EQ(pool.idle_bytes(0), 300u);
    EXPECT_EQ(pool.take(0, 299), nullptr) << "another size";
    EXPECT_EQ(pool.take(0, 301), nullptr) << "another size";
    EXPECT_EQ(pool.take(1, 300), nullptr) << "another device";
    EXPECT_EQ(pool.take(0, 300), at(0x100));
    EXPECT_EQ(pool.idle_bytes(0), 0u);
    EXPECT_EQ(pool.take(0, 300), nullptr) << "a block serves one holder at a time";
    EXPECT_EQ(pool.in_use(), 1u);
}

TEST(BlockPool, TheCapEvictsTheOldestIdleBlocksOfThatDeviceOnly) {
    BlockPool pool;
    pool.set_cap(0, 1000);
    pool.set_cap(1, 1000);
    for (std::uintptr_t i = 1; i <= 3; ++i) pool.adopt(at(i << 8), 0, 400);
    pool.adopt(at(0x900), 1, 400);
    EXPECT_TRUE(pool.give(at(0x900)).empty());
    EXPECT_TRUE(pool.give(at(0x100)).empty());
    EXPECT_TRUE(pool.give(at(0x200)).empty());
    const auto evicted = pool.give(at(0x300));  // 1200 > 1000: the oldest of device 0 goes
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0], (BlockPool::Block{at(0x100), 400, 0}));
    EXPECT_EQ(pool.idle_bytes(0), 800u);
    EXPECT_EQ(pool.idle_bytes(1), 400u) << "another device's blocks are not evicted";
}

TEST(BlockPool, BlocksOverTheCapUnknownOrUncappedGoBackToTheCaller) {
    BlockPool pool;
    pool.set_cap(0, 100);
    pool.adopt(at(0x100), 0, 101);
    EXPECT_EQ(pool.give(at(0x100)), (std::vector<BlockPool::Block>{{at(0x100), 101, 0}})) << "larger than the cap";
    EXPECT_EQ(pool.give(at(0x500)), (std::vector<BlockPool::Block>{{at(0x500), 0, -1}})) << "never adopted";
    pool.adopt(at(0x200), 3, 10);
    EXPECT_FALSE(pool.has_cap(3));
    EXPECT_EQ(pool.give(at(0x200)).size(), 1u) << "a device without a cap keeps nothing";
    pool.adopt(at(0x400), 0, 10);
    EXPECT_EQ(pool.device_of(at(0x400)), 0);
    EXPECT_EQ(pool.give(at(0x400), /*keep=*/false), (std::vector<BlockPool::Block>{{at(0x400), 10, 0}}))
        << "not to be kept (its device failed)";
    EXPECT_EQ(pool.device_of(at(0x400)), -1);
    pool.set_cap(4, 0);
    pool.adopt(at(0x300), 4, 1);
    EXPECT_EQ(pool.give(at(0x300)).size(), 1u) << "cap 0: off";
    EXPECT_EQ(pool.in_use(), 0u);
}

TEST(BlockPool, ClearHandsBackTheIdleBlocksOfOneDeviceOrAll) {
    BlockPool pool;
    pool.set_cap(0, 1000);
    pool.set_cap(1, 1000);
    pool.adopt(at(0x100), 0, 10);
    pool.adopt(at(0x200), 1, 20);
    pool.adopt(at(0x300), 0, 30);
    pool.give(at(0x100));
    pool.give(at(0x200));  // 0x300 stays in use
    const auto zero = pool.clear(0);
    ASSERT_EQ(zero.size(), 1u);
    EXPECT_EQ(zero[0].ptr, at(0x100));
    EXPECT_EQ(pool.idle_bytes(1), 20u);
    EXPECT_EQ(pool.clear().size(), 1u);
    EXPECT_EQ(pool.idle_bytes(1), 0u);
    EXPECT_EQ(pool.in_use(), 1u) << "a block in use is not the pool's to free";
    EXPECT_TRUE(pool.give(at(0x300)).empty());
}

}  // namespace
}  // namespace fftune
