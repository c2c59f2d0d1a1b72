// CG in one pass per iteration (cg.hpp); registers cg/one_pass.
#include "families/krylov/cg.hpp"

namespace fftune::krylov {

template <class S>
void CgOnePass<S>::setup(Context<S>& c) {
    p_next_ = c.haloed_vector(), r_next_ = c.haloed_vector(), q_next_ = c.haloed_vector();
    p_prev_ = c.haloed_vector();
    sums_ = Buffer(*c.backend_, one_pass_sum_count<S>(true) * sizeof(double));
    scalars_ = Buffer(*c.backend_, sizeof(OnePassScalars<S>));
}

template <class S>
std::size_t CgOnePass<S>::backend_bytes() const {
    std::size_t sum = 0;
    for (const Buffer* b : {&r_next_, &q_next_, &p_next_, &p_prev_, &sums_, &scalars_}) sum += b->bytes();
    return sum;
}

// The first pass takes r − 0 q and 0 p: α = β = 0. Every haloed vector 0 (q is the context's).
template <class S>
void CgOnePass<S>::restart(Context<S>& c) {
    for (Buffer* v : {&r_next_, &q_next_, &p_next_, &p_prev_}) c.zero(*v);
    const OnePassScalars<S> none;
    c.backend_->copy_from_host(scalars_.data(), &none, sizeof(none));
}

template <class S>
void CgOnePass<S>::start(Context<S>&) {
    alpha_prev_ = alpha_prev2_ = S(0);
    iteration_ = owed_ = 0;
}

// The scalars, from backend memory (a wait; NaN after a failure on this rank).
template <class S>
OnePassScalars<S> CgOnePass<S>::scalars(Context<S>& c) {
    OnePassScalars<S> sc;
    sc.rr = std::numeric_limits<double>::quiet_NaN();
    c.local([&] {
        c.backend_->copy_to_host(&sc, scalars_.data(), sizeof(sc));
        c.backend_->synchronize();
    });
    return sc;
}

// r lags: ‖r − αq‖² from the sums.
template <class S>
double CgOnePass<S>::residual2(Context<S>& c) {
    const OnePassScalars<S> sc = scalars(c);
    c.stop_ = sc.broken > 0 || !std::isfinite(sc.rr);
    return sc.rr;
}

// halo(q) (r's at the first); the pass; then the next α, β from the sums added
// over the ranks. At one rank nothing waits for the host between iterations.
template <class S>
void CgOnePass<S>::iterate(Context<S>& c) {
    c.exchange(iteration_ == 0 ? c.r_ : c.q_);  // r and p follow on the halo rows from the pass before
    const bool add_x = owed_ == 2;              // x += α p + α2 p_prev
    const bool norms = c.jacobi_ || !std::is_same_v<S, double>;
    double* sums = static_cast<double*>(sums_.data());
    auto* sc = static_cast<OnePassScalars<S>*>(scalars_.data());
    c.local([&] {
        c.timed(phase::spmv, [&] {
            c.kernels_->spmv_one_pass(c.a_, sc, static_cast<const S*>(c.r_.data()), static_cast<const S*>(c.q_.data()),
                                      static_cast<const S*>(c.p_.data()), c.inv_diag_haloed(),
                                      static_cast<S*>(r_next_.data()), static_cast<S*>(q_next_.data()),
                                      static_cast<S*>(p_next_.data()), add_x ? c.x() : nullptr,
                                      static_cast<const S*>(p_prev_.data()), sums);
        });
    });
    if (add_x) owed_ = 0;
    ++owed_;  // α p' from this pass
    std::swap(c.r_, r_next_), std::swap(c.q_, q_next_);
    std::swap(p_prev_, c.p_), std::swap(c.p_, p_next_);  // (p_prev, p, p_next) ← (p, p_next, p_prev)
    if (c.ranks_ > 1) {  // the sums over every rank, through the host (one rank: they are the sums)
        std::vector<double> h(static_cast<std::size_t>(one_pass_sum_count<S>(norms)),
                              std::numeric_limits<double>::quiet_NaN());  // this rank failed: NaN stops every rank
        c.local([&] {
            c.backend_->copy_to_host(h.data(), sums, h.size() * sizeof(double));
            c.backend_->synchronize();
        });
        {
            PhaseScope ph(*c.timer_, phase::reduce);
            FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, h.data(), static_cast<int>(h.size()), MPI_DOUBLE, MPI_SUM, c.comm_));
        }
        c.local([&] { c.backend_->copy_from_host(sums, h.data(), h.size() * sizeof(double)); });
    }
    c.local([&] { c.timed(phase::reduce, [&] { c.kernels_->one_pass_scalars(sums, norms, iteration_, sc); }); });
    ++iteration_;
}

// x's owed directions (α p, and α2 p_prev) and r −= α q, the scalars read back.
template <class S>
void CgOnePass<S>::catch_up(Context<S>& c) {
    const OnePassScalars<S> sc = scalars(c);
    alpha_prev_ = sc.alpha, alpha_prev2_ = sc.alpha2;
    c.local([&] {
        c.timed(phase::update, [&] {
            if (owed_ > 0) c.kernels_->axpy(alpha_prev_, c.p(), c.x(), c.rows());
            if (owed_ == 2)
                c.kernels_->axpy(alpha_prev2_, static_cast<S*>(p_prev_.data()) + c.slab().plane(), c.x(), c.rows());
            c.kernels_->axpy(-alpha_prev_, c.q(), c.r(), c.rows());
        });
    });
    alpha_prev_ = alpha_prev2_ = S(0);
    owed_ = 0;
}

template <class S>
std::vector<PhaseTraffic> CgOnePass<S>::traffic(const Context<S>& c, std::size_t k) const {
    const std::size_t v = c.bytes(c.rows()), halo = halo_bytes(c), vh = c.bytes(c.slab().haloed());
    // The pass: the matrix; r, q, p (and D^-1) read and r_next, p_next written on every haloed row,
    // q_next written on the own rows (spmv_bytes counts x and y once); every other pass from the
    // third, x read and written (2; the older direction reconstructed from p and r, read (+1) only
    // where |β| < one_pass_reconstruct_beta). Update: once per step what x and r still owe:
    // x += αp (+ α'p' when the step's count is even), r -= αq. Reduce: none.
    const std::size_t spmv = spmv_bytes(c.format_, *c.host_) - 2 * v + (c.jacobi_ ? 6 : 5) * vh + v;
    const std::size_t x_passes = k > 0 ? (k - 1) / 2 : 0, owed = k == 0 ? 0 : k % 2 == 1 ? 1 : 2;
    const std::size_t up = owed * 3 * v + 3 * v;  // one axpy per owed direction, one for r
    return {{0, k * halo, k * halo}, {k * spmv + x_passes * 2 * v, 0, 0}, {up, 0, 0}, {0, 0, 0}};
}

template class CgOnePass<double>;
template class CgOnePass<complex>;

namespace {
const bool registered = register_variant<SolverT<double>, CgOnePass<double>>("cg/one_pass");
}

}  // namespace fftune::krylov
