// The krylov family's CUDA vector operations (cuda_launch.hpp): dots, norms,
// the BLAS-1 updates, Jacobi and the fused updates, grid-stride loops; the
// reductions through cuda_reduce.cuh.
#include "families/krylov/cuda_launch.hpp"
#include "families/krylov/cuda_reduce.cuh"

namespace fftune::krylov {
namespace {

template <class T>
__global__ void dot_kernel(const T* a, const T* b, long long n, Reduce red) {
    T d = zero<T>();
    FOR_EACH_ROW(i, n) d += a[i] * b[i];
    block_add(d, red);
}
template <class T>
__global__ void norm2_kernel(const T* a, long long n, Reduce red) {
    double d = 0;
    FOR_EACH_ROW(i, n) d += norm(a[i]);
    block_add(d, red);
}
template <class T>
__global__ void conjugate_kernel(const T* x, T* y, long long n) {
    FOR_EACH_ROW(i, n) y[i] = conj(x[i]);
}
template <class T>
__global__ void axpy_kernel(T alpha, const T* x, T* y, long long n) {
    FOR_EACH_ROW(i, n) y[i] += alpha * x[i];
}
template <class T>
__global__ void xpay_kernel(const T* x, T beta, T* y, long long n) {
    FOR_EACH_ROW(i, n) y[i] = x[i] + beta * y[i];
}
template <class T>
__global__ void scal_kernel(T a, T* y, long long n) {
    FOR_EACH_ROW(i, n) y[i] = a * y[i];
}
template <class T>
__global__ void scale_kernel(const T* inv_diag, const T* r, T* z, long long n) {
    FOR_EACH_ROW(i, n) z[i] = inv_diag[i] * r[i];
}
template <class T>
__global__ void fused_update_kernel(T alpha, const T* p, const T* q, T* x, T* r, const T* inv_diag, T* z, long long n,
                                    Reduce red) {
    T d = zero<T>();
    FOR_EACH_ROW(i, n) {
        x[i] += alpha * p[i];
        const T ri = r[i] - alpha * q[i];
        r[i] = ri;
        T zi = ri;
        if (inv_diag) z[i] = zi = inv_diag[i] * ri;
        d += ri * zi;
    }
    block_add(d, red);
}
template <class T>
__global__ void update_residual_kernel(T alpha, const T* q, T* r, const T* inv_diag, long long n, Reduce red) {
    T d = zero<T>();
    FOR_EACH_ROW(i, n) {
        const T ri = r[i] - alpha * q[i];
        r[i] = ri;
        d += ri * (inv_diag ? inv_diag[i] * ri : ri);
    }
    block_add(d, red);
}

}  // namespace

// One launcher per operation and scalar type (double; double2 = complex).
#define KRYLOV_VECTOR_LAUNCHERS(T)                                                                                   \
    cudaError_t launch_dot(const T* a, const T* b, long long n, KrylovSum sum, cudaStream_t stream) {                \
        const unsigned nb = dot_blocks_for(n);                                                                       \
        return reduced<parts<T>>(sum, nb, stream, [&](Reduce r) { dot_kernel<<<nb, threads, 0, stream>>>(a, b, n, r); }); \
    }                                                                                                                \
    cudaError_t launch_norm2(const T* a, long long n, KrylovSum sum, cudaStream_t stream) {                          \
        const unsigned nb = dot_blocks_for(n);                                                                       \
        return reduced<1>(sum, nb, stream, [&](Reduce r) { norm2_kernel<<<nb, threads, 0, stream>>>(a, n, r); });   \
    }                                                                                                                \
    cudaError_t launch_conjugate(const T* x, T* y, long long n, cudaStream_t stream) {                               \
        conjugate_kernel<<<blocks_for(n), threads, 0, stream>>>(x, y, n);                                            \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_axpy(T alpha, const T* x, T* y, long long n, cudaStream_t stream) {                           \
        axpy_kernel<<<blocks_for(n), threads, 0, stream>>>(alpha, x, y, n);                                          \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_xpay(const T* x, T beta, T* y, long long n, cudaStream_t stream) {                            \
        xpay_kernel<<<blocks_for(n), threads, 0, stream>>>(x, beta, y, n);                                           \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_scal(T a, T* y, long long n, cudaStream_t stream) {                                           \
        scal_kernel<<<blocks_for(n), threads, 0, stream>>>(a, y, n);                                                 \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_scale(const T* inv_diag, const T* r, T* z, long long n, cudaStream_t stream) {                \
        scale_kernel<<<blocks_for(n), threads, 0, stream>>>(inv_diag, r, z, n);                                      \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_fused_update(T alpha, const T* p, const T* q, T* x, T* r, const T* inv_diag, T* z,            \
                                    long long n, KrylovSum sum, cudaStream_t stream) {                               \
        const unsigned nb = blocks_for(n);                                                                           \
        return reduced<parts<T>>(sum, nb, stream, [&](Reduce red) {                                                  \
            fused_update_kernel<<<nb, threads, 0, stream>>>(alpha, p, q, x, r, inv_diag, z, n, red);                 \
        });                                                                                                          \
    }                                                                                                                \
    cudaError_t launch_update_residual(T alpha, const T* q, T* r, const T* inv_diag, long long n, KrylovSum sum,     \
                                       cudaStream_t stream) {                                                        \
        const unsigned nb = blocks_for(n);                                                                           \
        return reduced<parts<T>>(sum, nb, stream, [&](Reduce red) {                                                  \
            update_residual_kernel<<<nb, threads, 0, stream>>>(alpha, q, r, inv_diag, n, red);                       \
        });                                                                                                          \
    }

KRYLOV_VECTOR_LAUNCHERS(double)
KRYLOV_VECTOR_LAUNCHERS(double2)

}  // namespace fftune::krylov
