// What the krylov family's CUDA kernels share (cuda_launch.cu: the SpMVs;
// cuda_vector_launch.cu: the vector operations): launch sizes, the block
// reductions (warp shuffles, then an atomicAdd to one device double, complex
// sums two, or a slot per block that a second kernel sums: KrylovSum) and
// double2 arithmetic for complex scalars. For nvcc only.
#pragma once

#include <algorithm>
#include <type_traits>

#include "families/krylov/cuda_launch.hpp"

namespace fftune::krylov {
namespace {

constexpr int threads = 256;
inline unsigned blocks_for(long long n) { return static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 1 << 20)); }
// A plain dot: few enough blocks that their atomicAdds on one address do not
// queue (on the H100 at 256^3: two dots 280 -> 178 us with 1024 blocks instead of
// 65536). Not for the SpMV and the update that reduce on the side: capped, their
// fused passes were slower (ELL SpMV 590 -> 722 us, update 432 -> 448 us).
inline unsigned dot_blocks_for(long long n) { return std::min(blocks_for(n), 1024u); }
// Above this many blocks a reduction goes through per-block slots (KrylovSum).
constexpr long long atomic_blocks = 1024;

// A kernel's reduction target: each block adds to `sum`, or stores to its slot of `partials`.
struct Reduce {
    double* sum;
    double* partials;
};

inline __device__ long long block_index() {
    return (static_cast<long long>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}
// C sums per thread over the block in one pass through shared memory; each
// block total stored to slots[c], or added to sum[c].
template <int C>
__device__ void block_sum_n(double (&v)[C], double* sum, double* slots) {
    __shared__ double part[C][threads / 32];
#pragma unroll
    for (int c = 0; c < C; ++c)
        for (int o = 16; o > 0; o /= 2) v[c] += __shfl_down_sync(0xffffffffu, v[c], o);
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int c = 0; c < C; ++c) part[c][threadIdx.x / 32] = v[c];
    __syncthreads();
    if (threadIdx.x < 32) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            double w = threadIdx.x < (blockDim.x + 31) / 32 ? part[c][threadIdx.x] : 0.0;
            for (int o = 16; o > 0; o /= 2) w += __shfl_down_sync(0xffffffffu, w, o);
            if (threadIdx.x == 0) {
                if (slots) slots[c] = w;
                else atomicAdd(sum + c, w);
            }
        }
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
__device__ __forceinline__ double2 operator/(double2 a, double2 b) {
    const double d = b.x * b.x + b.y * b.y;
    return {(a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d};
}
__device__ __forceinline__ double2 operator*(double a, double2 b) { return {a * b.x, a * b.y}; }
__device__ __forceinline__ double real(double a) { return a; }
__device__ __forceinline__ double real(double2 a) { return a.x; }
__device__ __forceinline__ bool finite(double a) { return isfinite(a); }
__device__ __forceinline__ bool finite(double2 a) { return isfinite(a.x) && isfinite(a.y); }
__device__ __forceinline__ bool is_zero(double a) { return a == 0; }
__device__ __forceinline__ bool is_zero(double2 a) { return a.x == 0 && a.y == 0; }
// Doubles per scalar: the slots a block's sum takes.
template <class T>
constexpr int parts = sizeof(T) / sizeof(double);
// Adds this block's v to sum[0] (complex: the imaginary part to sum[1]).
inline __device__ void block_add(double v, Reduce r) {
    double a[1] = {v};
    block_sum_n<1>(a, r.sum, r.partials ? r.partials + block_index() : nullptr);
}
inline __device__ void block_add(double2 v, Reduce r) {
    double a[2] = {v.x, v.y};
    block_sum_n<2>(a, r.sum, r.partials ? r.partials + 2 * block_index() : nullptr);
}

#define FOR_EACH_ROW(i, n)                                                               \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// The second level: sum[c] += Σ_b partials[b C + c] over `blocks` slots.
template <int C>
__global__ void finish_kernel(const double* partials, long long blocks, double* sum) {
    double v[C] = {};
    FOR_EACH_ROW(b, blocks)
    for (int c = 0; c < C; ++c) v[c] += partials[b * C + c];
    block_sum_n<C>(v, sum, nullptr);
}
// Launches `launch(target)` as `blocks` blocks that reduce C doubles each, then the second level if it took slots.
template <int C, class Launch>
cudaError_t reduced(KrylovSum s, long long blocks, cudaStream_t stream, Launch launch) {
    const bool slots = s.sum && s.partials && blocks > atomic_blocks && blocks * C <= s.capacity;
    const Reduce r{s.sum, slots ? s.partials : nullptr};
    launch(r);
    if (slots) {
        const unsigned b = static_cast<unsigned>(std::min<long long>(64, (blocks + threads - 1) / threads));
        finish_kernel<C><<<b, threads, 0, stream>>>(r.partials, blocks, r.sum);
    }
    return cudaGetLastError();
}

}  // namespace
}  // namespace fftune::krylov
