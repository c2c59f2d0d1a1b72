// The vector and matrix kernels a Krylov iteration runs, per backend (the
// backend's name is the registry key: "fftw" is the CPU backend), for real
// (double) and complex (std::complex<double>) scalars. The solver (krylov.cpp)
// is written once over them; a backend's kernels only touch its own memory.
// Vectors that an SpMV reads are haloed (operator.hpp). Dots are unconjugated
// (a^T b: CG on real operators, COCG on complex symmetric ones); norm2 is ‖a‖².
#pragma once

#include <type_traits>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {

// A rank's operator in backend memory, in the layout of one format.
template <class S>
struct DeviceMatrixT {
    Format format = Format::csr;
    Slab slab;
    const std::int64_t* row_ptr = nullptr;    // csr
    const std::int32_t* row_ptr32 = nullptr;  // cusparse_csr (cuSPARSE takes one index type)
    const std::int32_t* col = nullptr;
    const S* val = nullptr;
    int ell_width = 0;
    int stencil_rows = 0;  // matrix_free on cuda: y-rows per thread (1, 2, 4, 8; 0: the kernels' default, 4, folded 2)
};
using DeviceMatrix = DeviceMatrixT<double>;

// The sums of a one-pass CG iteration (fusion "one_pass") over the own rows,
// with r, q, p the new iterates, z = D^-1 r (r without Jacobi): the
// unconjugated p^T q, r^T z, q^T z, q^T D^-1 q, and for ‖r − α q‖², the
// convergence test, ‖r‖², r^H q, ‖q‖² (real parts only where real).
template <class S>
struct OnePassSums {
    S pq = 0, rz = 0, qz = 0, qdq = 0, rr = 0, rq = 0, qq = 0;
};
// In backend memory the sums are doubles, which an allreduce adds as such: S's
// parts of pq, rz, qz, qdq, then with `norms` (complex scalars, or Jacobi;
// else they repeat rz, qz, qdq) ‖r‖², r^H q's parts, ‖q‖².
template <class S>
constexpr int one_pass_sum_count(bool norms) {
    constexpr int k = sizeof(S) / sizeof(double);
    return norms ? 5 * k + 2 : 4 * k;
}
template <class S>
OnePassSums<S> one_pass_sums_of(const double* s, bool norms) {
    constexpr int k = sizeof(S) / sizeof(double);
    auto at = [&](int i) {
        if constexpr (k == 1) return s[i];
        else return S(s[i], s[i + 1]);
    };
    OnePassSums<S> o;
    o.pq = at(0), o.rz = at(k), o.qz = at(2 * k), o.qdq = at(3 * k);
    if (norms) o.rr = s[4 * k], o.rq = at(4 * k + 1), o.qq = s[5 * k + 1];
    else o.rr = o.rz, o.rq = o.qz, o.qq = o.qdq;
    return o;
}
// The one-pass iteration's scalars, in backend memory: the pass reads α (the
// last step), β (the next direction's), α2 (the step before) and inv_beta2
// there, and one_pass_scalars() writes them from the summed sums with
// ‖r − αq‖² (from a breakdown on: the last pass's before it); `broken` is 1 +
// the pass where a scalar first came out not finite or (p, Ap) = 0. inv_beta2 = 1/β of the pass before where |β| ≥ 1e-3, else 0:
// x's update then takes the older direction from p = D^-1 r + β p_prev
// (p_prev = (p − D^-1 r)/β, no read; rounding grows as 1/√|β|) or, at 0,
// reads p_prev. The host reads them only when it needs them: no wait per
// iteration.
template <class S>
struct OnePassScalars {
    S alpha = 0, beta = 0, alpha2 = 0, inv_beta2 = 0;
    double rr = 0, broken = 0;
};
// Where |β| is below this, one_pass's x update reads p_prev instead of reconstructing it.
constexpr double one_pass_reconstruct_beta = 1e-3;

template <class S>
class KernelsT {
public:
    static constexpr const char* kind = "krylov kernels";
    virtual ~KernelsT() = default;
    // Before the first call: the backend whose memory and queue the kernels use,
    // and the operator they will multiply by (library handles are made here).
    virtual void bind(Backend& backend, const DeviceMatrixT<S>& a) { (void)backend, (void)a; }
    // y = A x (x haloed, y not). With `dot`, returns x^T y over the own rows
    // in the same pass (fused); else 0.
    virtual S spmv(const DeviceMatrixT<S>& a, const S* x_haloed, S* y, bool dot) = 0;
    virtual S dot(const S* a, const S* b, index_t n) = 0;
    // ‖a‖² (conjugated): real operators' dot(a, a).
    virtual double norm2(const S* a, index_t n) {
        if constexpr (std::is_same_v<S, double>) return dot(a, a, n);
        else throw std::logic_error("these kernels have no complex norm");
    }
    virtual void conjugate(const S* x, S* y, index_t n) {  // y = conj(x) (BiCG's shadow system)
        (void)x, (void)y, (void)n;
        throw std::logic_error("these kernels have no conjugate");
    }
    virtual void axpy(S alpha, const S* x, S* y, index_t n) = 0;  // y += alpha x
    virtual void xpay(const S* x, S beta, S* y, index_t n) = 0;   // y = x + beta y
    // y = a y (QMR's normalisations): axpy of y onto itself, elementwise.
    virtual void scal(S a, S* y, index_t n) { axpy(a - S(1), y, y, n); }
    virtual void scale(const S* inv_diag, const S* r, S* z, index_t n) = 0;  // z = D^-1 r
    // One pass: x += alpha p; r -= alpha q; z = D^-1 r (when inv_diag, else z is r);
    // returns r^T z.
    virtual S fused_update(S alpha, const S* p, const S* q, S* x, S* r, const S* inv_diag, S* z, index_t n) = 0;
    // CG with the direction update folded into the SpMV (fusion "folded"; r, inv_diag, p and p_next
    // haloed, inv_diag null: none): p_next = D^-1 r + beta p on every haloed row; x += alpha p and
    // q = A p_next on the own rows; returns p_next^T q.
    virtual S spmv_folded(const DeviceMatrixT<S>& a, S beta, S alpha, const S* r, const S* inv_diag, const S* p,
                          S* p_next, S* x, S* q) = 0;
    // The folded iteration's other pass: r -= alpha q; returns r^T D^-1 r (inv_diag null: r^T r).
    virtual S update_residual(S alpha, const S* q, S* r, const S* inv_diag, index_t n) = 0;
    // CG in one pass per iteration (fusion "one_pass"; r, q, p, p2, inv_diag and the *_next vectors
    // haloed, inv_diag null: none), with α, β and α2 read from `scalars`: on every haloed row
    // r_next = r - α q and p_next = D^-1 r_next + β p; on the own rows q_next = A p_next (q_next's
    // halo rows untouched) and, unless x is null, x += α p (+ α2 p_older unless p2 is null: p_older =
    // (p − D^-1 r) inv_beta2, or p2 where inv_beta2 is 0; x's update every other pass); the sums of (r_next, q_next, p_next) into `sums` (one_pass_sum_count
    // doubles, norms where inv_diag is set or S complex). Backend memory all; nothing waits.
    virtual void spmv_one_pass(const DeviceMatrixT<S>& a, const OnePassScalars<S>* scalars, const S* r, const S* q,
                               const S* p, const S* inv_diag, S* r_next, S* q_next, S* p_next, S* x, const S* p2,
                               double* sums) = 0;
    // From every rank's sums (added): α = rz/pq, β = (rz − 2α qz + α² qdq)/rz, α2 = the α before,
    // inv_beta2 from the β before, rr = ‖r‖² − 2 Re(α r^H q) + |α|² ‖q‖²; `broken` set (1 + pass) at a
    // breakdown, after which rr keeps the last pass's. In backend memory.
    virtual void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<S>* scalars) = 0;
};
using KrylovKernels = KernelsT<double>;
using ComplexKernels = KernelsT<complex>;

}  // namespace fftune::krylov

namespace fftune {
FFTUNE_DECLARE_REGISTRY(krylov::KernelsT<double>);
FFTUNE_DECLARE_REGISTRY(krylov::KernelsT<std::complex<double>>);
}
