// /proc/meminfo read as the host's free and total memory.
#include "core/platform/host_memory.hpp"

#include <gtest/gtest.h>

namespace fftune {
namespace {

TEST(HostMemory, AvailableAndTotalFromMeminfo) {
    const auto m = parse_meminfo("MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->device, "host");
    EXPECT_EQ(m->total, 24576000ull * 1024);
    EXPECT_EQ(m->free, 20480000ull * 1024);  // MemAvailable, not MemFree
    EXPECT_FALSE(parse_meminfo("MemTotal: 100 kB\n"));
    EXPECT_FALSE(parse_meminfo(""));
}

TEST(HostMemory, ThisMachine) {
    const auto m = host_memory_info();
    ASSERT_TRUE(m);  // CI and the GPU machines run Linux
    EXPECT_GT(m->total, 0u);
    EXPECT_LE(m->free, m->total);
}

}  // namespace
}  // namespace fftune
