// The fused x-stage of zero_skipping_fused on the GPU (column_convolution.hpp):
// a block transforms `per_block` columns along x by a mixed-radix Stockham FFT
// (radices 16, 8, 4, 2, 3, 5 and 6, 9, 10, 12; two shared arrays, one pass from one to the
// other), multiplies by the kernel and transforms back. Global memory sees one
// read of the kept input, one write of the kept output and one read of K:
// - the first forward pass reads its butterflies from global memory (rows from
//   `kept` on are zero and not read);
// - the last forward pass, the multiply and the first inverse pass run on one
//   butterfly in registers: the last Stockham pass reads and writes the same
//   rows j + r·L/R, which are the first inverse pass's inputs when its radix is
//   the same (the inverse radices are the forward ones reversed);
// - the last inverse pass writes its rows < written (= kept) to global memory.
// At L = 1024 that is 8 sweeps of the shared arrays and 4 barriers, where a
// load, a Stockham pass per radix and a store took 14 and 8; index arithmetic
// by shifts and one multiply-high per butterfly (ncu on an H200: the earlier
// kernel issued 4.8 G instructions at 512^3 single, 63% of the issue slots).
// A transform alone (the y-passes, sign ±1) runs the same passes in one sign:
// the first from global memory (rows < kept), the last to global memory (rows
// < written).
// Shared layout: element (x, c) at row x, column c of the block (padded: at()),
// so a warp's accesses are runs of per_block consecutive columns.
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
struct Dft<16, C> {  // two DFT8 of the even and odd samples, X[k] / X[k+8] = E[k] ± w16^k O[k]
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        C e[8], o[8];
#pragma unroll
        for (int r = 0; r < 8; ++r) e[r] = v[2 * r], o[r] = v[2 * r + 1];
        Dft<8, C>::run(e, s);
        Dft<8, C>::run(o, s);
        const R c1 = R(0.92387953251128675613), s1 = R(0.38268343236508977173), h = R(0.70710678118654752440);
        o[1] = mul(o[1], C{c1, s * s1});
        o[2] = mul(o[2], C{h, s * h});
        o[3] = mul(o[3], C{s1, s * c1});
        o[4] = mul_si(o[4], s);
        o[5] = mul(o[5], C{-s1, s * c1});
        o[6] = mul(o[6], C{-h, s * h});
        o[7] = mul(o[7], C{-c1, s * s1});
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = add(e[k], o[k]), v[k + 8] = sub(e[k], o[k]);
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

// A composite radix R = A·B in registers (Cooley-Tukey): with n = B·a + b and
// k = k1 + A·k2, X[k] = Σ_b W_B^{b·k2} · W_R^{b·k1} · Σ_a v[B·a + b] W_A^{a·k1},
// W_R^m = cs[m] + s·i·sn[m] (cos and sin of 2πm/R).
template <int A, int B, class C>
__device__ __forceinline__ void dft_product(C* v, int s, const typename RealOf<C>::type* cs,
                                            const typename RealOf<C>::type* sn) {
    constexpr int R = A * B;
    C t[R];  // t[b·A + k1]
#pragma unroll
    for (int b = 0; b < B; ++b) {
        C u[A];
#pragma unroll
        for (int a = 0; a < A; ++a) u[a] = v[B * a + b];
        Dft<A, C>::run(u, s);
#pragma unroll
        for (int k = 0; k < A; ++k) {
            const int m = (b * k) % R;
            t[b * A + k] = m == 0 ? u[k] : mul(u[k], C{cs[m], s * sn[m]});
        }
    }
#pragma unroll
    for (int k = 0; k < A; ++k) {
        C u[B];
#pragma unroll
        for (int b = 0; b < B; ++b) u[b] = t[b * A + k];
        Dft<B, C>::run(u, s);
#pragma unroll
        for (int q = 0; q < B; ++q) v[k + A * q] = u[q];
    }
}
template <class C>
struct Dft<6, C> {  // 2 x 3
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R cs[6] = {R(1), R(0.5), R(-0.5), R(-1), R(-0.5), R(0.5)};
        const R sn[6] = {R(0), R(0.86602540378443859659), R(0.86602540378443870761), R(0), R(-0.86602540378443837454), R(-0.86602540378443859659)};
        dft_product<2, 3>(v, s, cs, sn);
    }
};
template <class C>
struct Dft<9, C> {  // 3 x 3
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R cs[9] = {R(1), R(0.76604444311897801345), R(0.17364817766693041445), R(-0.5), R(-0.93969262078590831688), R(-0.93969262078590842791), R(-0.5), R(0.17364817766692997036), R(0.76604444311897779141)};
        const R sn[9] = {R(0), R(0.64278760968653925190), R(0.98480775301220802032), R(0.86602540378443870761), R(0.34202014332566887944), R(-0.34202014332566865740), R(-0.86602540378443837454), R(-0.98480775301220813134), R(-0.64278760968653958496)};
        dft_product<3, 3>(v, s, cs, sn);
    }
};
template <class C>
struct Dft<10, C> {  // 2 x 5
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R cs[10] = {R(1), R(0.80901699437494745126), R(0.30901699437494745126), R(-0.30901699437494734024), R(-0.80901699437494734024), R(-1), R(-0.80901699437494756229), R(-0.30901699437494756229), R(0.30901699437494722922), R(0.80901699437494734024)};
        const R sn[10] = {R(0), R(0.58778525229247313710), R(0.95105651629515353118), R(0.95105651629515364220), R(0.58778525229247324813), R(0), R(-0.58778525229247302608), R(-0.95105651629515353118), R(-0.95105651629515364220), R(-0.58778525229247335915)};
        dft_product<2, 5>(v, s, cs, sn);
    }
};
template <class C>
struct Dft<12, C> {  // 4 x 3
    __device__ static void run(C* v, int s) {
        using R = typename RealOf<C>::type;
        const R cs[12] = {R(1), R(0.86602540378443870761), R(0.5), R(0), R(-0.5), R(-0.86602540378443870761), R(-1), R(-0.86602540378443881863), R(-0.5), R(0), R(0.5), R(0.86602540378443837454)};
        const R sn[12] = {R(0), R(0.5), R(0.86602540378443859659), R(1), R(0.86602540378443870761), R(0.5), R(0), R(-0.5), R(-0.86602540378443837454), R(-1), R(-0.86602540378443859659), R(-0.5)};
        dft_product<4, 3>(v, s, cs, sn);
    }
};

// Shared layout: row x of the block's columns at (x + x >> pad_shift) ·
// per_block: with a power-of-two length the Stockham writes stride R·per_block
// and land in few banks; a padding row every 8 spreads them (pad_shift 31:
// none).
__device__ __forceinline__ int at(int x, int c, const ColumnLaunch& l) {
    return ((x + (x >> l.pad_shift)) << l.per_block_log2) + c;
}

// Butterfly j of a Stockham pass of radix R and span ns (the product of the
// radices before it): k = j mod ns, inputs x[j + r·L/R] times w^{r·k·L/(ns·R)},
// outputs at (j − k)·R + k + r·ns. j / ns by a multiply-high with
// ⌈2^32/ns⌉: exact for j·ns < 2^32 (L ≤ 4096).
struct Span {
    int ns;
    unsigned magic;
    __device__ explicit Span(int n) : ns(n), magic(n == 1 ? 0u : 0xffffffffu / unsigned(n) + 1u) {}
    __device__ int quotient(int j) const { return ns == 1 ? j : int(__umulhi(unsigned(j), magic)); }
};

// v[r] = src[j + r·L/R] · w^r, w = tw[k·step] (conjugated when sign > 0;
// k = 0: exactly 1), the powers by products.
template <int R, class C>
__device__ __forceinline__ void load(const C* src, const ColumnLaunch& l, int j, int c, int k, int step, int sign,
                                     const C* __restrict__ tw, C* v) {
    const int stride = l.length / R;
    C w1 = __ldg(&tw[k * step]);
    if (sign > 0) w1.y = -w1.y;
    C w = w1;
    v[0] = src[at(j, c, l)];
#pragma unroll
    for (int r = 1; r < R; ++r) {
        if (r > 1) w = mul(w, w1);
        v[r] = mul(src[at(j + r * stride, c, l)], w);
    }
}
template <int R, class C>
__device__ __forceinline__ void store(C* dst, const ColumnLaunch& l, int base, int ns, int c, const C* v) {
#pragma unroll
    for (int r = 0; r < R; ++r) dst[at(base + r * ns, c, l)] = v[r];
}

// The first forward pass (ns = 1: no twiddle): butterfly j's inputs from
// global memory, rows from `kept` on zero (with the upper half zero and R even,
// inputs r ≥ R/2 are, unread).
template <int R, class C>
__device__ __forceinline__ void load_global(const C* __restrict__ in, long long n, long long col0, int width,
                                            const ColumnLaunch& l, int j, int c, C* v) {
    const int stride = l.length / R;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int x = j + r * stride;
        const bool zero = (R % 2 == 0 && l.zero_half && r >= R / 2) || x >= l.kept || c >= width;
        v[r] = zero ? C{0, 0} : in[x * n + col0 + c];
    }
}

// Everything a pass needs of the block.
template <class C>
struct Block {
    const ColumnLaunch& l;
    const C* __restrict__ in;
    C* __restrict__ out;
    const typename RealOf<C>::type* __restrict__ kernel;  // the block's K, q·width + c
    const C* __restrict__ tw;
    long long n, col0;
    int width;
    __device__ int butterflies(int r) const { return (l.length / r) << l.per_block_log2; }
};

// Pass 0 (ns = 1: no twiddle) from global memory into `dst`.
template <int R, class C>
__device__ void first_pass(const Block<C>& k, C* dst, int sign) {
    for (int b = threadIdx.x; b < k.butterflies(R); b += blockDim.x) {
        const int c = b & (k.l.per_block - 1), j = b >> k.l.per_block_log2;
        C v[R];
        load_global<R>(k.in, k.n, k.col0, k.width, k.l, j, c, v);
        Dft<R, C>::run(v, sign);
        store<R>(dst, k.l, j * R, 1, c, v);
    }
    __syncthreads();
}

// A pass from `src` to `dst` in shared memory.
template <int R, class C>
__device__ void middle_pass(const Block<C>& k, const C* src, C* dst, int ns, int sign) {
    const Span span(ns);
    const int step = k.l.length / (ns * R);
    for (int b = threadIdx.x; b < k.butterflies(R); b += blockDim.x) {
        const int c = b & (k.l.per_block - 1), j = b >> k.l.per_block_log2;
        const int d = span.quotient(j), kk = j - d * ns;
        C v[R];
        load<R>(src, k.l, j, c, kk, step, sign, k.tw, v);
        Dft<R, C>::run(v, sign);
        store<R>(dst, k.l, d * ns * R + kk, ns, c, v);
    }
    __syncthreads();
}

// The turn: the last forward pass (ns = L/R, so k = j and the outputs are rows
// j + r·L/R), × K, the first inverse pass (ns = 1: the same rows in, no
// twiddle, outputs j·R + r). Inputs from `src` (or from global memory when it
// is also the first pass: src null); outputs into `dst` (or, when it is also
// the last inverse pass, the rows < written into global memory: dst null).
template <int R, class C>
__device__ void turn(const Block<C>& k, const C* src, C* dst) {
    const int stride = k.l.length / R;
    for (int b = threadIdx.x; b < k.butterflies(R); b += blockDim.x) {
        const int c = b & (k.l.per_block - 1), j = b >> k.l.per_block_log2;
        C v[R];
        if (src) load<R>(src, k.l, j, c, j, 1, -1, k.tw, v);
        else load_global<R>(k.in, k.n, k.col0, k.width, k.l, j, c, v);
        Dft<R, C>::run(v, -1);
        if (c < k.width) {
#pragma unroll
            for (int r = 0; r < R; ++r) v[r] = scale(v[r], k.kernel[(j + r * stride) * k.width + c]);
        }
        Dft<R, C>::run(v, +1);
        if (dst) {
            store<R>(dst, k.l, j * R, 1, c, v);
        } else if (c < k.width) {  // one pass in all: R = L, j = 0
#pragma unroll
            for (int r = 0; r < R; ++r)
                if (r < k.l.written) k.out[r * k.n + k.col0 + c] = v[r];
        }
    }
    __syncthreads();
}

// The last pass (ns = L/R, k = j): rows j + r·L/R < written to global memory.
template <int R, class C>
__device__ void last_pass(const Block<C>& k, const C* src, int sign) {
    const int stride = k.l.length / R;
    for (int b = threadIdx.x; b < k.butterflies(R); b += blockDim.x) {
        const int c = b & (k.l.per_block - 1), j = b >> k.l.per_block_log2;
        C v[R];
        load<R>(src, k.l, j, c, j, 1, sign, k.tw, v);
        Dft<R, C>::run(v, sign);
        if (c >= k.width) continue;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int x = j + r * stride;
            if (x < k.l.written) k.out[x * k.n + k.col0 + c] = v[r];
        }
    }
}

// A transform of one pass (R = L): global -> registers -> global.
template <int R, class C>
__device__ void only_pass(const Block<C>& k, int sign) {
    for (int b = threadIdx.x; b < k.butterflies(R); b += blockDim.x) {
        const int c = b & (k.l.per_block - 1);
        C v[R];
        load_global<R>(k.in, k.n, k.col0, k.width, k.l, 0, c, v);
        Dft<R, C>::run(v, sign);
        if (c >= k.width) continue;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (r < k.l.written) k.out[r * k.n + k.col0 + c] = v[r];
    }
}

// Runtime radix -> the templated pass; radices 16, 12 and 10 in single
// precision only (in double their butterflies spill at 64 registers per
// thread; column_convolution_cuda.cpp: radices()).
#define FFTUNE_BY_RADIX(r, call)                          \
    switch (r) {                                          \
        case 16:                                          \
            if constexpr (sizeof(C) == 8) call(16);       \
            break;                                        \
        case 8: call(8); break;           \
        case 4: call(4); break;           \
        case 2: call(2); break;           \
        case 3: call(3); break;           \
        case 6: call(6); break;           \
        case 9: call(9); break;           \
        case 10: if constexpr (sizeof(C) == 8) call(10); break;         \
        case 12: if constexpr (sizeof(C) == 8) call(12); break;         \
        default: call(5); break;          \
    }

// Block b transforms columns col0 = b·per_block on (one group). K is
// block-major (arrange_kernel): the block's columns at col0·L, row q at
// q·width + c, width = the block's column count. Forward radices
// radix[0..P), inverse ones the same reversed (inverse_radix).
// A transform alone (sign ±1): a kernel of its own, so that the
// convolution's register allocation stays its own.
template <class C>
__global__ void __launch_bounds__(512, 2) column_transform_kernel(const __grid_constant__ ColumnLaunch l,
                                                                  const C* __restrict__ in, C* __restrict__ out,
                                                                  const C* __restrict__ tw) {
    extern __shared__ __align__(16) unsigned char raw[];
    C* a = reinterpret_cast<C*>(raw);
    C* b = a + (column_rows(l.length, l.pad_shift) << l.per_block_log2);
    const long long group = blockIdx.x / l.blocks_per_group, n = l.columns;
    const long long col0 = (blockIdx.x - group * l.blocks_per_group) * l.per_block;
    const int width = static_cast<int>(n - col0 < l.per_block ? n - col0 : l.per_block);
    const Block<C> k{l, in + group * l.in_group_stride, out + group * l.out_group_stride, nullptr, tw, n, col0, width};
    const int last = l.passes - 1;
    if (last == 0) {
#define FFTUNE_ONLY(R) only_pass<R>(k, l.sign)
        FFTUNE_BY_RADIX(l.radix[0], FFTUNE_ONLY)
        return;
    }
#define FFTUNE_FIRST_OF_TRANSFORM(R) first_pass<R>(k, a, l.sign)
    FFTUNE_BY_RADIX(l.radix[0], FFTUNE_FIRST_OF_TRANSFORM)
    int ns = l.radix[0];
    for (int p = 1; p < last; ++p) {
#define FFTUNE_MIDDLE_OF_TRANSFORM(R) middle_pass<R>(k, a, b, ns, l.sign)
        FFTUNE_BY_RADIX(l.radix[p], FFTUNE_MIDDLE_OF_TRANSFORM)
        ns *= l.radix[p];
        C* t = a;
        a = b, b = t;
    }
#define FFTUNE_LAST_OF_TRANSFORM(R) last_pass<R>(k, a, l.sign)
    FFTUNE_BY_RADIX(l.radix[last], FFTUNE_LAST_OF_TRANSFORM)
}

template <class C>
__global__ void __launch_bounds__(512, 2) column_convolution_kernel(const __grid_constant__ ColumnLaunch l,
                                                                    const C* __restrict__ in,
                                                                    const typename RealOf<C>::type* __restrict__ kernel,
                                                                    C* __restrict__ out, const C* __restrict__ tw) {
    extern __shared__ __align__(16) unsigned char raw[];
    C* a = reinterpret_cast<C*>(raw);
    C* b = a + (column_rows(l.length, l.pad_shift) << l.per_block_log2);
    const long long col0 = static_cast<long long>(blockIdx.x) * l.per_block, n = l.columns;  // one group
    const int width = static_cast<int>(n - col0 < l.per_block ? n - col0 : l.per_block);
    const Block<C> k{l, in, out, kernel + col0 * l.length, tw, n, col0, width};
    const int last = l.passes - 1;
    if (last == 0) {  // one radix: global -> registers -> global
#define FFTUNE_TURN_ONLY(R) turn<R>(k, static_cast<const C*>(nullptr), static_cast<C*>(nullptr))
        FFTUNE_BY_RADIX(l.radix[0], FFTUNE_TURN_ONLY)
        return;
    }
#define FFTUNE_FIRST(R) first_pass<R>(k, a, -1)
    FFTUNE_BY_RADIX(l.radix[0], FFTUNE_FIRST)
    int ns = l.radix[0];
    for (int p = 1; p < last; ++p) {
#define FFTUNE_FORWARD(R) middle_pass<R>(k, a, b, ns, -1)
        FFTUNE_BY_RADIX(l.radix[p], FFTUNE_FORWARD)
        ns *= l.radix[p];
        C* t = a;
        a = b, b = t;
    }
#define FFTUNE_TURN(R) turn<R>(k, a, b)
    FFTUNE_BY_RADIX(l.radix[last], FFTUNE_TURN)
    C* t = a;
    a = b, b = t;
    ns = l.inverse_radix[0];
    for (int p = 1; p < last; ++p) {
#define FFTUNE_INVERSE(R) middle_pass<R>(k, a, b, ns, +1)
        FFTUNE_BY_RADIX(l.inverse_radix[p], FFTUNE_INVERSE)
        ns *= l.inverse_radix[p];
        t = a;
        a = b, b = t;
    }
#define FFTUNE_LAST(R) last_pass<R>(k, a, +1)
    FFTUNE_BY_RADIX(l.inverse_radix[last], FFTUNE_LAST)
}

}  // namespace

long long column_shared_bytes(const ColumnLaunch& l) {
    return 2LL * l.per_block * column_rows(l.length, l.pad_shift) * (l.single ? sizeof(float2) : sizeof(double2));
}

cudaError_t column_convolution_configure(const ColumnLaunch& l) {
    const int bytes = static_cast<int>(column_shared_bytes(l));
    const auto attribute = cudaFuncAttributeMaxDynamicSharedMemorySize;
    if (l.sign != 0)
        return l.single ? cudaFuncSetAttribute(column_transform_kernel<float2>, attribute, bytes)
                        : cudaFuncSetAttribute(column_transform_kernel<double2>, attribute, bytes);
    return l.single ? cudaFuncSetAttribute(column_convolution_kernel<float2>, attribute, bytes)
                    : cudaFuncSetAttribute(column_convolution_kernel<double2>, attribute, bytes);
}

cudaError_t launch_column_convolution(const ColumnLaunch& l, const void* in, const void* kernel, void* out,
                                      const void* twiddles, cudaStream_t stream) {
    if (l.columns <= 0 || l.groups <= 0) return cudaSuccess;
    const long long blocks = l.groups * l.blocks_per_group;
    if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    const size_t shared = static_cast<size_t>(column_shared_bytes(l));
    const unsigned grid = static_cast<unsigned>(blocks);
    if (l.sign != 0 && l.single)
        column_transform_kernel<float2><<<grid, l.threads, shared, stream>>>(
            l, static_cast<const float2*>(in), static_cast<float2*>(out), static_cast<const float2*>(twiddles));
    else if (l.sign != 0)
        column_transform_kernel<double2><<<grid, l.threads, shared, stream>>>(
            l, static_cast<const double2*>(in), static_cast<double2*>(out), static_cast<const double2*>(twiddles));
    else if (l.single)
        column_convolution_kernel<float2><<<grid, l.threads, shared, stream>>>(
            l, static_cast<const float2*>(in), static_cast<const float*>(kernel), static_cast<float2*>(out),
            static_cast<const float2*>(twiddles));
    else
        column_convolution_kernel<double2><<<grid, l.threads, shared, stream>>>(
            l, static_cast<const double2*>(in), static_cast<const double*>(kernel), static_cast<double2*>(out),
            static_cast<const double2*>(twiddles));
    return cudaGetLastError();
}

}  // namespace fftune::poisson
