// The cuda backend's pool of freed arrays (core/platform/block_pool.hpp) on a
// real device: an array freed serves the next allocation of its size, its
// memory counts as free in device_memory_info, an allocation that fails lets
// the pool go first, an array over the cap goes back to the device, and
// FFTUNE_DEVICE_POOL_MIB=0 keeps nothing (registered twice, once with it and
// FFTUNE_HOST_POOL_MIB=0); a freed pinned host array serves the next of its size.
// Serial: it reads the device's free memory, which other processes change.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/settings.hpp"

namespace fftune {
namespace {

constexpr double kMiB = 1 << 20;
constexpr double kSlack = 64 * kMiB;  // cudaMemGetInfo moves in pages, cuda's own bookkeeping

std::unique_ptr<Backend> cuda_or_skip() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return nullptr;
    return Registry<Backend>::instance().create("cuda");
}

double raw_free() {
    std::size_t free = 0, total = 0;
    EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    return double(free);
}

bool pooled() { return device_pool_mib_setting().value_or(1) != 0; }
bool host_pooled() { return host_pool_mib_setting().value_or(1) != 0; }

// Pinned host arrays (the staging of MPI transports): the next of the same
// size gets the freed one, still pinned, and a copy from the device into it
// lands; one holder at a time.
TEST(CudaBlockPool, AFreedPinnedHostArrayServesTheNextOfItsSize) {
    const auto be = cuda_or_skip();
    if (!be) GTEST_SKIP() << "no CUDA device";
    const std::size_t bytes = (std::size_t(16) << 20) + 4104;
    void* first = nullptr;
    {
        Buffer a(*be, bytes, true);
        first = a.data();
    }
    Buffer b(*be, bytes, true);
    if (host_pooled()) EXPECT_EQ(b.data(), first);
    Buffer c(*be, bytes, true);
    EXPECT_NE(c.data(), b.data()) << "one holder at a time";
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, b.data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "pinned";
    Buffer d(*be, bytes);
    ASSERT_EQ(cudaMemset(d.data(), 7, bytes), cudaSuccess);
    be->copy_to_host(b.data(), d.data(), bytes);
    be->synchronize();
    const auto* v = static_cast<const unsigned char*>(b.data());
    EXPECT_EQ(v[0], 7);
    EXPECT_EQ(v[bytes - 1], 7);
}

TEST(CudaBlockPool, AFreedArrayServesTheNextAllocationOfItsSize) {
    const auto be = cuda_or_skip();
    if (!be) GTEST_SKIP() << "no CUDA device";
    const std::size_t bytes = (std::size_t(64) << 20) + 4104;  // no other array of this test has this size
    void* first = nullptr;
    {
        Buffer a(*be, bytes);
        first = a.data();
    }
    Buffer b(*be, bytes);
    if (pooled()) EXPECT_EQ(b.data(), first);
    Buffer c(*be, bytes);
    EXPECT_NE(c.data(), b.data()) << "one holder at a time";
    EXPECT_EQ(cudaMemset(b.data(), 1, bytes), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CudaBlockPool, IdleArraysCountAsFreeAndAFailedAllocationLetsThemGo) {
    const auto be = cuda_or_skip();
    if (!be) GTEST_SKIP() << "no CUDA device";
    const std::size_t bytes = (std::size_t(1) << 30) + 8200;
    // Idle bytes: what device_memory_info counts as free beyond the device's free memory.
    auto idle = [&] {
        const double raw = raw_free();
        return double(be->device_memory_info().value().free) - raw;
    };
    const double idle_before = idle();
    { Buffer a(*be, bytes); }
    const double raw = raw_free();
    const double idle_after = idle();
    EXPECT_NEAR(idle_after - idle_before, pooled() ? double(bytes) : 0.0, kSlack)
        << "the pool's idle arrays are this process's to allocate";
    EXPECT_THROW({ Buffer huge(*be, be->device_memory_info().value().total + (std::size_t(1) << 30)); },
                 std::exception);
    EXPECT_NEAR(idle(), 0.0, kSlack) << "the failed allocation emptied the pool";
    EXPECT_NEAR(raw_free() - raw, idle_after, kSlack) << "and gave its memory to the device";
}

TEST(CudaBlockPool, AnArrayOverTheCapGoesBackToTheDevice) {
    const auto be = cuda_or_skip();
    if (!be) GTEST_SKIP() << "no CUDA device";
    const auto info = be->device_memory_info();
    ASSERT_TRUE(info);
    const std::size_t cap = device_pool_mib_setting() ? *device_pool_mib_setting() << 20 : info->total / 16;
    const std::size_t bytes = cap + (std::size_t(1) << 20);
    if (double(bytes) > 0.5 * double(info->free)) GTEST_SKIP() << "the device has too little free memory for this test";
    const double before = raw_free();
    { Buffer a(*be, bytes); }
    EXPECT_NEAR(raw_free(), before, kSlack) << "an array of " << bytes << " bytes is over the cap of " << cap;
}

}  // namespace
}  // namespace fftune
