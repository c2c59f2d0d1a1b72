// Preconditioned CG (README.md) for real SPD operators, and COCG for complex
// symmetric ones: the same iteration with the kernels' unconjugated dots
// (cocg.cpp registers it). One class per fusion whose iteration differs:
// none and fused (cg.cpp), folded (cg_folded.cpp), one_pass (cg_one_pass.cpp).
#pragma once

#include "families/krylov/solver.hpp"

namespace fftune::krylov {

// ρ = (r, z) rank-locally, unconjugated (timed as reduce).
template <class S>
S rz_local(Context<S>& c) {
    return c.local([&] { return c.timed(phase::reduce, [&] { return c.kernels_->dot(c.r(), c.z(), c.rows()); }); });
}

// Fused: (p, Ap) in the SpMV's pass, x, r, z and (r, z) in one update pass.
template <class S, bool Fused>
class Cg final : public SolverT<S> {
public:
    void start(Context<S>& c) override { rz_ = c.allreduce(rz_local(c)); }
    void iterate(Context<S>& c) override;
    std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const override;

private:
    S rz_ = 0;
};

// Folded (README.md): halo(r); p' = D^-1 r + βp, x += α_prev p and q = A p' in
// one pass; r -= αq and (r, D^-1 r) in another. x lags one iteration.
template <class S>
class CgFolded final : public SolverT<S> {
public:
    void setup(Context<S>& c) override { p_next_ = c.haloed_vector(); }
    void restart(Context<S>& c) override { c.zero(p_next_); }  // its halo rows: β 0 times them
    void start(Context<S>& c) override;
    void iterate(Context<S>& c) override;
    void catch_up(Context<S>& c) override;
    std::size_t backend_bytes() const override { return p_next_.bytes(); }
    std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const override;

private:
    Buffer p_next_;
    S rz_ = 0;
    S alpha_prev_ = 0, beta_ = 0;  // the last step (x lags by it) and the next direction's β
};

// One pass per iteration (README.md): r' = r − α q, p' = D^-1 r' + βp on every
// haloed row, q' = A p' on the own rows and every sum of the iteration; the
// scalars stay in backend memory (OnePassScalars). r lags one step, x one or two.
template <class S>
class CgOnePass final : public SolverT<S> {
public:
    bool haloed_q() const override { return true; }  // the next pass reads q at the neighbours
    void setup(Context<S>& c) override;
    void restart(Context<S>& c) override;
    void start(Context<S>& c) override;
    void iterate(Context<S>& c) override;
    void catch_up(Context<S>& c) override;
    double broken_at(Context<S>& c) override { return scalars(c).broken; }
    // The scalars' ‖r − αq‖² (after a breakdown: of the pass before it; r lags and x owes).
    double residual2(Context<S>& c) override;
    std::size_t look_bytes(const Context<S>&) const override { return 0; }
    std::size_t backend_bytes() const override;
    std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const override;

private:
    OnePassScalars<S> scalars(Context<S>& c);
    // r, q double-buffered, p triple-buffered (x adds two directions every other pass)
    Buffer r_next_, q_next_, p_next_, p_prev_;
    Buffer sums_, scalars_;  // the pass's sums and the scalars, in backend memory
    S alpha_prev_ = 0, alpha_prev2_ = 0;  // the steps of p and p_prev while x owes them
    int iteration_ = 0;                   // iterations into the solve (the first exchanges r's halo)
    int owed_ = 0;                        // directions x still owes (0, 1 or 2: α p, α2 p_prev)
};

extern template class Cg<double, false>;
extern template class Cg<double, true>;
extern template class Cg<complex, false>;
extern template class Cg<complex, true>;
extern template class CgFolded<double>;
extern template class CgFolded<complex>;
extern template class CgOnePass<double>;
extern template class CgOnePass<complex>;

}  // namespace fftune::krylov
