// CG with the direction update folded into the SpMV (cg.hpp); registers cg/folded.
#include "families/krylov/cg.hpp"

namespace fftune::krylov {

template <class S>
void CgFolded<S>::start(Context<S>& c) {
    rz_ = c.allreduce(rz_local(c));
    alpha_prev_ = beta_ = S(0);
}

template <class S>
void CgFolded<S>::iterate(Context<S>& c) {
    const index_t n = c.rows();
    auto& k = *c.kernels_;
    c.exchange(c.r_);
    // p' = D^-1 r + βp, x += α_prev p, q = A p'; (p', q)
    const S pq = c.local([&] {
        return c.timed(phase::spmv, [&] {
            return k.spmv_folded(c.a_, beta_, alpha_prev_, static_cast<const S*>(c.r_.data()), c.inv_diag_haloed(),
                                 static_cast<const S*>(c.p_.data()), static_cast<S*>(p_next_.data()), c.x(), c.q());
        });
    });
    std::swap(c.p_, p_next_);
    const S pq_all = c.allreduce(pq);
    if (!finite(pq_all) || pq_all == S(0)) {
        c.stop_ = true;
        return;
    }
    // α = (r, z)/(p, Ap); r -= αq and (r, D^-1 r)
    const S alpha = rz_ / pq_all;
    const S rz = c.local([&] {
        return c.timed(phase::update, [&] { return k.update_residual(alpha, c.q(), c.r(), c.inv_diag(), n); });
    });
    const S rz_new = c.allreduce(rz);
    if (!finite(rz_new)) {
        c.stop_ = true;
        return;
    }
    beta_ = rz_new / rz_;
    rz_ = rz_new;
    alpha_prev_ = alpha;
}

// x += α_prev p: the step x still lags by.
template <class S>
void CgFolded<S>::catch_up(Context<S>& c) {
    c.local([&] { c.timed(phase::update, [&] { c.kernels_->axpy(alpha_prev_, c.p(), c.x(), c.rows()); }); });
    alpha_prev_ = S(0);
}

template <class S>
std::vector<PhaseTraffic> CgFolded<S>::traffic(const Context<S>& c, std::size_t k) const {
    const std::size_t v = c.bytes(c.rows()), halo = halo_bytes(c), vh = c.bytes(c.slab().haloed());
    const bool j = c.jacobi_;
    // SpMV pass: the matrix; r, p (and D^-1) read and p_next written on every haloed row; x read
    // and written, q written (spmv_bytes counts x and y once: + q). Update: r -= αq (3; Jacobi: + D^-1),
    // and once per step the lagging x += αp (3).
    const std::size_t spmv = spmv_bytes(c.format_, *c.host_) - 2 * v + (j ? 4 : 3) * vh + 3 * v;
    const std::size_t up = k * (j ? 4 : 3) * v + 3 * v;
    return {{0, k * halo, k * halo}, {k * spmv, 0, 0}, {up, 0, 0}, {(j ? 2 : 1) * v, 0, 0}};
}

template class CgFolded<double>;
template class CgFolded<complex>;

namespace {
const bool registered = register_variant<SolverT<double>, CgFolded<double>>("cg/folded");
}

}  // namespace fftune::krylov
