// Launchers of the cuda poisson kernels (device_kernels_cuda.cu), in plain
// C++17 types for the C++20 side (device_kernels_cuda.cpp).
#pragma once

#include <cuda_runtime.h>

namespace fftune::poisson {

enum BoundaryCode { boundary_free = 0, boundary_wire = 1, boundary_surface = 2, boundary_periodic = 3 };

// The test problem (green.cpp's TestProblem and its constants) and a grid
// array: point lo + (a, b, c) at offset + a·stride[0] + b·stride[1] + c·stride[2].
struct TestGridRecord {
    long long n[3];
    int boundary;
    double centre[3], sigma, envelope, amplitude;
    long long lo[3], extent[3], stride[3], offset;
    bool single;
};
cudaError_t launch_fill_rho(const TestGridRecord& g, void* data, cudaStream_t stream);
// partials[5·k + q], k < blocks: max |e|, max |φ|, not finite (0/1), Σ e², Σ φ²
// of block k over the x-planes `planes` (device memory, global indices).
cudaError_t launch_phi_errors(const TestGridRecord& g, const long long* planes, long long plane_count,
                              const void* data, double* partials, int blocks, cudaStream_t stream);

// green.hpp's GreenTable.
struct GreenTableRecord {
    long long t[3], m[3];
    double h;
    int boundary;
    bool regularized4;
    double eps, origin;  // regularized4's width; the free kernels' value at r = 0
};
cudaError_t launch_green_table(const GreenTableRecord& g, double* table, cudaStream_t stream);
// Rows as device_kernels.hpp's row_place lays them out: `interleaved` is its
// rows_interleaved(axis).
cudaError_t launch_even_rows(const GreenTableRecord& g, int axis, bool interleaved, long long first, long long count,
                             const double* table, double* rows, cudaStream_t stream);
cudaError_t launch_real_rows(const GreenTableRecord& g, int axis, bool interleaved, long long first, long long count,
                             const double* spectra, double* table, cudaStream_t stream);
// out[e] over a layout's box, e in memory order: extent[k] points along
// global axis axis[k] from lo[axis[k]], slowest first.
struct FoldRecord {
    long long lo[3], extent[3];
    int axis[3];
    double scale;
    bool single;
};
cudaError_t launch_fold(const GreenTableRecord& g, const FoldRecord& f, const double* table, void* out,
                        cudaStream_t stream);

}  // namespace fftune::poisson
