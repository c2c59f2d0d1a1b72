// Launchers of the cuda convolution kernels (device_kernels_cuda.cu), in plain
// C++17 types for the C++20 side (device_kernels_cuda.cpp).
#pragma once

#include <cuda_runtime.h>

namespace fftune::convolution {

// A Cell as laid out in memory: box lo, box hi, rate (static_asserted in device_kernels_cuda.cpp).
struct CellRecord {
    long long lo[3], hi[3], rate;
};
// Grid point (i, j, l) at data[base + i·stride[0] + j·stride[1] + l·stride[2]].
struct GridRecord {
    const double* data;
    long long base;
    long long stride[3];
};

// A Tiling (sampling.hpp) by its numbers, and an x plane of its cells (TilingPlane): dropped −1 for none.
struct TilingRecord {
    long long region_lo[3], region_hi[3], cell, blocks[3];
    long long count, dropped, dropped_samples;
    unsigned long long samples;
};
struct TilingPlaneRecord {
    long long rate;
    unsigned long long start;
};
// cells[k] and offsets[k] for k < count from k alone, offsets[count] = samples: a thread each.
cudaError_t launch_make_tiling(const TilingRecord& t, const TilingPlaneRecord* planes, CellRecord* cells,
                               unsigned long long* offsets, cudaStream_t stream);

// out[offsets[c] + k] = the k-th sample of cell c (x slowest), cells [0, n);
// `slots`: threads per cell, at least the points of the largest cell.
cudaError_t launch_octree_sample(const CellRecord* cells, const unsigned long long* offsets, long long n, int slots,
                                 GridRecord grid, double* out, cudaStream_t stream);
// out[point of cell c, relative to region_lo, rows of ny·nz] += the trilinear
// interpolation of cell c's samples; one thread per point.
cudaError_t launch_octree_interpolate_add(const CellRecord* cells, const unsigned long long* offsets, long long n,
                                          int slots, const double* samples, const long long* region_lo, long long ny,
                                          long long nz, double* out, cudaStream_t stream);

// The sampled check's points (ConvolutionKernels::check_values): point k is
// given[3k ..) for k < given_count, else random_check_point(domain, k −
// given_count); out[k] its grid value, 0 outside [region_lo, region_hi).
struct CheckPointsRecord {
    const long long* given;
    long long given_count, random;
    long long region_lo[3], region_hi[3], domain_lo[3], domain_extent[3];
};
cudaError_t launch_check_values(GridRecord grid, const CheckPointsRecord& c, double* out, cudaStream_t stream);

// g over a box of the padded grid (ConvolutionKernels::fill_green): point
// (lo + (i, j, l)) at out[base + i·stride[0] + j·stride[1] + l·stride[2]].
struct GreenFill {
    long long lo[3], extent[3], stride[3], n[3];
    long long base;
    bool inverse_r;
    double scale;
};
cudaError_t launch_green_fill(const GreenFill& f, double* out, cudaStream_t stream);

// The input over a box (ConvolutionKernels::fill_input): point (lo + (i, j, l))
// at out[base + i·stride[0] + j·stride[1] + l·stride[2]].
struct InputFill {
    long long lo[3], extent[3], stride[3], n[3];
    long long base;
    bool noise;
};
cudaError_t launch_input_fill(const InputFill& f, double* out, cudaStream_t stream);
// plane_sums[k·n0 + a] = Σ_{b, c} x[(a·n1 + b)·n2 + c] g(p_k − (a, b, c)): a block per (k, a).
// partials[4·k + q], k < blocks: Σ (y − exact)², Σ exact² (finite differences), not finite (0/1), max |exact|.
cudaError_t launch_compare(const double* y, const double* exact, long long count, double* partials, int blocks,
                           cudaStream_t stream);
cudaError_t launch_direct_sums(const double* x, const long long* n, bool inverse_r, const long long* probes,
                               long long count, double* plane_sums, cudaStream_t stream);

}  // namespace fftune::convolution
