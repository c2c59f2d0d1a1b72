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

// out[i] over a dense box, i in memory order: with (j0, j1, j2) its index
// slow -> fast and j_a the one along global axis a (axis_of[k] is the global
// axis of memory dimension k), out = sum_m Re(t[m][0][j_x] t[m][1][j_y] t[m][2][j_z]),
// where term m's tables lie at tables + m (n_x + n_y + n_z), x then y then z
// (device memory). Rounded to float (real_bytes 4) or double (8).
cudaError_t cuda_fill_separable(void* out, std::size_t real_bytes, const long long extent[3], const int axis_of[3],
                                const long long box_extent[3], int terms, const double2* tables, cudaStream_t stream);

// partials[2k], partials[2k + 1] for block k < blocks: max |a·scale − b| (NaN:
// infinity) and max |b| over its share of `count` reals (4 or 8 bytes each).
cudaError_t cuda_max_difference(const void* a, double scale, const void* b, long long count, std::size_t real_bytes,
                                double* partials, int blocks, cudaStream_t stream);

}  // namespace fftune
