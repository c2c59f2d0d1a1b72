// GPU-awareness evidence (MPI test, 1-3 ranks): the device-buffer exchange
// trial passes where MPI can read the buffers, and catches wrong bytes; on an
// MPI that does not say it is GPU-aware no trial is tried and the reason says
// why. (On the GPU machine, whose MPI is not GPU-aware, the gpu tests see the
// same skip reason through the runner.)
#include "core/platform/gpu_aware.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "core/platform/mpi_util.hpp"
#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"

namespace fftune {
namespace {

// Buffers that come back one bit off, as from an MPI that moved the wrong memory.
struct CorruptingBackend final : testing::ForwardingBackend {
    std::string name() const override { return "corrupting"; }
    void copy_to_host(void* d, const void* s, std::size_t b) override {
        inner().copy_to_host(d, s, b);
        if (b >= 8 * sizeof(double)) static_cast<double*>(d)[7] += 1.0;
    }
};

TEST(DeviceExchangeTrial, PassesWhenTheBytesArriveAroundTheRing) {
    auto fftw = Registry<Backend>::instance().create("fftw");
    EXPECT_FALSE(device_exchange_trial(*fftw, MPI_COMM_WORLD));
    EXPECT_FALSE(device_exchange_trial(*fftw, MPI_COMM_SELF));
}

TEST(DeviceExchangeTrial, NamesTheFirstWrongElement) {
    CorruptingBackend b;
    const auto why = device_exchange_trial(b, MPI_COMM_WORLD);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("delivered wrong data (element 7:"), std::string::npos) << *why;
}

TEST(GpuAwareUnavailable, FollowsTheLibrarysAnswerAndTheTrial) {
    auto fftw = Registry<Backend>::instance().create("fftw");
    CorruptingBackend bad;
    if (!mpi_gpu_aware()) {
        // No trial (a device pointer would crash such an MPI): the library's answer is the reason.
        for (Backend* b : {fftw.get(), static_cast<Backend*>(&bad)}) {
            const auto why = gpu_aware_unavailable(*b);
            ASSERT_TRUE(why);
            EXPECT_EQ(*why, "the MPI library is not GPU-aware (" + mpi_gpu_aware_evidence() + ")");
        }
    } else {
        EXPECT_FALSE(gpu_aware_unavailable(*fftw));
        const auto why = gpu_aware_unavailable(bad);
        ASSERT_TRUE(why);
        EXPECT_NE(why->find(", but an MPI_Sendrecv of device buffers delivered wrong data"), std::string::npos) << *why;
    }
}

}  // namespace
}  // namespace fftune
