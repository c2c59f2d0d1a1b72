// Launchers of the krylov family's CUDA kernels (cuda_launch.cu), in plain
// C++17 types for the C++20 side (cuda_kernels.cpp). Every launch is on
// `stream`; a reduction adds its sum to the device double *sum.
#pragma once

#include <cuda_runtime.h>

namespace fftune::krylov {

struct KrylovRows {
    long long rows, n, plane, z0;  // a rank's rows, the grid's n, n^2, its first plane
};
// kind: 0 csr (64-bit row pointers), 1 ell (column-major, `width`), 2 matrix-free poisson7.
// y = A x, x haloed (row i's own entry at i + plane); with `sum`, adds (x, y).
cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const double* val, int width,
                        const double* x, double* y, double* sum, cudaStream_t stream);
cudaError_t launch_dot(const double* a, const double* b, long long n, double* sum, cudaStream_t stream);
cudaError_t launch_axpy(double alpha, const double* x, double* y, long long n, cudaStream_t stream);
cudaError_t launch_xpay(const double* x, double beta, double* y, long long n, cudaStream_t stream);
cudaError_t launch_scale(const double* inv_diag, const double* r, double* z, long long n, cudaStream_t stream);
// x += αp; r −= αq; z = D^-1 r (inv_diag set, else z is r); adds (r, z).
cudaError_t launch_fused_update(double alpha, const double* p, const double* q, double* x, double* r,
                                const double* inv_diag, double* z, long long n, double* sum, cudaStream_t stream);

}  // namespace fftune::krylov
