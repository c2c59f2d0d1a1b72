#include "core/host_scratch.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>

namespace fftune {
namespace {

TEST(HostScratch, GrowsOnlyWhenAskedForMoreAndKeepsItsMemory) {
    HostScratch s;
    double* a = s.get<double>(1000);
    for (int i = 0; i < 1000; ++i) a[i] = i;  // writable over the whole range
    EXPECT_EQ(s.capacity(), 1000 * sizeof(double));
    EXPECT_EQ(s.get<double>(10), a) << "a smaller request reuses the array";
    EXPECT_EQ(s.capacity(), 1000 * sizeof(double));
    auto* c = s.get<std::complex<double>>(4000);
    EXPECT_EQ(s.capacity(), 4000 * sizeof(std::complex<double>));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % alignof(std::complex<double>), 0u);
    c[3999] = {1, 2};
    EXPECT_EQ(c[3999].imag(), 2);
}

TEST(HostScratch, RolesAreDistinctProcessWideArrays) {
    auto* a = host_scratch(ScratchRole::test_input).get<float>(16);
    auto* b = host_scratch(ScratchRole::result).get<float>(16);
    EXPECT_NE(a, b);
    EXPECT_EQ(host_scratch(ScratchRole::test_input).get<float>(16), a);
    release_host_scratch();
    EXPECT_EQ(host_scratch(ScratchRole::test_input).capacity(), 0u);
    EXPECT_EQ(host_scratch(ScratchRole::result).capacity(), 0u);
}

}  // namespace
}  // namespace fftune
