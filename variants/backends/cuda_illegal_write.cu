// Test helper for cuda_device_fault_test.cpp: a kernel that writes to an
// illegal address, which leaves a sticky error (the device is lost for the
// rest of the process).
#include <cuda_runtime.h>

namespace {
__global__ void write_one(int* p) { *p = 1; }
}  // namespace

void launch_illegal_write(cudaStream_t stream) { write_one<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(8)); }
