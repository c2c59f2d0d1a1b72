// Launchers of the krylov family's CUDA kernels (cuda_launch.cu), in plain
// C++17 types for the C++20 side (cuda_kernels.cpp). Every launch is on
// `stream`; a reduction adds its sum to the device doubles of a KrylovSum.
#pragma once

#include <cuda_runtime.h>

namespace fftune::krylov {

struct KrylovRows {
    long long rows, nx, ny, nz, plane, z0;  // a rank's rows, the grid's extents (x fastest), nx ny, its first plane
    int stencil_rows = 0;          // matrix-free: y-rows per thread (1, 2, 4 or 8; 0: the default)
    int sparse_rows = 0;           // csr, ell: rows per thread, blockDim apart (1, 2, 4 or 8; 0: the default)
};
// Where a reduction goes: sum[0] (complex: the imaginary part to sum[1]); no
// sum: none. With `partials` (room for `capacity` doubles) a launch of many
// blocks writes each block's part there and a second kernel adds them up:
// atomicAdds of every block on one address queue (65536 blocks: ~60 us).
struct KrylovSum {
    double* sum = nullptr;
    double* partials = nullptr;
    long long capacity = 0;
};
// CG with its direction update folded into the SpMV (fusion "folded"), over
// haloed vectors r, inv_diag (null: none), p, p_next: every haloed row gets
// p_next = D^-1 r + beta p; own row i (haloed i + plane): x[i] += alpha p,
// q[i] = (A p_next)[i], and the sum adds (p_next, q).
template <class T>
struct KrylovFolded {
    T alpha, beta;
    const T *r, *inv_diag, *p;
    T *p_next, *x, *q;
};
// The one-pass iteration's scalars in device memory (OnePassScalars's layout).
template <class T>
struct KrylovScalars {
    T alpha, beta, alpha2, inv_beta2;
    double rr, broken;
};
// Where |β| is below this, x's update reads p2 instead of reconstructing it (OnePassScalars).
constexpr double krylov_reconstruct_beta = 1e-3;
// CG in one pass (fusion "one_pass"), with alpha, beta, alpha2 read from
// `sc`, over haloed vectors r, q, p, inv_diag (null: none), p2 and r_next,
// q_next, p_next: every haloed row gets r_next = r - alpha q and
// p_next = D^-1 r_next + beta p; own row i (haloed h = i + plane):
// q_next[h] = (A p_next)[h] and, unless x is null, x[i] += alpha p[h]
// (+ alpha2 p_older unless p2 is null: p_older = (p − D^-1 r)[h] inv_beta2,
// or p2[h] where inv_beta2 is 0). The sum gets,
// as T's doubles in turn, (p_next, q_next), (r_next, z), (q_next, z),
// (q_next, D^-1 q_next) with z = D^-1 r_next, and then, unless T is real and
// inv_diag null (where they repeat the second to fourth), ‖r_next‖²,
// r_next^H q_next and ‖q_next‖² (one double each for the norms).
template <class T>
struct KrylovOnePass {
    const KrylovScalars<T>* sc;
    const T *r, *q, *p, *inv_diag;
    T *r_next, *q_next, *p_next, *x;
    const T* p2;
};
// Each operation for T = double and T = double2 (std::complex<double>'s layout).
#define KRYLOV_LAUNCHER_DECLARATIONS(T)                                                                               \
    /* kind: 0 csr (64-bit row pointers), 1 ell (column-major, `width`), 2 matrix-free poisson7 (double only).        \
       y = A x, x haloed (row i's own entry at i + plane); with a sum, adds (x, y) (unconjugated). */                 \
    cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width, \
                            const T* x, T* y, KrylovSum sum, cudaStream_t stream);                                   \
    cudaError_t launch_spmv_folded(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val,    \
                                   int width, KrylovFolded<T> f, KrylovSum sum, cudaStream_t stream);                 \
    cudaError_t launch_spmv_one_pass(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val,  \
                                     int width, KrylovOnePass<T> f, KrylovSum sum, cudaStream_t stream);              \
    /* One thread: sc's scalars from the summed sums of the pass (OnePassScalars, kernels.hpp). */                  \
    cudaError_t launch_one_pass_scalars(const double* sums, bool norms, int pass, KrylovScalars<T>* sc,              \
                                        cudaStream_t stream);                                                         \
    cudaError_t launch_dot(const T* a, const T* b, long long n, KrylovSum sum, cudaStream_t stream); /* a^T b */      \
    cudaError_t launch_norm2(const T* a, long long n, KrylovSum sum, cudaStream_t stream);           /* ‖a‖², real */ \
    cudaError_t launch_conjugate(const T* x, T* y, long long n, cudaStream_t stream);                                \
    cudaError_t launch_axpy(T alpha, const T* x, T* y, long long n, cudaStream_t stream);                            \
    cudaError_t launch_xpay(const T* x, T beta, T* y, long long n, cudaStream_t stream);                             \
    cudaError_t launch_scal(T a, T* y, long long n, cudaStream_t stream);                                            \
    cudaError_t launch_scale(const T* inv_diag, const T* r, T* z, long long n, cudaStream_t stream);                 \
    /* x += αp; r −= αq; z = D^-1 r (inv_diag set, else z is r); adds (r, z). */                                      \
    cudaError_t launch_fused_update(T alpha, const T* p, const T* q, T* x, T* r, const T* inv_diag, T* z,            \
                                    long long n, KrylovSum sum, cudaStream_t stream);                                \
    /* r −= αq; adds (r, D^-1 r) (inv_diag null: (r, r)). */                                                          \
    cudaError_t launch_update_residual(T alpha, const T* q, T* r, const T* inv_diag, long long n, KrylovSum sum,     \
                                       cudaStream_t stream);

KRYLOV_LAUNCHER_DECLARATIONS(double)
KRYLOV_LAUNCHER_DECLARATIONS(double2)
#undef KRYLOV_LAUNCHER_DECLARATIONS

}  // namespace fftune::krylov
