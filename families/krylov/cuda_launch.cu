// The krylov family's CUDA kernels (cuda_launch.hpp). One thread per row for
// the SpMVs (ELL column-major: neighbouring threads read neighbouring
// entries), grid-stride loops; a reduction sums each block with warp shuffles
// and adds it to one device double (atomicAdd; complex sums: two).
#include <algorithm>
#include <type_traits>

#include "families/krylov/cuda_launch.hpp"

namespace fftune::krylov {
namespace {

constexpr int threads = 256;
unsigned blocks_for(long long n) { return static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 1 << 20)); }
// A plain dot: few enough blocks that their atomicAdds on one address do not
// queue (on the H100 at 256^3: two dots 280 -> 178 us with 1024 blocks instead of
// 65536). Not for the SpMV and the update that reduce on the side: capped, their
// fused passes were slower (ELL SpMV 590 -> 722 us, update 432 -> 448 us).
unsigned dot_blocks_for(long long n) { return std::min(blocks_for(n), 1024u); }

// Adds this block's `v` (one per thread) to *sum.
__device__ void block_sum(double v, double* sum) {
    __shared__ double part[threads / 32];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x + 31) / 32 ? part[threadIdx.x] : 0.0;  // blocks of up to `threads`
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) atomicAdd(sum, v);
    }
}


// Complex scalars as double2 (std::complex<double>'s layout): the arithmetic
// the kernels below use, for both scalar types.
__device__ __forceinline__ double2 operator+(double2 a, double2 b) { return {a.x + b.x, a.y + b.y}; }
__device__ __forceinline__ double2 operator-(double2 a, double2 b) { return {a.x - b.x, a.y - b.y}; }
__device__ __forceinline__ double2 operator*(double2 a, double2 b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
__device__ __forceinline__ double2& operator+=(double2& a, double2 b) { return a = a + b; }
template <class T>
__device__ __forceinline__ T zero() { return T{}; }
__device__ __forceinline__ double norm(double a) { return a * a; }
__device__ __forceinline__ double norm(double2 a) { return a.x * a.x + a.y * a.y; }
__device__ __forceinline__ double conj(double a) { return a; }
__device__ __forceinline__ double2 conj(double2 a) { return {a.x, -a.y}; }
// Adds this block's v to sum[0] (complex: the imaginary part to sum[1]).
__device__ void block_add(double v, double* sum) { block_sum(v, sum); }
__device__ void block_add(double2 v, double* sum) {
    block_sum(v.x, sum);
    __syncthreads();  // block_sum's shared partials are reused
    block_sum(v.y, sum + 1);
}

#define FOR_EACH_ROW(i, n)                                                               \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// Row `own - plane` of poisson7 at grid point (xi, yi, zi): 6 u − its neighbours in the domain.
__device__ __forceinline__ double poisson7_row(const KrylovRows& g, const double* x, long long own, long long xi,
                                               long long yi, long long zi) {
    double v = 6 * x[own];
    if (xi > 0) v -= x[own - 1];
    if (xi + 1 < g.n) v -= x[own + 1];
    if (yi > 0) v -= x[own - g.n];
    if (yi + 1 < g.n) v -= x[own + g.n];
    if (zi > 0) v -= x[own - g.plane];
    if (zi + 1 < g.n) v -= x[own + g.plane];
    return v;
}

// y = A x over the rows (x haloed: row i's own entry at i + plane); with `sum`, adds (x, y).
template <int F, class T>
__global__ void spmv_kernel(KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width,
                            const T* x, T* y, double* sum) {
    T d = zero<T>();
    FOR_EACH_ROW(i, g.rows) {
        T v = zero<T>();
        if constexpr (F == 0) {
            for (long long j = row_ptr[i]; j < row_ptr[i + 1]; ++j) v += val[j] * x[col[j]];
        } else if constexpr (F == 1) {
            for (int k = 0; k < width; ++k) v += val[k * g.rows + i] * x[col[k * g.rows + i]];
        } else {
            // Row i's grid position; 32-bit division where the rows allow (64-bit division dominated the kernel).
            long long xi, yi, zi;
            if (g.rows <= 0xffffffffll) {
                const unsigned ii = unsigned(i), nn = unsigned(g.n), t = ii / nn;
                xi = ii - t * nn, yi = t % nn, zi = g.z0 + t / nn;
            } else {
                xi = i % g.n, yi = (i / g.n) % g.n, zi = g.z0 + i / g.plane;
            }
            v = poisson7_row(g, x, i + g.plane, xi, yi, zi);
        }
        y[i] = v;
        if (sum) d += x[i + g.plane] * v;
    }
    if (sum) block_add(d, sum);
}

// Matrix-free poisson7 with the grid position from the launch (x along the
// block's threads, `rows_per_block` y-rows per block by blockIdx.y, the rank's
// plane by blockIdx.z): no division per row (spmv_kernel<2> divides the row
// number: 196 us at 256^3 on an H100, 1.3 TB/s, against a 92 us floor), and
// few blocks for the fused dot's atomicAdds (one block per row, 65536 at
// 256^3, took 148 us fused against 85 unfused on an H200).
constexpr int rows_per_block = 16;
__global__ void stencil7_kernel(KrylovRows g, const double* x, double* y, double* sum) {
    const long long xi = blockIdx.x * (long long)blockDim.x + threadIdx.x, zl = blockIdx.z, zi = g.z0 + zl;
    double d = 0;
    if (xi < g.n) {
        const long long y0 = blockIdx.y * (long long)rows_per_block, y1 = y0 + rows_per_block < g.n ? y0 + rows_per_block : g.n;
        for (long long yi = y0; yi < y1; ++yi) {
            const long long i = (zl * g.n + yi) * g.n + xi, own = i + g.plane;
            const double v = poisson7_row(g, x, own, xi, yi, zi);
            y[i] = v;
            d += x[own] * v;
        }
    }
    if (sum) block_add(d, sum);
}

template <class T>
__global__ void dot_kernel(const T* a, const T* b, long long n, double* sum) {
    T d = zero<T>();
    FOR_EACH_ROW(i, n) d += a[i] * b[i];
    block_add(d, sum);
}
template <class T>
__global__ void norm2_kernel(const T* a, long long n, double* sum) {
    double d = 0;
    FOR_EACH_ROW(i, n) d += norm(a[i]);
    block_sum(d, sum);
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
                                    double* sum) {
    T d = zero<T>();
    FOR_EACH_ROW(i, n) {
        x[i] += alpha * p[i];
        const T ri = r[i] - alpha * q[i];
        r[i] = ri;
        T zi = ri;
        if (inv_diag) z[i] = zi = inv_diag[i] * ri;
        d += ri * zi;
    }
    block_add(d, sum);
}

template <class T>
cudaError_t spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width, const T* x,
                 T* y, double* sum, cudaStream_t stream) {
    const unsigned b = blocks_for(g.rows);
    if (kind == 0) spmv_kernel<0><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
    else if (kind == 1) spmv_kernel<1><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
    else if constexpr (std::is_same_v<T, double>) {
        const long long planes = g.plane > 0 ? g.rows / g.plane : 0;
        if (g.rows > 0 && g.n <= 65535 && planes <= 65535) {  // the launch's y and z extents
            const unsigned tx = static_cast<unsigned>(std::min<long long>(threads, (g.n + 31) / 32 * 32));
            const dim3 grid(static_cast<unsigned>((g.n + tx - 1) / tx),
                            static_cast<unsigned>((g.n + rows_per_block - 1) / rows_per_block), static_cast<unsigned>(planes));
            stencil7_kernel<<<grid, tx, 0, stream>>>(g, x, y, sum);
        } else if (g.rows > 0) {
            spmv_kernel<2><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
        }
    } else {
        return cudaErrorInvalidValue;  // matrix-free: poisson7 (real) only
    }
    return cudaGetLastError();
}
template <class T>
cudaError_t fused_update(T alpha, const T* p, const T* q, T* x, T* r, const T* inv_diag, T* z, long long n, double* sum,
                         cudaStream_t stream) {
    fused_update_kernel<<<blocks_for(n), threads, 0, stream>>>(alpha, p, q, x, r, inv_diag, z, n, sum);
    return cudaGetLastError();
}

}  // namespace

// One launcher per operation and scalar type (double; double2 = complex).
#define KRYLOV_LAUNCHERS(T)                                                                                          \
    cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width, \
                            const T* x, T* y, double* sum, cudaStream_t stream) {                                    \
        return spmv<T>(kind, g, row_ptr, col, val, width, x, y, sum, stream);                                        \
    }                                                                                                                \
    cudaError_t launch_dot(const T* a, const T* b, long long n, double* sum, cudaStream_t stream) {                  \
        dot_kernel<<<dot_blocks_for(n), threads, 0, stream>>>(a, b, n, sum);                                         \
        return cudaGetLastError();                                                                                   \
    }                                                                                                                \
    cudaError_t launch_norm2(const T* a, long long n, double* sum, cudaStream_t stream) {                            \
        norm2_kernel<<<dot_blocks_for(n), threads, 0, stream>>>(a, n, sum);                                          \
        return cudaGetLastError();                                                                                   \
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
                                    long long n, double* sum, cudaStream_t stream) {                                 \
        return fused_update<T>(alpha, p, q, x, r, inv_diag, z, n, sum, stream);                                      \
    }

KRYLOV_LAUNCHERS(double)
KRYLOV_LAUNCHERS(double2)

}  // namespace fftune::krylov
