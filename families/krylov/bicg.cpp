// Preconditioned BiCG (README.md) for general complex operators, unfused: the
// shadow system r~, p~ with A^H p~ = conj(A conj(p~)), so two SpMVs and two
// halo exchanges per iteration. With r~0 = conj(b) on a complex symmetric
// operator its iterates are COCG's. Registers bicg/none.
#include "families/krylov/solver.hpp"

namespace fftune::krylov {
namespace {

template <class S>
class Bicg final : public SolverT<S> {
public:
    // r~, q~, p~ and conj(p~) (haloed), D^-H and z~
    void setup(Context<S>& c) override {
        rt_ = c.own_vector(), qt_ = c.own_vector();
        pt_ = Buffer(*c.backend_, c.bytes(c.slab().haloed())), ct_ = c.haloed_vector();
        if (c.jacobi_) {
            zt_ = c.own_vector();
            std::vector<S> inv(c.host_->diag.size());
            for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = cj(S(1) / c.host_->diag[i]);
            inv_diag_h_ = c.upload(inv);
        }
    }
    std::size_t backend_bytes() const override {
        return rt_.bytes() + qt_.bytes() + pt_.bytes() + ct_.bytes() + zt_.bytes() + inv_diag_h_.bytes();
    }
    // r~ = conj(b), z~ = D^-H r~, p~ = z~
    void restart(Context<S>& c) override {
        const index_t n = c.rows();
        c.kernels_->conjugate(c.b(), rt(), n);
        if (c.jacobi_) c.kernels_->scale(inv_diag_h(), rt(), zt(c), n);
        const StridedRegion all{{1, 1, n}, {0, 0, 1}, 0};
        c.backend_->copy_region(pt(c), all, zt(c), all, sizeof(S));
    }
    void start(Context<S>& c) override { rz_ = c.allreduce(rho_local(c)); }
    void iterate(Context<S>& c) override;
    std::vector<PhaseTraffic> traffic(const Context<S>& c, std::size_t k) const override {
        const std::size_t v = c.bytes(c.rows()), halo = halo_bytes(c);
        // Two SpMVs (A p; A^H p~ = conj(A conj(p~)): 2 conjugating passes of 2 streams), two halo
        // exchanges; updates x, r, r~ (9), D^-1 r and D^-H r~ (6), p and p~ (6); reduces (p~, q) and
        // (r~, z) after conjugating r~ (6).
        const std::size_t spmv = 2 * spmv_bytes(c.format_, *c.host_) + 4 * v;
        const std::size_t up = 9 * v + (c.jacobi_ ? 6 * v : 0) + 6 * v;
        return {{0, 2 * k * halo, 2 * k * halo}, {k * spmv, 0, 0}, {k * up, 0, 0}, {k * 6 * v + 4 * v, 0, 0}};
    }

private:
    S* rt() { return static_cast<S*>(rt_.data()); }
    S* zt(Context<S>& c) { return c.jacobi_ ? static_cast<S*>(zt_.data()) : rt(); }
    S* qt() { return static_cast<S*>(qt_.data()); }
    S* pt(Context<S>& c) { return static_cast<S*>(pt_.data()) + c.slab().plane(); }
    S* ct(Context<S>& c) { return static_cast<S*>(ct_.data()) + c.slab().plane(); }
    const S* inv_diag_h() { return static_cast<const S*>(inv_diag_h_.data()); }
    // ρ = (r~)^H z, rank-locally (timed as reduce).
    S rho_local(Context<S>& c) {
        return c.local([&] {
            return c.timed(phase::reduce, [&] {
                c.kernels_->conjugate(rt(), ct(c), c.rows());
                return c.kernels_->dot(ct(c), c.z(), c.rows());
            });
        });
    }

    Buffer rt_, qt_, pt_, ct_, zt_, inv_diag_h_;
    S rz_ = 0;
};

template <class S>
void Bicg<S>::iterate(Context<S>& c) {
    const index_t n = c.rows();
    auto& k = *c.kernels_;
    // q = A p, q~ = A^H p~
    c.exchange(c.p_);
    c.local([&] { c.timed(phase::spmv, [&] { k.spmv(c.a_, static_cast<const S*>(c.p_.data()), c.q(), false); }); });
    c.local([&] { c.timed(phase::spmv, [&] { k.conjugate(pt(c), ct(c), n); }); });
    c.exchange(ct_);
    c.local([&] {
        c.timed(phase::spmv, [&] {
            k.spmv(c.a_, static_cast<const S*>(ct_.data()), qt(), false);  // A conj(p~)
            k.conjugate(qt(), qt(), n);                                     // q~ = A^H p~
        });
    });
    // α = ρ/(p~^H q); x += αp, r -= αq, r~ -= conj(α) q~, z = D^-1 r, z~ = D^-H r~
    const S sigma = c.allreduce(c.local([&] { return c.timed(phase::reduce, [&] { return k.dot(ct(c), c.q(), n); }); }));
    if (!finite(sigma) || sigma == S(0)) {
        c.stop_ = true;
        return;
    }
    const S alpha = rz_ / sigma;
    c.local([&] {
        c.timed(phase::update, [&] {
            k.axpy(alpha, c.p(), c.x(), n);
            k.axpy(-alpha, c.q(), c.r(), n);
            k.axpy(-cj(alpha), qt(), rt(), n);
            if (c.jacobi_) {
                k.scale(c.inv_diag(), c.r(), c.z(), n);
                k.scale(inv_diag_h(), rt(), zt(c), n);
            }
        });
    });
    // β = ρ'/ρ; p = z + βp, p~ = z~ + conj(β) p~
    const S rho = c.allreduce(rho_local(c));
    if (!finite(rho)) {
        c.stop_ = true;
        return;
    }
    const S beta = rho / rz_;
    rz_ = rho;
    c.local([&] {
        c.timed(phase::update, [&] {
            k.xpay(c.z(), beta, c.p(), n);
            k.xpay(zt(c), cj(beta), pt(c), n);
        });
    });
}

const bool registered = register_variant<SolverT<complex>, Bicg<complex>>("bicg/none");

}  // namespace
}  // namespace fftune::krylov
