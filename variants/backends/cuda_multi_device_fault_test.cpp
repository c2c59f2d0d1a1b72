// Backend::device_fault on the cuda backend once it has made a cufftXt
// transform: a sticky error on another of the GPUs that transform runs on is
// a fault too (a sticky error is one device's: the backend's own stream does
// not see it). Skipped, saying so, below 2 GPUs. A process of its own: the
// fault ends the process's use of that GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "core/backend.hpp"
#include "core/registry.hpp"

void launch_illegal_write(cudaStream_t stream);  // cuda_illegal_write.cu

namespace fftune {
namespace {

TEST(CudaMultiDeviceFault, AStickyErrorOnAnotherGpuOfTheTransformIsAFault) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2)
        GTEST_SKIP() << "needs 2 or more GPUs (cufftXt); " << devices << " visible";
    const auto backend = Registry<Backend>::instance().create("cuda");
    const auto fft = backend->make_multi_device_fft({64, 64, 64}, Precision::double_);
    ASSERT_EQ(fft->devices(), devices);
    EXPECT_FALSE(backend->device_fault());
    int own = -1;
    ASSERT_EQ(cudaGetDevice(&own), cudaSuccess);
    const int other = own == devices - 1 ? 0 : devices - 1;
    ASSERT_EQ(cudaSetDevice(other), cudaSuccess);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    launch_illegal_write(stream);
    EXPECT_NE(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaSetDevice(own), cudaSuccess);
    const auto fault = backend->device_fault();
    ASSERT_TRUE(fault) << "an illegal address on GPU " << other << " went unnoticed";
    EXPECT_EQ(fault->find("GPU " + std::to_string(other) + ": "), 0u) << *fault;
    int current = -1;
    EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, own) << "device_fault left another GPU current";
}

}  // namespace
}  // namespace fftune
