// Launchers of the krylov family's CUDA kernels (cuda_launch.cu), in plain
// C++17 types for the C++20 side (cuda_kernels.cpp). Every launch is on
// `stream`; a reduction adds its sum to the device double *sum.
#pragma once

#include <cuda_runtime.h>

namespace fftune::krylov {

struct KrylovRows {
    long long rows, n, plane, z0;  // a rank's rows, the grid's n, n^2, its first plane
};
// Each operation for T = double and T = double2 (std::complex<double>'s layout).
// A reduction adds its sum to sum[0] (complex: the imaginary part to sum[1]).
#define KRYLOV_LAUNCHER_DECLARATIONS(T)                                                                               \
    /* kind: 0 csr (64-bit row pointers), 1 ell (column-major, `width`), 2 matrix-free poisson7 (double only).        \
       y = A x, x haloed (row i's own entry at i + plane); with `sum`, adds (x, y) (unconjugated). */                 \
    cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width, \
                            const T* x, T* y, double* sum, cudaStream_t stream);                                     \
    cudaError_t launch_dot(const T* a, const T* b, long long n, double* sum, cudaStream_t stream); /* a^T b */        \
    cudaError_t launch_norm2(const T* a, long long n, double* sum, cudaStream_t stream);           /* ‖a‖², real */  \
    cudaError_t launch_conjugate(const T* x, T* y, long long n, cudaStream_t stream);                                \
    cudaError_t launch_axpy(T alpha, const T* x, T* y, long long n, cudaStream_t stream);                            \
    cudaError_t launch_xpay(const T* x, T beta, T* y, long long n, cudaStream_t stream);                             \
    cudaError_t launch_scal(T a, T* y, long long n, cudaStream_t stream);                                            \
    cudaError_t launch_scale(const T* inv_diag, const T* r, T* z, long long n, cudaStream_t stream);                 \
    /* x += αp; r −= αq; z = D^-1 r (inv_diag set, else z is r); adds (r, z). */                                      \
    cudaError_t launch_fused_update(T alpha, const T* p, const T* q, T* x, T* r, const T* inv_diag, T* z,            \
                                    long long n, double* sum, cudaStream_t stream);

KRYLOV_LAUNCHER_DECLARATIONS(double)
KRYLOV_LAUNCHER_DECLARATIONS(double2)
#undef KRYLOV_LAUNCHER_DECLARATIONS

}  // namespace fftune::krylov
