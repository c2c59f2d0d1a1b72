// Backend::device_fault on the cuda backend: nothing on a healthy device, nor
// after an ordinary failed call (an impossible cudaMalloc); the sticky error
// after a kernel writes to an illegal address. A process of its own: the
// fault ends the process's use of the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "core/platform/backend.hpp"
#include "core/base/registry.hpp"

void launch_illegal_write(cudaStream_t stream);  // cuda_illegal_write.cu

namespace fftune {
namespace {

TEST(CudaDeviceFault, OnlyAStickyErrorIsAFault) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
    const auto backend = Registry<Backend>::instance().create("cuda");
    EXPECT_FALSE(backend->device_fault());
    void* p = nullptr;
    EXPECT_NE(cudaMalloc(&p, std::size_t(1) << 60), cudaSuccess);
    EXPECT_FALSE(backend->device_fault()) << "a failed allocation leaves the device usable";
    const auto stream = static_cast<cudaStream_t>(backend->native_stream());
    launch_illegal_write(stream);
    EXPECT_NE(cudaStreamSynchronize(stream), cudaSuccess);
    const auto fault = backend->device_fault();
    ASSERT_TRUE(fault) << "an illegal address is sticky: the device is lost";
    EXPECT_TRUE(fault->find("cudaErrorIllegalAddress") != std::string::npos ||
                fault->find("cudaErrorLaunchFailure") != std::string::npos)
        << *fault;
}

}  // namespace
}  // namespace fftune
