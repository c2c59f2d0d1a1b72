// CG and COCG, unfused and fused (cg.hpp); registers cg/none and cg/fused.
#include "families/krylov/cg.hpp"

namespace fftune::krylov {

template <class S, bool Fused>
void Cg<S, Fused>::iterate(Context<S>& c) {
    const index_t n = c.rows();
    auto& k = *c.kernels_;
    c.exchange(c.p_);
    // q = A p; fused: (p, q) in the same pass
    S pq = c.local([&] {
        return c.timed(phase::spmv, [&] { return k.spmv(c.a_, static_cast<const S*>(c.p_.data()), c.q(), Fused); });
    });
    if (!Fused) pq = c.local([&] { return c.timed(phase::reduce, [&] { return k.dot(c.p(), c.q(), n); }); });
    const S pq_all = c.allreduce(pq);
    if (!finite(pq_all) || pq_all == S(0)) {  // a failure somewhere, or a breakdown: every rank stops here
        c.stop_ = true;
        return;
    }
    // α = (r, z)/(p, Ap); x += αp, r -= αq, z = D^-1 r
    const S alpha = rz_ / pq_all;
    S rz = 0;
    if (Fused) {
        rz = c.local([&] {
            return c.timed(phase::update, [&] { return k.fused_update(alpha, c.p(), c.q(), c.x(), c.r(), c.inv_diag(), c.z(), n); });
        });
    } else {
        c.local([&] {
            c.timed(phase::update, [&] {
                k.axpy(alpha, c.p(), c.x(), n);
                k.axpy(-alpha, c.q(), c.r(), n);
                if (c.jacobi_) k.scale(c.inv_diag(), c.r(), c.z(), n);
            });
        });
        rz = rz_local(c);
    }
    const S rz_new = c.allreduce(rz);
    if (!finite(rz_new)) {
        c.stop_ = true;
        return;
    }
    // β = (r', z')/(r, z); p = z + βp
    const S beta = rz_new / rz_;
    rz_ = rz_new;
    c.local([&] { c.timed(phase::update, [&] { k.xpay(c.z(), beta, c.p(), n); }); });
}

template <class S, bool Fused>
std::vector<PhaseTraffic> Cg<S, Fused>::traffic(const Context<S>& c, std::size_t k) const {
    const std::size_t v = c.bytes(c.rows()), halo = halo_bytes(c);
    // update: x += αp and r -= αq (3 streams each; fused: p, q, x, r read, x, r written),
    // z = D^-1 r (3; fused 2: r is at hand), p = z + βp (3)
    // (cusparse_csr: cuBLAS has no xpay: dscal + daxpy, 5 streams)
    const std::size_t update =
        6 * v + (c.jacobi_ ? (Fused ? 2 : 3) * v : 0) + (c.format_ == Format::cusparse_csr ? 5 : 3) * v;
    // unfused: (p, q) and (r, z) as passes of their own ((r, r): one stream)
    const std::size_t reduce = Fused ? 0 : 2 * v + (c.jacobi_ ? 2 : 1) * v;
    return {{0, k * halo, k * halo},
            {k * spmv_bytes(c.format_, *c.host_), 0, 0},
            {k * update, 0, 0},
            {k * reduce + (c.jacobi_ ? 2 : 1) * v, 0, 0}};
}

template class Cg<double, false>;
template class Cg<double, true>;
template class Cg<complex, false>;
template class Cg<complex, true>;

namespace {
const bool registered = register_variant<SolverT<double>, Cg<double, false>>("cg/none") &&
                        register_variant<SolverT<double>, Cg<double, true>>("cg/fused");
}

}  // namespace fftune::krylov
