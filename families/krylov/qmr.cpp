// QMR and QMR-SYM's iteration (qmr.hpp); registers qmr/none.
#include "families/krylov/qmr.hpp"

#include <cmath>

namespace fftune::krylov {

template <class S, bool Shadow>
void Qmr<S, Shadow>::setup(Context<S>& c) {
    jacobi_ = c.jacobi_, plane_ = c.slab().plane();
    vt_ = c.own_vector(), d_ = c.own_vector(), s_ = c.own_vector();
    if (jacobi_) {  // split: M1 = M2 = D^{1/2}
        yq_ = c.own_vector(), ty_ = c.own_vector();
        std::vector<S> inv(c.host_->diag.size());
        for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = S(1) / std::sqrt(c.host_->diag[i]);
        inv_sqrt_diag_ = c.upload(inv);
        if (Shadow) {
            for (auto& v : inv) v = cj(v);
            inv_sqrt_diag_h_ = c.upload(inv);
        }
    }
    if (Shadow) {
        wt_ = c.own_vector(), ql_ = c.own_vector(), qt_ = c.own_vector();
        ct_ = c.haloed_vector();
        if (jacobi_) zq_ = c.own_vector(), tz_ = c.own_vector();
    }
}

template <class S, bool Shadow>
std::size_t Qmr<S, Shadow>::backend_bytes() const {
    std::size_t sum = 0;
    for (const Buffer* b : {&vt_, &yq_, &ty_, &d_, &s_, &wt_, &zq_, &tz_, &ql_, &qt_, &ct_, &inv_sqrt_diag_,
                            &inv_sqrt_diag_h_})
        sum += b->bytes();
    return sum;
}

// ṽ = r0 = b, y = M1^-1 ṽ; p = d = s = 0 (their first update scales them by 0);
// the shadow w̃ = conj(b), as BiCG's r~: its Lanczos vectors are then QMR-SYM's, conjugated.
template <class S, bool Shadow>
void Qmr<S, Shadow>::restart(Context<S>& c) {
    const index_t n = c.rows();
    const StridedRegion all{{1, 1, n}, {0, 0, 1}, 0};
    const std::vector<S> zeros(static_cast<std::size_t>(n), S(0));
    c.backend_->copy_region(vt(), all, c.b(), all, sizeof(S));
    if (jacobi_) c.kernels_->scale(inv_sqrt_diag(), vt(), yq(), n);
    for (S* v : {c.p(), dq(), sq()}) c.backend_->copy_from_host(v, zeros.data(), c.bytes(n));
    if (Shadow) {
        c.kernels_->conjugate(c.b(), wt(), n);
        if (jacobi_) c.kernels_->scale(inv_sqrt_diag_h(), wt(), zq(), n);
        c.backend_->copy_from_host(ql(), zeros.data(), c.bytes(n));
    }
}

// At x = 0: ρ1 = ‖y‖ (ξ1 = ‖z‖), γ0 = 1, η0 = -1, θ0 = 0.
template <class S, bool Shadow>
void Qmr<S, Shadow>::start(Context<S>& c) {
    rho_ = std::sqrt(c.allreduce(c.local_norm2(yq())));
    xi_ = Shadow ? std::sqrt(c.allreduce(c.local_norm2(zq()))) : rho_;
    gamma_ = 1, theta_ = 0, eta_ = S(-1), eps_ = S(1);
    first_ = true;
}

template <class S, bool Shadow>
void Qmr<S, Shadow>::iterate(Context<S>& c) {
    const index_t n = c.rows();
    auto& k = *c.kernels_;
    if (!(rho_ > 0) || !(xi_ > 0) || !std::isfinite(rho_) || !std::isfinite(xi_)) {
        c.stop_ = true;
        return;
    }
    // v = ṽ/ρ, y = y/ρ (w = w̃/ξ, z = z/ξ)
    c.local([&] {
        c.timed(phase::update, [&] {
            k.scal(S(1 / rho_), vt(), n);
            if (jacobi_) k.scal(S(1 / rho_), yq(), n);
            if (Shadow) {
                k.scal(S(1 / xi_), wt(), n);
                if (jacobi_) k.scal(S(1 / xi_), zq(), n);
            }
        });
    });
    // δ = z^T y (qmr_sym: y^T y; qmr: z^H y)
    const S delta = c.allreduce(c.local([&] {
        return c.timed(phase::reduce, [&] {
            if (!Shadow) return k.dot(yq(), yq(), n);
            k.conjugate(zq(), ct(), n);
            return k.dot(ct(), yq(), n);
        });
    }));
    if (!finite(delta) || delta == S(0)) {
        c.stop_ = true;
        return;
    }
    // ỹ = M2^-1 y, p = ỹ - (ξδ/ε) p (z̃ = M1^-H z, q = z̃ - conj(ρδ/ε) q); the first: p = ỹ
    const S cp = first_ ? S(0) : -S(xi_) * delta / eps_, cq = first_ ? S(0) : -cj(S(rho_) * delta / eps_);
    c.local([&] {
        c.timed(phase::update, [&] {
            if (jacobi_) k.scale(inv_sqrt_diag(), yq(), ty(), n);
            k.xpay(ty(), cp, c.p(), n);
            if (Shadow) {
                if (jacobi_) k.scale(inv_sqrt_diag_h(), zq(), tz(), n);
                k.xpay(tz(), cq, ql(), n);
            }
        });
    });
    // p̃ = A p (in q); qmr: A^H q = conj(A conj(q)) (in qt)
    c.exchange(c.p_);
    c.local([&] { c.timed(phase::spmv, [&] { k.spmv(c.a_, static_cast<const S*>(c.p_.data()), c.q(), false); }); });
    if (Shadow) {
        c.local([&] { c.timed(phase::spmv, [&] { k.conjugate(ql(), ct(), n); }); });
        c.exchange(ct_);
        c.local([&] {
            c.timed(phase::spmv, [&] {
                k.spmv(c.a_, static_cast<const S*>(ct_.data()), qt(), false);
                k.conjugate(qt(), qt(), n);
            });
        });
    }
    // ε = q^T p̃ (qmr: q^H p̃ with conj(q) at hand), β = ε/δ
    const S eps = c.allreduce(c.local([&] {
        return c.timed(phase::reduce, [&] { return k.dot(Shadow ? ct() : c.p(), c.q(), n); });
    }));
    const S beta = eps / delta;
    if (!finite(beta) || beta == S(0)) {
        c.stop_ = true;
        return;
    }
    // ṽ = p̃ - β v, y = M1^-1 ṽ (w̃ = A^H q - conj(β) w, z = M2^-H w̃)
    c.local([&] {
        c.timed(phase::update, [&] {
            k.xpay(c.q(), -beta, vt(), n);
            if (jacobi_) k.scale(inv_sqrt_diag(), vt(), yq(), n);
            if (Shadow) {
                k.xpay(qt(), -cj(beta), wt(), n);
                if (jacobi_) k.scale(inv_sqrt_diag_h(), wt(), zq(), n);
            }
        });
    });
    const double rho = std::sqrt(c.allreduce(c.local_norm2(yq())));
    const double xi = Shadow ? std::sqrt(c.allreduce(c.local_norm2(zq()))) : rho;
    // The quasi-minimisation: θ = ρ'/(γ0 |β|), γ = 1/√(1+θ²), η = -η ρ γ²/(β γ0²)
    const double theta = rho / (gamma_ * std::abs(beta)), gamma = 1 / std::sqrt(1 + theta * theta);
    const S eta = -eta_ * S(rho_ * gamma * gamma) / (beta * S(gamma_ * gamma_));
    const double cc = (theta_ * gamma) * (theta_ * gamma);
    if (!std::isfinite(theta) || !(gamma > 0) || !finite(eta)) {
        c.stop_ = true;
        return;
    }
    // d = η p + (θ0 γ)² d, s = η p̃ + (θ0 γ)² s; x += d, r -= s
    c.local([&] {
        c.timed(phase::update, [&] {
            k.scal(S(cc), dq(), n);
            k.axpy(eta, c.p(), dq(), n);
            k.scal(S(cc), sq(), n);
            k.axpy(eta, c.q(), sq(), n);
            k.axpy(S(1), dq(), c.x(), n);
            k.axpy(S(-1), sq(), c.r(), n);
        });
    });
    rho_ = rho, xi_ = xi, gamma_ = gamma, theta_ = theta, eta_ = eta, eps_ = eps;
    first_ = false;
}

template <class S, bool Shadow>
std::vector<PhaseTraffic> Qmr<S, Shadow>::traffic(const Context<S>& c, std::size_t k) const {
    const std::size_t v = c.bytes(c.rows()), halo = halo_bytes(c);
    // One SpMV (qmr: two, A^H q = conj(A conj(q)): 2 conjugating passes of 2 streams) and halo exchange
    // each. Updates: scal ṽ (2), p = ỹ + c p (3), ṽ = p̃ - β ṽ (3), d and s: scal + axpy (5 each),
    // x += d, r -= s (3 each); Jacobi: scal y (2), ỹ = D^-1/2 y and y = D^-1/2 ṽ (3 each). Reduces:
    // δ = y^T y (1), ε = p^T p̃ (2), ‖y‖² (1). The shadow doubles the Lanczos side: scal w̃ (2), q (3),
    // w̃ (3), Jacobi 8 more; conj(z) for z^H y (2) and conj(q) (2, counted in the SpMV); δ reads 2, ε 2, ‖z‖² 1.
    const bool j = c.jacobi_;
    const std::size_t sides = Shadow ? 2 : 1;
    const std::size_t spmv = sides * spmv_bytes(c.format_, *c.host_) + (Shadow ? 4 * v : 0);
    const std::size_t up = 26 * v + (j ? 8 * v : 0) + (Shadow ? 8 * v + (j ? 8 * v : 0) : 0);
    const std::size_t red = (Shadow ? 2 + 2 + 2 + 1 + 1 : 4) * v;
    return {{0, sides * k * halo, sides * k * halo}, {k * spmv, 0, 0}, {k * up, 0, 0}, {k * red + sides * v, 0, 0}};
}

template class Qmr<complex, false>;
template class Qmr<complex, true>;

namespace {
const bool registered = register_variant<SolverT<complex>, Qmr<complex, true>>("qmr/none");
}

}  // namespace fftune::krylov
