// The fused x-stage of zero_skipping_fused on the GPU (column_convolution.hpp):
// a block loads `per_block` columns' kept rows into shared memory (the rest
// zero), transforms them along x by a mixed-radix Stockham FFT (two shared
// arrays, one pass from one to the other), multiplies by the kernel as the
// last forward pass writes, transforms back and stores the kept rows. With
// the upper half zero (the free axis) the first forward pass is the load and
// the last inverse pass the store. Global memory sees one
// read of the kept input, one write of the kept output and one read of K.
// Shared layout: element (x, c) at row x, column c of the block (padded: at()),
// so a warp's loads are runs of per_block consecutive columns.
#include "families/poisson/column_convolution_launch.hpp"

namespace fftune::poisson {
namespace {

template <class C>
struct RealOf;
template <>
struct RealOf<float2> {
    using type = float;
};
template <>
struct RealOf<double2> {
    using type = double;
};

template <class C>
__device__ __forceinline__ C add(C a, C b) { return {a.x + b.x, a.y + b.y}; }
template <class C>
__device__ __forceinline__ C sub(C a, C b) { return {a.x - b.x, a.y - b.y}; }
template <class C>
__device__ __forceinline__ C mul(C a, C b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
// a · (s·i), s = ±1: the sign of the transform.
template <class C>
__device__ __forceinline__ C mul_si(C a, int s) { return s > 0 ? C{-a.y, a.x} : C{a.y, -a.x}; }
template <class C, class R>
__device__ __forceinline__ C scale(C a, R f) { return {a.x * f, a.y * f}; }

// In-register DFTs, X[k] = Σ_r v[r] e^{s·2πi rk/R}.
template <int R, class C>
struct Dft;
template <class C>
struct Dft<2, C> {
    __device__ static void run(C* v, int) {
        const C a = v[0];
        v[0] = add(a, v[1]), v[1] = sub(a, v[1]);
    }
};
template <class C>
struct Dft<4, C> {
    __device__ static void run(C* v, int s) {
        const C a0 = add(v[0], v[2]), a1 = sub(v[0], v[2]), a2 = add(v[1], v[3]), a3 = mul_si(sub(v[1], v[3]), s);
        v[0] = add(a0, a2), v[2] = sub(a0, a2), v[1] = add(a1, a3), v[3] = sub(a1, a3);
    }
};
template <class C>
struct Dft<8, C> {  // two DFT4 of the even and odd samples, X[k] / X[k+4] = E[k] ± w8^k O[k]
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        C e[4] = {v[0], v[2], v[4], v[6]}, o[4] = {v[1], v[3], v[5], v[7]};
        Dft<4, C>::run(e, s);
        Dft<4, C>::run(o, s);
        const R h = R(0.70710678118654752440);
        o[1] = mul(o[1], C{h, s * h});
        o[2] = mul_si(o[2], s);
        o[3] = mul(o[3], C{-h, s * h});
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = add(e[k], o[k]), v[k + 4] = sub(e[k], o[k]);
    }
};
template <class C>
struct Dft<3, C> {
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R c = R(-0.5), d = R(0.86602540378443864676);  // cos, sin of 2π/3
        const C t = add(v[1], v[2]), m = add(v[0], scale(t, c)), q = mul_si(scale(sub(v[1], v[2]), d), s);
        v[0] = add(v[0], t), v[1] = add(m, q), v[2] = sub(m, q);
    }
};
template <class C>
struct Dft<5, C> {  // direct: cos and sin of 2πm/5
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R cs[5] = {R(1), R(0.30901699437494742410), R(-0.80901699437494742410), R(-0.80901699437494742410),
                         R(0.30901699437494742410)};
        const R sn[5] = {R(0), R(0.95105651629515357212), R(0.58778525229247312917), R(-0.58778525229247312917),
                         R(-0.95105651629515357212)};
        C out[5];
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            C acc = v[0];
#pragma unroll
            for (int r = 1; r < 5; ++r) acc = add(acc, mul(v[r], C{cs[(r * k) % 5], s * sn[(r * k) % 5]}));
            out[k] = acc;
        }
#pragma unroll
        for (int k = 0; k < 5; ++k) v[k] = out[k];
    }
};

// Shared layout: row x of the block's columns at (x + x >> pad_shift) ·
// per_block: with a power-of-two length the Stockham writes stride R·per_block
// and land in few banks; a padding row every 8 spreads them (pad_shift 31:
// none).
__device__ __forceinline__ int at(int x, int c, const ColumnLaunch& l) {
    return (x + (x >> l.pad_shift)) * l.per_block + c;
}

// One Stockham pass of radix R, from `src` to `dst` in shared memory:
// butterfly j reads x[j + r·L/R] (twiddled by w^r, w = e^{s·2πi k·step/L},
// k = j mod Ns, step = L/(Ns·R): one table read, the powers by products)
// and writes its outputs to q = (j/Ns)·Ns·R + k + r·Ns, times K[q, c] when
// `kernel` (the block's K, q·width + c) is given: the last forward pass,
// where q is the frequency. One butterfly in registers at a time.
template <int R, class C>
__device__ __forceinline__ void pass(const C* src, C* dst, const ColumnLaunch& l, int ns, int sign,
                                     const C* __restrict__ tw, const typename RealOf<C>::type* __restrict__ kernel,
                                     int width) {
    const int per_block = l.per_block, length = l.length;
    const int butterflies = (length / R) * per_block, stride = length / R, step = length / (ns * R);
    for (int b = threadIdx.x; b < butterflies; b += blockDim.x) {
        const int c = b & (per_block - 1), j = b >> l.per_block_log2, k = j % ns;
        C w1 = __ldg(&tw[k * step]);  // k = 0: exactly 1
        if (sign > 0) w1.y = -w1.y;
        C v[R], w = w1;
        v[0] = src[at(j, c, l)];
#pragma unroll
        for (int r = 1; r < R; ++r) {
            if (r > 1) w = mul(w, w1);
            v[r] = mul(src[at(j + r * stride, c, l)], w);
        }
        Dft<R, C>::run(v, sign);
        const int to = (j / ns) * ns * R + k;
        if (kernel && c < width) {
#pragma unroll
            for (int r = 0; r < R; ++r) v[r] = scale(v[r], kernel[(to + r * ns) * width + c]);
        }
#pragma unroll
        for (int r = 0; r < R; ++r) dst[at(to + r * ns, c, l)] = v[r];
    }
    __syncthreads();
}

// Passes first..last-1 of `radix`, ping-ponging between a and b from stride
// ns; returns where the result is. The last forward pass multiplies by K.
template <class C>
__device__ C* passes(C* a, C* b, const ColumnLaunch& l, const int* radix, int first, int last, int ns, int sign,
                     const C* tw, const typename RealOf<C>::type* kernel, int width) {
    for (int p = first; p < last; ++p) {
        const int r = radix[p];
        const auto* k = p == last - 1 ? kernel : nullptr;
        if (r == 8) pass<8>(a, b, l, ns, sign, tw, k, width);
        else if (r == 4) pass<4>(a, b, l, ns, sign, tw, k, width);
        else if (r == 2) pass<2>(a, b, l, ns, sign, tw, k, width);
        else if (r == 3) pass<3>(a, b, l, ns, sign, tw, k, width);
        else pass<5>(a, b, l, ns, sign, tw, k, width);
        ns *= r;
        C* t = a;
        a = b, b = t;
    }
    return a;
}

// With the upper half of the input zero (kept ≤ L/2), the forward transform
// starts with radix 2 (radix[0]) and the inverse ends with it (inverse[last]):
// the first pass is the load (both outputs of butterfly j are x[j]), the last
// inverse pass the store (only its outputs j < kept: x[j] + w^{-j} x[j + L/2]).
// K is block-major (arrange_kernel): the block's columns at col0·L, row q at
// q·width + c, width = the block's column count.
template <class C>
__global__ void __launch_bounds__(512, 2) column_convolution_kernel(const __grid_constant__ ColumnLaunch l,
                                                                    const C* __restrict__ in,
                                                                    const typename RealOf<C>::type* __restrict__ kernel,
                                                                    C* __restrict__ out, const C* __restrict__ tw) {
    extern __shared__ __align__(16) unsigned char raw[];
    const int pb = l.per_block, shift = l.per_block_log2, elements = l.length * pb;
    C* a = reinterpret_cast<C*>(raw);
    C* b = a + column_rows(l.length, l.pad_shift) * pb;
    const long long col0 = static_cast<long long>(blockIdx.x) * pb, n = l.columns;
    const int width = static_cast<int>(n - col0 < pb ? n - col0 : pb);
    const auto* k = kernel + col0 * l.length;
    const int half = l.length / 2;
    if (l.zero_half) {
        for (int e = threadIdx.x; e < half * pb; e += blockDim.x) {
            const int j = e >> shift, c = e & (pb - 1);
            const C x = j < l.kept && c < width ? in[j * n + col0 + c] : C{0, 0};
            a[at(2 * j, c, l)] = x, a[at(2 * j + 1, c, l)] = x;
        }
    } else {
        for (int e = threadIdx.x; e < elements; e += blockDim.x) {
            const int x = e >> shift, c = e & (pb - 1);
            a[at(x, c, l)] = x < l.kept && c < width ? in[x * n + col0 + c] : C{0, 0};
        }
    }
    __syncthreads();
    const int first = l.zero_half ? 1 : 0;
    C* s = passes(a, b, l, l.radix, first, l.passes, first ? 2 : 1, -1, tw, k, width);
    if (first == l.passes) {  // no pass after the load (L = 2): multiply here
        for (int e = threadIdx.x; e < elements; e += blockDim.x) {
            const int x = e >> shift, c = e & (pb - 1);
            if (c < width) s[at(x, c, l)] = scale(s[at(x, c, l)], k[x * width + c]);
        }
        __syncthreads();
    }
    const int inverse_passes = l.zero_half ? l.passes - 1 : l.passes;
    s = passes(s, s == a ? b : a, l, l.inverse_radix, 0, inverse_passes, 1, +1, tw,
               static_cast<const typename RealOf<C>::type*>(nullptr), width);
    if (l.zero_half) {
        for (int e = threadIdx.x; e < l.kept * pb; e += blockDim.x) {
            const int j = e >> shift, c = e & (pb - 1);
            if (c >= width) continue;
            C w = __ldg(&tw[j]);
            w.y = -w.y;
            out[j * n + col0 + c] = add(s[at(j, c, l)], mul(s[at(j + half, c, l)], w));
        }
    } else {
        for (int e = threadIdx.x; e < l.kept * pb; e += blockDim.x) {
            const int x = e >> shift, c = e & (pb - 1);
            if (c < width) out[x * n + col0 + c] = s[at(x, c, l)];
        }
    }
}

}  // namespace

long long column_shared_bytes(const ColumnLaunch& l) {
    return 2LL * l.per_block * column_rows(l.length, l.pad_shift) * (l.single ? sizeof(float2) : sizeof(double2));
}

cudaError_t column_convolution_configure(const ColumnLaunch& l) {
    const int bytes = static_cast<int>(column_shared_bytes(l));
    return l.single ? cudaFuncSetAttribute(column_convolution_kernel<float2>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
                    : cudaFuncSetAttribute(column_convolution_kernel<double2>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

cudaError_t launch_column_convolution(const ColumnLaunch& l, const void* in, const void* kernel, void* out,
                                      const void* twiddles, cudaStream_t stream) {
    if (l.columns <= 0) return cudaSuccess;
    const long long blocks = (l.columns + l.per_block - 1) / l.per_block;
    if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    const size_t shared = static_cast<size_t>(column_shared_bytes(l));
    if (l.single)
        column_convolution_kernel<float2><<<static_cast<unsigned>(blocks), l.threads, shared, stream>>>(
            l, static_cast<const float2*>(in), static_cast<const float*>(kernel), static_cast<float2*>(out),
            static_cast<const float2*>(twiddles));
    else
        column_convolution_kernel<double2><<<static_cast<unsigned>(blocks), l.threads, shared, stream>>>(
            l, static_cast<const double2*>(in), static_cast<const double*>(kernel), static_cast<double2*>(out),
            static_cast<const double2*>(twiddles));
    return cudaGetLastError();
}

}  // namespace fftune::poisson
