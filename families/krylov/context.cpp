// The krylov solvers' shared context (context.hpp).
#include "families/krylov/context.hpp"

#include <memory>
#include <mutex>

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune::krylov {
namespace {

// A clock that records nothing: phases timed as part of an enclosing one.
struct NoClock final : PhaseClock {
    void start() override {}
    void stop() override {}
    double elapsed_ms() override { return 0; }
    void reset() override {}
};

}  // namespace

template <class S>
std::shared_ptr<const LocalMatrixT<S>> shared_assembly(const Slab& s, bool matrix) {
    static std::mutex mutex;
    static std::shared_ptr<const LocalMatrixT<S>> last;
    static bool last_matrix = false;
    auto same = [&](const Slab& a) {
        return a.nx == s.nx && a.ny == s.ny && a.nz == s.nz && a.z0 == s.z0 && a.z1 == s.z1 && a.below == s.below &&
               a.above == s.above && a.components == s.components;
    };
    std::lock_guard<std::mutex> lock(mutex);
    if (last && same(last->slab) && last_matrix == matrix) return last;
    last.reset();  // its memory back before the next one is built
    last = std::make_shared<const LocalMatrixT<S>>(OperatorOf<S>::assemble(s, matrix));
    last_matrix = matrix;
    return last;
}
template std::shared_ptr<const LocalMatrixT<double>> shared_assembly<double>(const Slab&, bool);
template std::shared_ptr<const LocalMatrixT<complex>> shared_assembly<complex>(const Slab&, bool);

template <class S>
void Context<S>::start(MPI_Comm comm) {
    comm_owned_ = Communicator::duplicate(comm);  // its own tags and collectives
    comm_ = comm_owned_.get();
    FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
    FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
}

template <class S>
void Context<S>::allocate(bool haloed_q) {
    haloed_q_ = haloed_q;
    backend_ = Registry<Backend>::instance().create(backend_name_);
    if (auto why = backend_->unavailable()) throw Unsupported(*why);
    kernels_ = Registry<KernelsT<S>>::instance().create(backend_name_);
    host_ = shared_assembly<S>(slab_of(n_, ranks_, rank_, OperatorOf<S>::components), format_ != Format::matrix_free);
    const Slab& s = host_->slab;
    if (format_ != Format::matrix_free && s.haloed() > std::numeric_limits<std::int32_t>::max())
        throw Unsupported(fmt::format("{} takes 32-bit column indices: {} haloed rows on a rank",
                                      format_names()[int(format_)], s.haloed()));
    a_.format = format_;
    a_.slab = s;
    if (format_ == Format::csr) {
        row_ptr_ = upload(host_->row_ptr);
        col_ = upload(host_->col);
        val_ = upload(host_->val);
    } else if (format_ == Format::cusparse_csr) {
        if (host_->nnz() > std::numeric_limits<std::int32_t>::max())
            throw Unsupported("cusparse_csr takes 32-bit indices: too many nonzeros on a rank");
        row_ptr_ = upload(std::vector<std::int32_t>(host_->row_ptr.begin(), host_->row_ptr.end()));
        col_ = upload(host_->col);
        val_ = upload(host_->val);
    } else if (format_ == Format::ell) {
        col_ = upload(host_->ell_col);
        val_ = upload(host_->ell_val);
        a_.ell_width = host_->ell_width;
    }
    a_.row_ptr = static_cast<const std::int64_t*>(row_ptr_.data());
    a_.row_ptr32 = static_cast<const std::int32_t*>(row_ptr_.data());
    a_.col = static_cast<const std::int32_t*>(col_.data());
    a_.val = static_cast<const S*>(val_.data());
    x_ = own_vector(), b_ = own_vector();
    q_ = haloed_q ? haloed_vector() : own_vector();
    if (jacobi_) {  // haloed: the folded SpMV scales r on the halo rows too (prepare() fills them)
        z_ = own_vector();
        std::vector<S> inv(static_cast<std::size_t>(s.haloed()), S(0));
        for (std::size_t i = 0; i < host_->diag.size(); ++i) inv[s.plane() + i] = S(1) / host_->diag[i];
        inv_diag_ = upload(inv);
    }
    // r is haloed too: the folded iteration exchanges r's halo instead of p's.
    p_ = haloed_vector(), r_ = haloed_vector();
    if (!haloed_q && q_.bytes() > 0 && q_.data()) {  // q starts 0 too
        const std::vector<S> zero(static_cast<std::size_t>(s.rows()), S(0));
        backend_->copy_from_host(q_.data(), zero.data(), q_.bytes());
    }
}

template <class S>
Buffer Context<S>::haloed_vector() {
    Buffer v(*backend_, bytes(host_->slab.haloed()));
    if (v.bytes() > 0 && v.data()) {
        const std::vector<S> zero(static_cast<std::size_t>(host_->slab.haloed()), S(0));
        backend_->copy_from_host(v.data(), zero.data(), v.bytes());
    }
    return v;
}

template <class S>
void Context<S>::bind() {
    if (backend_->device_memory())  // MPI reads host memory: the halo planes go through pinned buffers
        staging_ = Buffer(*backend_, 4 * bytes(host_->slab.plane()), true);
    kernels_->bind(*backend_, a_);
    timer_ = std::make_unique<PhaseTimer>(*backend_);
    for (const char* ph : {"halo", "spmv", "update", "reduce"}) timer_->phase(ph);
}

template <class S>
std::size_t Context<S>::backend_bytes() const {
    std::size_t sum = 0;
    for (const Buffer* b : {&row_ptr_, &col_, &val_, &x_, &r_, &q_, &b_, &z_, &inv_diag_, &p_}) sum += b->bytes();
    return sum;
}

template <class S>
void Context<S>::prepare(MPI_Comm comm) {
    all_or_none(comm, [&] {
        const Slab& s = host_->slab;
        std::vector<S> xs(static_cast<std::size_t>(s.haloed()), S(0)), b(static_cast<std::size_t>(s.rows()));
        for (index_t z = s.z0 - 1; z <= s.z1; ++z) {
            if (z < 0 || z >= s.nz) continue;
            for (index_t k = 0; k < s.plane(); ++k)
                xs[static_cast<std::size_t>((z - s.z0 + 1) * s.plane() + k)] = OperatorOf<S>::x_star(z * s.plane() + k);
        }
        OperatorOf<S>::apply(s, xs.data(), b.data());
        if (!b.empty()) backend_->copy_from_host(b_.data(), b.data(), bytes(s.rows()));
        backend_->synchronize();
    });
    if (jacobi_) {  // D^-1 on the halo rows: the neighbours' (the folded SpMV reads it there)
        exchange(inv_diag_);
        all_or_none(comm, [&] {
            rethrow();
            timer_->collect();  // not a step's halo time
        });
    }
}

template <class S>
void Context<S>::zero(Buffer& v) {
    const std::vector<S> zeros(v.bytes() / sizeof(S), S(0));
    if (v.bytes() > 0 && v.data()) backend_->copy_from_host(v.data(), zeros.data(), v.bytes());
}

// The haloed vectors whole: a restart in a step follows a stop whose NaN may sit in any halo row.
template <class S>
void Context<S>::restart() {
    const index_t n = rows();
    const StridedRegion all{{1, 1, n}, {0, 0, 1}, 0};
    for (Buffer* v : {&x_, &r_, &p_}) zero(*v);
    if (haloed_q_) zero(q_);
    backend_->copy_region(r(), all, b_.data(), all, sizeof(S));
    if (jacobi_) kernels_->scale(inv_diag(), r(), z(), n);
    backend_->copy_region(p(), all, z(), all, sizeof(S));
}

template <class S>
double Context<S>::local_norm2(const S* v) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (failed_) return nan;
    try {
        return kernels_->norm2(v, rows());
    } catch (...) {
        failed_ = std::current_exception();
        return nan;
    }
}

// The halo exchange through transport halo_ as two reshapes of the haloed
// vector, in (z, 1, plane) coordinates: "up" sends each rank's last plane into
// its upper neighbour's lower halo, "down" its first plane into the lower
// neighbour's upper halo. Before: the interior [z0, z1); after: the planes a
// rank holds, halos included ([z0 - 1, z1 + 1) within the domain). The moving
// boxes keep the self block empty: only halo planes move.
template <class S>
void Context<S>::build_halo(MPI_Comm comm) {
    all_or_none(comm, [&] {
        if (auto why = Redistribution::not_applicable(halo_, *backend_)) throw Unsupported(*why);
    });
    std::vector<Layout> interior, held;
    std::vector<Box3> last, first, lower, upper;
    for (int r = 0; r < ranks_; ++r) {
        const Slab s = slab_of(n_, ranks_, r, OperatorOf<S>::components);
        const index_t pl = s.plane(), below = s.below ? 1 : 0, above = s.above ? 1 : 0;
        auto planes = [&](index_t z0, index_t z1) { return Box3{{z0, 0, 0}, {z1, 1, pl}}; };
        interior.push_back({planes(s.z0, s.z1), order_xyz});
        held.push_back({planes(s.z0 - below, s.z1 + above), order_xyz});
        last.push_back(above ? planes(s.z1 - 1, s.z1) : Box3{});
        first.push_back(below ? planes(s.z0, s.z0 + 1) : Box3{});
        lower.push_back(below ? planes(s.z0 - 1, s.z0) : Box3{});
        upper.push_back(above ? planes(s.z1, s.z1 + 1) : Box3{});
    }
    // The family times the whole exchange as "halo": the reshapes' own
    // pack/exchange/unpack phases get clocks that record nothing (a backend
    // clock would add events to every exchange and, never collected, keep them all).
    all_or_none(comm, [&] {
        halo_timer_ = std::make_unique<PhaseTimer>(*backend_);
        for (const char* step : {"pack.", "exchange.", "unpack."})
            for (const char* k : {"0", "1"}) halo_timer_->phase(std::string(step) + k, std::make_unique<NoClock>());
    });
    up_ = std::make_unique<Redistribution>(comm, *backend_, halo_, 0, interior, held, sizeof(S), *halo_timer_, last, lower);
    down_ = std::make_unique<Redistribution>(comm, *backend_, halo_, 1, interior, held, sizeof(S), *halo_timer_, first, upper);
}

template <class S>
void Context<S>::exchange(Buffer& haloed) {
    PhaseScope scope(*timer_, phase::halo);
    const Slab& sl = host_->slab;
    const int plane = static_cast<int>(sl.plane());
    const std::size_t pb = bytes(sl.plane());
    S* ph = static_cast<S*>(haloed.data());
    S *first = ph + sl.plane(), *last = ph + sl.rows(), *lo = ph, *hi = ph + sl.rows() + sl.plane();
    if (!sl.below && !sl.above) return;  // one rank: nothing to exchange, no wait for the device
    if (up_) {  // through the transport: read from the interior, written into the halos
        S* dst = sl.below ? lo : first;  // the haloed layout's first plane
        up_->execute(first, dst);
        down_->execute(first, dst);
        return;
    }
    const int down = sl.below ? rank_ - 1 : MPI_PROC_NULL, up = sl.above ? rank_ + 1 : MPI_PROC_NULL;
    // Device memory: own planes out to pinned host buffers, the neighbours' back into the halos.
    S* st = static_cast<S*>(staging_.data());
    S *send_lo = st ? st : first, *send_hi = st ? st + sl.plane() : last;
    S *recv_lo = st ? st + 2 * sl.plane() : lo, *recv_hi = st ? st + 3 * sl.plane() : hi;
    local([&] {
        if (st) {
            if (sl.below) backend_->copy_to_host(send_lo, first, pb);
            if (sl.above) backend_->copy_to_host(send_hi, last, pb);
        }
        backend_->synchronize();
    });
    const MPI_Datatype t = mpi_type<S>();
    FFTUNE_MPI_CHECK(MPI_Sendrecv(send_lo, plane, t, down, 0, recv_hi, plane, t, up, 0, comm_, MPI_STATUS_IGNORE));
    FFTUNE_MPI_CHECK(MPI_Sendrecv(send_hi, plane, t, up, 1, recv_lo, plane, t, down, 1, comm_, MPI_STATUS_IGNORE));
    local([&] {
        if (st) {
            if (sl.below) backend_->copy_from_host(lo, recv_lo, pb);
            if (sl.above) backend_->copy_from_host(hi, recv_hi, pb);
        }
    });
}

template <class S>
double Context<S>::spmv_oracle_error(MPI_Comm comm) {
    double mine[3] = {0, 0, 0};  // max |spmv - oracle|, max |oracle|, not finite
    all_or_none(comm, [&] {
        const Slab& s = host_->slab;
        std::mt19937 rng(1234 + rank_);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<S> xh(static_cast<std::size_t>(s.haloed()), S(0)), want(static_cast<std::size_t>(s.rows()));
        for (index_t i = (s.below ? 0 : s.plane()); i < s.haloed() - (s.above ? 0 : s.plane()); ++i) {
            if constexpr (std::is_same_v<S, double>) xh[i] = u(rng);
            else xh[i] = S(u(rng), u(rng));
        }
        OperatorOf<S>::apply(s, xh.data(), want.data());
        Buffer in(*backend_, bytes(s.haloed())), out(*backend_, bytes(s.rows()));
        backend_->copy_from_host(in.data(), xh.data(), bytes(s.haloed()));
        kernels_->spmv(a_, static_cast<const S*>(in.data()), static_cast<S*>(out.data()), false);
        std::vector<S> got(want.size());
        if (!got.empty()) backend_->copy_to_host(got.data(), out.data(), bytes(s.rows()));
        backend_->synchronize();
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (!finite(got[i])) mine[2] = 1;
            mine[0] = std::max(mine[0], std::abs(got[i] - want[i]));
            mine[1] = std::max(mine[1], std::abs(want[i]));
        }
    });
    double mx[3];
    FFTUNE_MPI_CHECK(MPI_Allreduce(mine, mx, 3, MPI_DOUBLE, MPI_MAX, comm));
    return mx[2] > 0 ? std::numeric_limits<double>::quiet_NaN() : mx[0] / std::max(mx[1], 1e-300);
}

// p's own planes set to a function of the global row; its halos then must
// hold the neighbours' (0 where the domain ends).
template <class S>
double Context<S>::halo_error(MPI_Comm comm) {
    const Slab& s = host_->slab;
    const index_t plane = s.plane();
    auto value = [](index_t global) { return 1.0 + double(global % 9973); };
    all_or_none(comm, [&] {
        std::vector<S> own(static_cast<std::size_t>(s.rows()));
        for (index_t i = 0; i < s.rows(); ++i) own[i] = S(value(s.z0 * plane + i));
        if (!own.empty()) backend_->copy_from_host(p(), own.data(), bytes(s.rows()));
        backend_->synchronize();
    });
    exchange(p_);
    rethrow();
    double err = 0;
    all_or_none(comm, [&] {
        std::vector<S> all(static_cast<std::size_t>(s.haloed()));
        backend_->copy_to_host(all.data(), p_.data(), bytes(s.haloed()));
        backend_->synchronize();
        for (index_t k = 0; k < plane; ++k) {
            const S lo = S(s.below ? value((s.z0 - 1) * plane + k) : 0.0);
            const S hi = S(s.above ? value(s.z1 * plane + k) : 0.0);
            err = std::max({err, std::abs(all[k] - lo), std::abs(all[s.rows() + plane + k] - hi)});
        }
    });
    double worst = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
    return worst;
}

// b − A x with x through p's haloed buffer; q = A x − b.
template <class S>
double Context<S>::true_residual2(MPI_Comm comm) {
    const Slab& s = host_->slab;
    all_or_none(comm, [&] {
        backend_->copy_region(p_.data(), {{1, 1, s.rows()}, {0, 0, 1}, s.plane()}, x_.data(), {{1, 1, s.rows()}, {0, 0, 1}, 0},
                              sizeof(S));
    });
    exchange(p_);
    local([&] {
        kernels_->spmv(a_, static_cast<const S*>(p_.data()), q(), false);
        kernels_->axpy(S(-1), b(), q(), rows());
    });
    return allreduce(local_norm2(q()));
}

template <class S>
std::pair<double, double> Context<S>::solution_error2(MPI_Comm comm) {
    const Slab& s = host_->slab;
    double err[2] = {0, 0};
    all_or_none(comm, [&] {
        std::vector<S> x(static_cast<std::size_t>(s.rows()));
        if (!x.empty()) backend_->copy_to_host(x.data(), x_.data(), bytes(s.rows()));
        backend_->synchronize();
        for (index_t i = 0; i < s.rows(); ++i) {
            const S want = OperatorOf<S>::x_star(s.z0 * s.plane() + i);
            err[0] += std::norm(x[i] - want);
            err[1] += std::norm(want);
        }
    });
    double sum[2];
    FFTUNE_MPI_CHECK(MPI_Allreduce(err, sum, 2, MPI_DOUBLE, MPI_SUM, comm));
    return {sum[0], sum[1]};
}

template <class S>
double Context<S>::copy_gbps() {
    const Slab& s = host_->slab;
    if (s.rows() == 0) return 0;
    auto clock = backend_->make_clock();
    const StridedRegion all{{1, 1, s.rows()}, {0, 0, 1}, 0};
    backend_->copy_region(q_.data(), all, b_.data(), all, sizeof(S));  // warm
    clock->reset();
    clock->start();
    for (int k = 0; k < 10; ++k) backend_->copy_region(q_.data(), all, b_.data(), all, sizeof(S));
    clock->stop();
    return 10 * 2 * double(bytes(s.rows())) / (clock->elapsed_ms() * 1e6);
}

template class Context<double>;
template class Context<complex>;

}  // namespace fftune::krylov
