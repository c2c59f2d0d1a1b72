// The krylov family's CUDA kernels (cuda_launch.hpp). One thread per row for
// the SpMVs (ELL column-major: neighbouring threads read neighbouring
// entries), grid-stride loops; a reduction sums each block with warp shuffles
// and adds it to one device double (atomicAdd).
#include <algorithm>

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
        v = threadIdx.x < threads / 32 ? part[threadIdx.x] : 0.0;
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) atomicAdd(sum, v);
    }
}


// y = A x over the rows (x haloed: row i's own entry at i + plane); with `sum`, adds (x, y).
template <int F>
__global__ void spmv_kernel(KrylovRows g, const long long* row_ptr, const int* col, const double* val, int width,
                            const double* x, double* y, double* sum) {
    double d = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < g.rows;
         i += (long long)gridDim.x * blockDim.x) {
        double v = 0;
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
            const long long own = i + g.plane;
            v = 6 * x[own];
            if (xi > 0) v -= x[own - 1];
            if (xi + 1 < g.n) v -= x[own + 1];
            if (yi > 0) v -= x[own - g.n];
            if (yi + 1 < g.n) v -= x[own + g.n];
            if (zi > 0) v -= x[own - g.plane];
            if (zi + 1 < g.n) v -= x[own + g.plane];
        }
        y[i] = v;
        if (sum) d += x[i + g.plane] * v;
    }
    if (sum) block_sum(d, sum);
}

__global__ void dot_kernel(const double* a, const double* b, long long n, double* sum) {
    double d = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        d += a[i] * b[i];
    block_sum(d, sum);
}
__global__ void axpy_kernel(double alpha, const double* x, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] += alpha * x[i];
}
__global__ void xpay_kernel(const double* x, double beta, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i] + beta * y[i];
}
__global__ void scale_kernel(const double* inv_diag, const double* r, double* z, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        z[i] = inv_diag[i] * r[i];
}
__global__ void fused_update_kernel(double alpha, const double* p, const double* q, double* x, double* r,
                                    const double* inv_diag, double* z, long long n, double* sum) {
    double d = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        r[i] = ri;
        double zi = ri;
        if (inv_diag) z[i] = zi = inv_diag[i] * ri;
        d += ri * zi;
    }
    block_sum(d, sum);
}

}  // namespace

cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const double* val, int width,
                        const double* x, double* y, double* sum, cudaStream_t stream) {
    const unsigned b = blocks_for(g.rows);
    if (kind == 0) spmv_kernel<0><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
    else if (kind == 1) spmv_kernel<1><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
    else spmv_kernel<2><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, x, y, sum);
    return cudaGetLastError();
}
cudaError_t launch_dot(const double* a, const double* b, long long n, double* sum, cudaStream_t stream) {
    dot_kernel<<<dot_blocks_for(n), threads, 0, stream>>>(a, b, n, sum);
    return cudaGetLastError();
}
cudaError_t launch_axpy(double alpha, const double* x, double* y, long long n, cudaStream_t stream) {
    axpy_kernel<<<blocks_for(n), threads, 0, stream>>>(alpha, x, y, n);
    return cudaGetLastError();
}
cudaError_t launch_xpay(const double* x, double beta, double* y, long long n, cudaStream_t stream) {
    xpay_kernel<<<blocks_for(n), threads, 0, stream>>>(x, beta, y, n);
    return cudaGetLastError();
}
cudaError_t launch_scale(const double* inv_diag, const double* r, double* z, long long n, cudaStream_t stream) {
    scale_kernel<<<blocks_for(n), threads, 0, stream>>>(inv_diag, r, z, n);
    return cudaGetLastError();
}
cudaError_t launch_fused_update(double alpha, const double* p, const double* q, double* x, double* r,
                                const double* inv_diag, double* z, long long n, double* sum, cudaStream_t stream) {
    fused_update_kernel<<<blocks_for(n), threads, 0, stream>>>(alpha, p, q, x, r, inv_diag, z, n, sum);
    return cudaGetLastError();
}

}  // namespace fftune::krylov
