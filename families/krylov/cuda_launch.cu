// The krylov family's CUDA SpMVs (cuda_launch.hpp). One thread per row for
// the sparse SpMVs (ELL column-major: neighbouring threads read neighbouring
// entries), grid-stride loops; the matrix-free stencil on a 3D launch; the
// plain, folded and one-pass steps; the one-pass scalars. The reductions:
// cuda_reduce.cuh; the vector operations: cuda_vector_launch.cu.
#include <algorithm>
#include <type_traits>

#include "families/krylov/cuda_launch.hpp"
#include "families/krylov/cuda_reduce.cuh"

namespace fftune::krylov {
namespace {

// The one-pass iteration's sums (KrylovOnePass); Full: with the norms of r and q.
template <class T, bool Full>
struct OnePassAcc {
    static constexpr int count = (Full ? 5 : 4) * parts<T> + (Full ? 2 : 0);
    T pq{}, rz{}, qz{}, qdq{}, rq{};
    double rr = 0, qq = 0;
};
__device__ __forceinline__ void put(double* v, int& k, double a) { v[k++] = a; }
__device__ __forceinline__ void put(double* v, int& k, double2 a) { v[k++] = a.x, v[k++] = a.y; }
template <class T, bool Full>
__device__ void block_add(const OnePassAcc<T, Full>& a, Reduce r) {
    constexpr int C = OnePassAcc<T, Full>::count;
    double v[C];
    int k = 0;
    put(v, k, a.pq), put(v, k, a.rz), put(v, k, a.qz), put(v, k, a.qdq);
    if constexpr (Full) put(v, k, a.rr), put(v, k, a.rq), put(v, k, a.qq);
    block_sum_n<C>(v, r.sum, r.partials ? r.partials + block_index() * C : nullptr);
}
// Doubles a step's sum takes.
template <class A>
struct SumCount {
    static constexpr int value = sizeof(A) / sizeof(double);
};
template <class T, bool Full>
struct SumCount<OnePassAcc<T, Full>> {
    static constexpr int value = OnePassAcc<T, Full>::count;
};

// What an SpMV multiplies and what it does with each row. Plain: y = A x,
// summing (x, y); nothing on the halo rows.
template <class T>
struct PlainStep {
    static constexpr bool halo_rows = false;
    using Acc = T;
    const T* __restrict__ x;
    T* __restrict__ y;
    __device__ PlainStep loaded() const { return *this; }
    __device__ T in(long long h) const { return __ldg(x + h); }
    __device__ void halo(long long) const {}
    // Own row i (haloed h) with A's row value v and in(h) = center; adds its part of the sum.
    __device__ void own(long long i, long long, T center, T v, Acc& acc) const {
        y[i] = v;
        acc += center * v;
    }
};
// Folded CG (KrylovFolded): the SpMV multiplies p_next = D^-1 r + β p,
// computed where it is read and stored once per haloed row (the halo rows
// too: the next SpMV reads them as p); x += α p on the own rows.
template <class T, bool Jacobi>
struct FoldedStep {
    static constexpr bool halo_rows = true;
    using Acc = T;
    KrylovFolded<T> f;
    __device__ FoldedStep loaded() const { return *this; }
    __device__ T in(long long h) const {
        T z = __ldg(f.r + h);
        if constexpr (Jacobi) z = __ldg(f.inv_diag + h) * z;
        return z + f.beta * __ldg(f.p + h);
    }
    __device__ void halo(long long h) const { f.p_next[h] = in(h); }
    __device__ void own(long long i, long long h, T center, T v, Acc& acc) const {
        f.p_next[h] = center;
        f.x[i] += f.alpha * __ldg(f.p + h);
        f.q[i] = v;
        acc += center * v;
    }
};
// One-pass CG (KrylovOnePass): r_next = r - α q and p_next = D^-1 r_next + β p
// computed where they are read, stored once per haloed row; the SpMV
// multiplies p_next; x += α p and the sums on the own rows.
template <class T, bool Jacobi>
struct OnePassStep {
    static constexpr bool halo_rows = true;
    static constexpr bool full = Jacobi || !std::is_same_v<T, double>;  // else the norms repeat rz, qz, qdq
    using Acc = OnePassAcc<T, full>;
    KrylovOnePass<T> f;
    T alpha{}, beta{}, alpha2{}, inv_beta2{};
    // The scalars from device memory, once per thread.
    __device__ OnePassStep loaded() const {
        OnePassStep s = *this;
        s.alpha = f.sc->alpha, s.beta = f.sc->beta, s.alpha2 = f.sc->alpha2, s.inv_beta2 = f.sc->inv_beta2;
        return s;
    }
    __device__ T residual(long long h) const { return __ldg(f.r + h) - alpha * __ldg(f.q + h); }
    __device__ T scaled(long long h, T v) const {
        if constexpr (Jacobi) return __ldg(f.inv_diag + h) * v;
        else return v;
    }
    __device__ T in(long long h) const { return scaled(h, residual(h)) + beta * __ldg(f.p + h); }
    __device__ void halo(long long h) const {
        const T r = residual(h);
        f.r_next[h] = r;
        f.p_next[h] = scaled(h, r) + beta * __ldg(f.p + h);
    }
    __device__ void own(long long i, long long h, T center, T v, Acc& acc) const {
        const T r = residual(h), z = scaled(h, r);
        f.r_next[h] = r;
        f.p_next[h] = center;
        f.q_next[h] = v;
        if (f.x) {  // uniform over the launch: x's update every other pass
            const T ph = __ldg(f.p + h);
            T dx = alpha * ph;
            if (f.p2) {  // the older direction: p = D^-1 r + β p_prev from the pass before, or read
                const T older = is_zero(inv_beta2) ? __ldg(f.p2 + h) : (ph - scaled(h, __ldg(f.r + h))) * inv_beta2;
                dx += alpha2 * older;
            }
            f.x[i] += dx;
        }
        acc.pq += center * v;
        acc.rz += r * z;
        acc.qz += v * z;
        acc.qdq += v * scaled(h, v);
        if constexpr (full) {
            acc.rr += norm(r);
            acc.rq += conj(r) * v;
            acc.qq += norm(v);
        }
    }
};

// Row h (haloed) of poisson7 at grid point (xi, yi, zi): 6 u − its neighbours
// in the domain; its value and its y-neighbours' given (a thread walking y
// keeps them), the others read through step.in.
template <class Step>
__device__ __forceinline__ double poisson7_row(const KrylovRows& g, const Step& step, long long h, long long xi,
                                               long long yi, long long zi, double center, double below, double above) {
    double v = 6 * center;
    if (xi > 0) v -= step.in(h - 1);
    if (xi + 1 < g.nx) v -= step.in(h + 1);
    if (yi > 0) v -= below;
    if (yi + 1 < g.ny) v -= above;
    if (zi > 0) v -= step.in(h - g.plane);
    if (zi + 1 < g.nz) v -= step.in(h + g.plane);
    return v;
}

// One thread per row over the own rows (and the halo rows where the step
// writes them): F = 0 csr, 1 ell, 2 poisson7 from the row number (the
// fallback of the 3D launch below). A block takes R × blockDim consecutive
// rows, a thread every blockDim-th of them (R = 1: the grid-stride loop), so
// that a banded matrix's gathers at ± a few hundred rows find the block's
// own recent loads in L1. W > 0: ELL of width W, its loop unrolled (the
// loads of a row issued together). A sparse row takes in(h) from its own
// entry (ELL pads with it too) and loads it apart only where it has none.
template <int F, int R, int W, class T, class Step>
__global__ void sparse_kernel(KrylovRows g, const long long* __restrict__ row_ptr, const int* __restrict__ col,
                              const T* __restrict__ val, int width, Step launched, Reduce red) {
    const Step step = launched.loaded();
    typename Step::Acc d{};
    const long long first = Step::halo_rows ? -g.plane : 0, total = g.rows - 2 * first;
    const long long chunk = static_cast<long long>(R) * blockDim.x;
    for (long long base = blockIdx.x * chunk; base < total; base += gridDim.x * chunk)
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const long long k = base + r * static_cast<long long>(blockDim.x) + threadIdx.x;
        if (k >= total) break;
        const long long i = k + first, h = i + g.plane;
        if (i < 0 || i >= g.rows) {
            step.halo(h);
            continue;
        }
        T v = zero<T>(), center = zero<T>();
        bool own_entry = false;
        auto entry = [&](T a, long long c) {
            const T u = step.in(c);
            v += a * u;
            if (c == h) center = u, own_entry = true;
        };
        if constexpr (F == 0) {
            for (long long j = row_ptr[i]; j < row_ptr[i + 1]; ++j) entry(val[j], col[j]);
        } else if constexpr (F == 1 && W > 0) {
#pragma unroll
            for (int e = 0; e < W; ++e) entry(val[e * g.rows + i], col[e * g.rows + i]);
        } else if constexpr (F == 1) {
            for (int e = 0; e < width; ++e) entry(val[e * g.rows + i], col[e * g.rows + i]);
        } else {
            center = step.in(h), own_entry = true;
            // 32-bit division where the rows allow (64-bit division dominated the kernel).
            long long xi, yi, zi;
            if (g.rows <= 0xffffffffll) {
                const unsigned ii = unsigned(i), nx = unsigned(g.nx), ny = unsigned(g.ny), t = ii / nx;
                xi = ii - t * nx, yi = t % ny, zi = g.z0 + t / ny;
            } else {
                xi = i % g.nx, yi = (i / g.nx) % g.ny, zi = g.z0 + i / g.plane;
            }
            const T below = yi > 0 ? step.in(h - g.nx) : 0.0, above = yi + 1 < g.ny ? step.in(h + g.nx) : 0.0;
            v = poisson7_row(g, step, h, xi, yi, zi, center, below, above);
        }
        if (!own_entry) center = step.in(h);
        step.own(i, h, center, v, d);
    }
    if (red.sum) block_add(d, red);
}

// Matrix-free poisson7 with the grid position from the launch: x along the
// block's threads, R consecutive y-rows per thread (blockIdx.y), the rank's
// plane by blockIdx.z (with the step's halo rows: the two halo planes too).
// A thread keeps its column's values at y0 - 1 .. y0 + R, so a row reads its
// y-neighbours from registers, and its R rows' loads are independent.
// (spmv of the row number divides: 196 us at 256^3 on an H100, 1.3 TB/s.)
template <int R, class Step>
__global__ void stencil7_kernel(KrylovRows g, Step launched, Reduce red) {
    const Step step = launched.loaded();
    const long long xi = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long pz = static_cast<long long>(blockIdx.z) - (Step::halo_rows ? 1 : 0);  // -1 and planes: halos
    const long long y0 = blockIdx.y * (long long)R;
    typename Step::Acc d{};
    if (xi < g.nx) {
        const long long base = pz * g.plane + xi + g.plane;  // haloed row of (xi, 0, pz)
        if (pz < 0 || pz * g.plane >= g.rows) {
            for (int k = 0; k < R; ++k)
                if (y0 + k < g.ny) step.halo(base + (y0 + k) * g.nx);
        } else {
            const long long zi = g.z0 + pz;
            double c[R + 2];
#pragma unroll
            for (int k = 0; k < R + 2; ++k) {
                const long long yk = y0 - 1 + k;
                c[k] = yk >= 0 && yk < g.ny ? step.in(base + yk * g.nx) : 0.0;
            }
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const long long yi = y0 + k, h = base + yi * g.nx;
                if (yi < g.ny) step.own(h - g.plane, h, c[k + 1], poisson7_row(g, step, h, xi, yi, zi, c[k + 1], c[k], c[k + 2]), d);
            }
        }
    }
    if (red.sum) block_add(d, red);
}
// The stencil's y-rows per thread where KrylovRows leaves it open (0), by
// kernel: measured alone at 256^3 on an H100 (launch_bench), SpMV+dot 131,
// 121, 114, 116 us at R = 1, 2, 4, 8, and the folded SpMV (three arrays read
// per neighbour) 292, 293, 308, 341 us.
constexpr int default_stencil_rows = 4, default_folded_stencil_rows = 2;
template <int R, class Step>
cudaError_t stencil7(KrylovRows g, Step step, KrylovSum sum, cudaStream_t stream) {
    const long long planes = g.rows / g.plane + (Step::halo_rows ? 2 : 0);
    const unsigned tx = static_cast<unsigned>(std::min<long long>(threads, (g.nx + 31) / 32 * 32));
    const dim3 grid(static_cast<unsigned>((g.nx + tx - 1) / tx), static_cast<unsigned>((g.ny + R - 1) / R),
                    static_cast<unsigned>(planes));
    return reduced<SumCount<typename Step::Acc>::value>(sum, static_cast<long long>(grid.x) * grid.y * grid.z, stream,
                      [&](Reduce r) { stencil7_kernel<R><<<grid, tx, 0, stream>>>(g, step, r); });
}

// y = A x in format `kind` through `step` (PlainStep, FoldedStep or OnePassStep).
template <class T, class Step>
cudaError_t spmv_with(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width,
                      Step step, KrylovSum sum, cudaStream_t stream) {
    if (g.rows <= 0) return cudaSuccess;
    const long long rows = g.rows + (Step::halo_rows ? 2 * g.plane : 0);
    auto blocked = [&](auto f, auto r) {
        constexpr int F = decltype(f)::value, R = decltype(r)::value;
        const unsigned b = blocks_for((rows + R - 1) / R);
        return reduced<SumCount<typename Step::Acc>::value>(sum, b, stream, [&](Reduce red) {
            if constexpr (F == 1) {  // ELL of poisson7's width 7 or curlcurl13's 13: unrolled
                if (width == 7) return sparse_kernel<F, R, 7, T><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, step, red);
                if (width == 13) return sparse_kernel<F, R, 13, T><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, step, red);
            }
            sparse_kernel<F, R, 0, T><<<b, threads, 0, stream>>>(g, row_ptr, col, val, width, step, red);
        });
    };
    auto sparse = [&](auto f) {
        switch (g.sparse_rows) {
            case 0:  // measured alone at 256^3 on an H100 (launch_bench): csr at R = 2, ell at R = 1
                if constexpr (decltype(f)::value == 0) return blocked(f, std::integral_constant<int, 2>{});
                else return blocked(f, std::integral_constant<int, 1>{});
            case 1: return blocked(f, std::integral_constant<int, 1>{});
            case 2: return blocked(f, std::integral_constant<int, 2>{});
            case 4: return blocked(f, std::integral_constant<int, 4>{});
            case 8: return blocked(f, std::integral_constant<int, 8>{});
            default: return cudaErrorInvalidValue;
        }
    };
    if (kind == 0) return sparse(std::integral_constant<int, 0>{});
    if (kind == 1) return sparse(std::integral_constant<int, 1>{});
    if constexpr (std::is_same_v<T, double>) {  // matrix-free: poisson7 (real) only
        const long long planes = g.rows / g.plane + 2;
        if (g.ny > 65535 || planes > 65535) return sparse(std::integral_constant<int, 2>{});  // the launch's y and z extents
        switch (g.stencil_rows) {
            case 1: return stencil7<1>(g, step, sum, stream);
            case 2: return stencil7<2>(g, step, sum, stream);
            case 0:
                if constexpr (Step::halo_rows) return stencil7<default_folded_stencil_rows>(g, step, sum, stream);
                else return stencil7<default_stencil_rows>(g, step, sum, stream);
            case 4: return stencil7<4>(g, step, sum, stream);
            case 8: return stencil7<8>(g, step, sum, stream);
            default: return cudaErrorInvalidValue;
        }
    }
    return cudaErrorInvalidValue;
}

template <class T>
__device__ T sum_one() {
    if constexpr (parts<T> == 1) return 1.0;
    else return {1.0, 0.0};
}
template <class T>
__device__ T sum_at(const double* s, int i) {
    if constexpr (parts<T> == 1) return s[i];
    else return {s[i], s[i + 1]};
}
// The one-pass scalars (OnePassScalars, kernels.hpp) from the summed sums, by one thread.
template <class T>
__global__ void one_pass_scalars_kernel(const double* s, bool norms, int pass, KrylovScalars<T>* sc) {
    constexpr int k = parts<T>;
    const T pq = sum_at<T>(s, 0), rz = sum_at<T>(s, k), qz = sum_at<T>(s, 2 * k), qdq = sum_at<T>(s, 3 * k);
    const double rr = norms ? s[4 * k] : real(rz), qq = norms ? s[5 * k + 1] : real(qdq);
    const T rq = norms ? sum_at<T>(s, 4 * k + 1) : qz;
    const T alpha = rz / pq, beta = (rz - 2.0 * alpha * qz + alpha * alpha * qdq) / rz;
    sc->alpha2 = sc->alpha, sc->alpha = alpha;
    const T old_beta = sc->beta, one = sum_one<T>();
    sc->inv_beta2 = norm(old_beta) >= krylov_reconstruct_beta * krylov_reconstruct_beta ? one / old_beta : T{};
    sc->beta = beta;
    if (sc->broken == 0) {  // rr stays the last pass's before a breakdown (the step's floor test)
        if (!finite(pq) || is_zero(pq) || !finite(rz) || !finite(beta)) sc->broken = 1 + pass;
        else sc->rr = rr - 2 * real(alpha * rq) + norm(alpha) * qq;
    }
}

}  // namespace

// One launcher per operation and scalar type (double; double2 = complex).
#define KRYLOV_LAUNCHERS(T)                                                                                          \
    cudaError_t launch_spmv(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, int width, \
                            const T* x, T* y, KrylovSum sum, cudaStream_t stream) {                                  \
        return spmv_with<T>(kind, g, row_ptr, col, val, width, PlainStep<T>{x, y}, sum, stream);                    \
    }                                                                                                                \
    cudaError_t launch_spmv_folded(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val,   \
                                   int width, KrylovFolded<T> f, KrylovSum sum, cudaStream_t stream) {               \
        if (f.inv_diag) return spmv_with<T>(kind, g, row_ptr, col, val, width, FoldedStep<T, true>{f}, sum, stream); \
        return spmv_with<T>(kind, g, row_ptr, col, val, width, FoldedStep<T, false>{f}, sum, stream);                \
    }                                                                                                                \
    cudaError_t launch_spmv_one_pass(int kind, KrylovRows g, const long long* row_ptr, const int* col, const T* val, \
                                     int width, KrylovOnePass<T> f, KrylovSum sum, cudaStream_t stream) {             \
        if (f.inv_diag) return spmv_with<T>(kind, g, row_ptr, col, val, width, OnePassStep<T, true>{f}, sum, stream); \
        return spmv_with<T>(kind, g, row_ptr, col, val, width, OnePassStep<T, false>{f}, sum, stream);                \
    }                                                                                                                \
    cudaError_t launch_one_pass_scalars(const double* sums, bool norms, int pass, KrylovScalars<T>* sc,              \
                                        cudaStream_t stream) {                                                        \
        one_pass_scalars_kernel<T><<<1, 1, 0, stream>>>(sums, norms, pass, sc);                                      \
        return cudaGetLastError();                                                                                   \
    }

KRYLOV_LAUNCHERS(double)
KRYLOV_LAUNCHERS(double2)

}  // namespace fftune::krylov
