// A Krylov solver of the family: one class per algorithm, and per fusion only
// where the iteration differs, over the shared Context (context.hpp). Each
// registers itself by "solver/fusion" for its scalar type, from its own file:
//   register_variant<SolverT<double>, Cg<double, false>>("cg/none")
// The family (krylov.cpp) creates the configured one; a pair that is not
// registered is not applicable.
#pragma once

#include <cstddef>
#include <vector>

#include "core/base/registry.hpp"
#include "core/platform/phase_timer.hpp"
#include "families/krylov/context.hpp"

namespace fftune::krylov {

template <class S>
class SolverT {
public:
    static constexpr const char* kind = "krylov solver";
    virtual ~SolverT() = default;
    // q with halo planes (the context allocates it).
    virtual bool haloed_q() const { return false; }
    // Its own vectors, in the context's backend memory (inside setup's all-or-none).
    virtual void setup(Context<S>& c) { (void)c; }
    // Untimed, after the context's x = 0, r = b, z = D^-1 r, p = z (own rows > 0).
    virtual void restart(Context<S>& c) { (void)c; }
    // The scalars at x = 0, before the first iteration (a step's and the validation solve's).
    virtual void start(Context<S>& c) = 0;
    // One iteration; sets c.stop_ at a breakdown (every rank alike: the scalars are sums over the ranks).
    virtual void iterate(Context<S>& c) = 0;
    // What a lagging iteration (x, r behind) still owes at the end of a solve.
    virtual void catch_up(Context<S>& c) { (void)c; }
    // The iteration (1-based) of a breakdown the host has not seen yet, 0 if none.
    virtual double broken_at(Context<S>& c) {
        (void)c;
        return 0;
    }
    // Bytes residual2() reads in backend memory (a step's look at the residual floor).
    virtual std::size_t look_bytes(const Context<S>& c) const { return c.bytes(c.rows()); }
    // ‖r‖² over the ranks after an iteration (the validation solve's test, a step's floor test; after
    // a stop: of the last iteration that completed).
    virtual double residual2(Context<S>& c) { return c.allreduce(c.local_norm2(c.r())); }
    // Bytes of its own vectors in backend memory.
    virtual std::size_t backend_bytes() const { return 0; }
    // Per step of k iterations: halo, spmv, update, reduce (PhaseTraffic).
    virtual std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const = 0;
};

// The halo bytes one exchange sends (and receives) on this rank.
template <class S>
std::size_t halo_bytes(const Context<S>& c) {
    const Slab& s = c.slab();
    return Context<S>::bytes(s.plane()) * ((s.below ? 1 : 0) + (s.above ? 1 : 0));
}

}  // namespace fftune::krylov

namespace fftune {
FFTUNE_DECLARE_REGISTRY(krylov::SolverT<double>);
FFTUNE_DECLARE_REGISTRY(krylov::SolverT<std::complex<double>>);
}  // namespace fftune
