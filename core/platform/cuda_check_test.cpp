// The CUDA check throws with the call's name and CUDA's message, and passes
// success through. Needs the CUDA runtime library, not a GPU.
#include "core/platform/cuda_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fftune {
namespace {

TEST(CudaCheck, ThrowsWithTheCallAndCudasMessage) {
    EXPECT_NO_THROW(check(cudaSuccess, "cudaMalloc"));
    try {
        check(cudaErrorMemoryAllocation, "cudaMalloc(1 TiB)");
        FAIL() << "no throw";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), std::string("cudaMalloc(1 TiB): ") + cudaGetErrorString(cudaErrorMemoryAllocation));
    }
}

}  // namespace
}  // namespace fftune
