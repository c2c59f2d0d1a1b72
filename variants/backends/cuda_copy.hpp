// Strided 3D region copy as a CUDA kernel (pack/unpack of the GPU backend).
// Either side may be device memory or pinned host memory (unified addressing).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace fftune {

// Plain region description, so this header compiles as C++17 under nvcc.
struct CopyRegion {
    long long extent[3];  // slow -> fast
    long long stride[3];  // elements
    long long offset;
};

// dst[d] = src[s] on `stream` for elements of 4, 8 or 16 bytes, over the
// extents of `s` (equal on both sides). Returns the launch status.
cudaError_t cuda_copy_region(void* dst, const CopyRegion& d, const void* src, const CopyRegion& s,
                             std::size_t elem_bytes, cudaStream_t stream);

// data[i] *= factor[i] (complex data, real factors) on `stream`; 8 or 16-byte complex.
cudaError_t cuda_multiply_real(void* data, const void* factor, long long n, std::size_t complex_bytes,
                               cudaStream_t stream);

}  // namespace fftune
