// QMR without look-ahead (Barrett et al., Templates, fig. 2.7; README.md),
// M1 = M2 = D^{1/2} with Jacobi, unfused: one SpMV per iteration on the
// symmetric Lanczos process (qmr_sym, Freund; qmr_sym.cpp registers it), two
// on the two-sided one with its own left vectors (qmr, Shadow; qmr.cpp).
#pragma once

#include "families/krylov/solver.hpp"

namespace fftune::krylov {

// qmr_sym: the left Lanczos vectors are the right ones (w = v, z = y, q = p,
// ξ = ρ) and every form is the bilinear x^T y. qmr: its own left vectors, forms
// z^H y and q^H A p, A^H q = conj(A conj(q)); with w̃0 = conj(b) they are then
// qmr_sym's, conjugated.
template <class S, bool Shadow>
class Qmr final : public SolverT<S> {
public:
    void setup(Context<S>& c) override;
    std::size_t backend_bytes() const override;
    void restart(Context<S>& c) override;
    void start(Context<S>& c) override;
    void iterate(Context<S>& c) override;
    std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const override;

private:
    // Without Jacobi y is ṽ, ỹ is y (and z is w̃, z̃ is z).
    S* vt() { return static_cast<S*>(vt_.data()); }
    S* yq() { return jacobi_ ? static_cast<S*>(yq_.data()) : vt(); }
    S* ty() { return jacobi_ ? static_cast<S*>(ty_.data()) : yq(); }
    S* dq() { return static_cast<S*>(d_.data()); }
    S* sq() { return static_cast<S*>(s_.data()); }
    S* wt() { return static_cast<S*>(wt_.data()); }
    S* zq() { return jacobi_ ? static_cast<S*>(zq_.data()) : wt(); }
    S* tz() { return jacobi_ ? static_cast<S*>(tz_.data()) : zq(); }
    S* ql() { return static_cast<S*>(ql_.data()); }
    S* qt() { return static_cast<S*>(qt_.data()); }
    S* ct() { return static_cast<S*>(ct_.data()) + plane_; }
    const S* inv_sqrt_diag() { return static_cast<const S*>(inv_sqrt_diag_.data()); }
    const S* inv_sqrt_diag_h() { return static_cast<const S*>(inv_sqrt_diag_h_.data()); }

    bool jacobi_ = false;
    index_t plane_ = 0;
    // ṽ, y, ỹ; d, s; with the shadow: w̃, z, z̃, A^H q, conj(q) (haloed), q
    Buffer vt_, yq_, ty_, d_, s_, wt_, zq_, tz_, ql_, qt_, ct_, inv_sqrt_diag_, inv_sqrt_diag_h_;
    double rho_ = 0, xi_ = 0, gamma_ = 1, theta_ = 0;
    S eta_ = S(-1), eps_ = S(1);
    bool first_ = true;
};

extern template class Qmr<complex, false>;
extern template class Qmr<complex, true>;

}  // namespace fftune::krylov
