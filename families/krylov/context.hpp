// What every Krylov solver of the family shares (solver.hpp): a rank's
// operator and vectors in backend memory, the halo exchange (MPI sendrecv or
// an engine transport), the reductions over the ranks, the phase timer, and a
// rank-local failure carried to the next collective (local()).
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "core/engine/redistribution.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/phase_timer.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune::krylov {

// The phases a step is timed in (Context::setup names them in this order).
namespace phase {
constexpr int halo = 0, spmv = 1, update = 2, reduce = 3;
}

// The operator a scalar type solves (one each for now): its assembly, its
// oracle, its manufactured solution and a bound on its condition number
// (for the error check: ‖x − x*‖/‖x*‖ ≤ cond · residual).
template <class S>
struct OperatorOf;
template <>
struct OperatorOf<double> {
    static constexpr int components = 1;
    static LocalMatrix assemble(const Slab& s, bool matrix) { return assemble_poisson7(s, matrix); }
    static void apply(const Slab& s, const double* x, double* y) { poisson7_reference(s, x, y); }
    static double x_star(index_t g) { return manufactured(g); }
    // Exactly: the eigenvalues are Σ_a 4 sin²(π j_a / (2(n_a + 1))), j_a = 1..n_a.
    static double cond(const std::array<index_t, 3>& n) {
        const double pi = 3.141592653589793;
        double lo = 0, hi = 0;
        for (index_t m : n) {
            const double t = pi / (2 * double(m + 1));
            lo += 4 * std::sin(t) * std::sin(t), hi += 4 * std::cos(t) * std::cos(t);
        }
        return hi / lo;
    }
};
template <>
struct OperatorOf<complex> {
    static constexpr int components = 3;
    static LocalMatrixT<complex> assemble(const Slab& s, bool) { return assemble_curlcurl13(s); }
    static void apply(const Slab& s, const complex* x, complex* y) { curlcurl13_reference(s, x, y); }
    static complex x_star(index_t g) { return manufactured_complex(g); }
    // |eigenvalues| between the smallest σ term (0.1) and 24 + 1: a heuristic for
    // a matrix that is not normal (README.md).
    static double cond(const std::array<index_t, 3>&) { return 1e3; }
};

inline bool finite(double v) { return std::isfinite(v); }
inline bool finite(const complex& v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
template <class S>
S cj(S v) {
    if constexpr (std::is_same_v<S, double>) return v;
    else return std::conj(v);
}

// The operator's rows of a rank (OperatorOf<S>::assemble), kept for the next
// call with the same slab: a sweep's formats, fusions and solvers of one
// problem assemble it once, not per point (1.5-2.9 s of a 256^3 point's
// set-up on a GPU node's host). Holds the last one (host memory: its CSR and
// ELL arrays).
template <class S>
std::shared_ptr<const LocalMatrixT<S>> shared_assembly(const Slab& s, bool matrix);

// A rank's share of one solve. The solvers read and swap its vectors directly:
// r_, p_ (and q_ where haloed_q) carry one halo plane each side, x_, b_, z_ not.
template <class S>
class Context {
public:
    // `n`: the grid {nx, ny, nz} (operator.hpp).
    Context(const std::array<index_t, 3>& n, Format format, bool jacobi, std::string halo, std::string backend)
        : n_(n), format_(format), jacobi_(jacobi), halo_(std::move(halo)), backend_name_(std::move(backend)) {}

    // The operator and the shared vectors; `more` (a solver's own vectors) inside
    // the same all-or-none; `haloed_q`: q gets halo planes (one_pass reads q there).
    template <class F>
    void setup(MPI_Comm comm, bool haloed_q, F&& more) {
        start(comm);
        all_or_none(comm, [&] {
            allocate(haloed_q);
            more();
            bind();
        });
        if (halo_ != "sendrecv" && ranks_ > 1) build_halo(comm_);
    }
    // b = A x* (x* is known on the halo planes too); Jacobi: D^-1's halo rows.
    void prepare(MPI_Comm comm);
    // x = 0, r = b, z = D^-1 r, p = z (halo rows 0), for own rows > 0 (no wait: the solver's restart follows).
    void restart();
    // v = 0, every byte (a haloed vector's halo rows too).
    void zero(Buffer& v);

    static std::size_t bytes(index_t n) { return static_cast<std::size_t>(n) * sizeof(S); }
    index_t rows() const { return host_->slab.rows(); }
    const Slab& slab() const { return host_->slab; }
    S* x() { return static_cast<S*>(x_.data()); }
    S* r() { return static_cast<S*>(r_.data()) + host_->slab.plane(); }
    S* z() { return jacobi_ ? static_cast<S*>(z_.data()) : r(); }
    S* q() { return static_cast<S*>(q_.data()) + (haloed_q_ ? host_->slab.plane() : 0); }
    const S* b() { return static_cast<const S*>(b_.data()); }
    S* p() { return static_cast<S*>(p_.data()) + host_->slab.plane(); }
    // D^-1 on the own rows (null without Jacobi), and haloed.
    const S* inv_diag() { return jacobi_ ? static_cast<const S*>(inv_diag_.data()) + host_->slab.plane() : nullptr; }
    const S* inv_diag_haloed() { return jacobi_ ? static_cast<const S*>(inv_diag_.data()) : nullptr; }
    // A solver's vectors: the own rows (not set), or the haloed rows set to 0 (halos outside the domain stay 0).
    Buffer own_vector() { return Buffer(*backend_, bytes(rows())); }
    Buffer haloed_vector();
    template <class T>
    Buffer upload(const std::vector<T>& v) {
        Buffer b(*backend_, v.size() * sizeof(T));
        if (!v.empty()) backend_->copy_from_host(b.data(), v.data(), v.size() * sizeof(T));
        return b;
    }
    // The shared vectors' and the operator's bytes in backend memory.
    std::size_t backend_bytes() const;

    template <class F>
    std::invoke_result_t<F> timed(int ph, F f) {
        PhaseScope s(*timer_, ph);
        return f();
    }
    // Rank-local work: after a failure on this rank, skipped, NaN in its place.
    template <class F>
    S local(F&& f) {
        const S nan = S(std::numeric_limits<double>::quiet_NaN());
        if (failed_) return nan;
        try {
            if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
                f();
                return S(0);
            } else {
                return f();
            }
        } catch (...) {
            failed_ = std::current_exception();
            return nan;
        }
    }
    double local_norm2(const S* v);
    // The sum over the ranks (timed as reduce).
    template <class T>
    T allreduce(T local) {
        T sum = 0;
        PhaseScope s(*timer_, phase::reduce);
        FFTUNE_MPI_CHECK(MPI_Allreduce(&local, &sum, 1, mpi_type<T>(), MPI_SUM, comm_));
        return sum;
    }
    // A haloed vector's own first and last planes to the neighbours, theirs into its halos.
    void exchange(Buffer& haloed);
    void rethrow() {
        if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    }

    // Checks (validate): the format's SpMV against the oracle on a random vector
    // (max |spmv − oracle| / max |oracle|, NaN where not finite); the exchange
    // (largest error of p's halos over every rank); ‖A x − b‖² (through p and q).
    double spmv_oracle_error(MPI_Comm comm);
    double halo_error(MPI_Comm comm);
    double true_residual2(MPI_Comm comm);
    // ‖x − x*‖² and ‖x*‖², summed over the ranks.
    std::pair<double, double> solution_error2(MPI_Comm comm);
    // The device's copy rate on this rank's vectors (read + write), GB/s.
    double copy_gbps();

    std::array<index_t, 3> n_;
    Format format_;
    bool jacobi_;
    std::string halo_;  // sendrecv or a transport's name
    std::string backend_name_;
    bool haloed_q_ = false;
    Communicator comm_owned_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    int ranks_ = 1, rank_ = 0;
    std::exception_ptr failed_;  // this rank's failure inside a solve (local())
    bool stop_ = false;          // every rank: the solve ended early
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<KernelsT<S>> kernels_;
    std::unique_ptr<PhaseTimer> timer_;
    std::unique_ptr<PhaseTimer> halo_timer_;
    std::unique_ptr<Redistribution> up_, down_;  // the halo through a transport (build_halo)
    std::shared_ptr<const LocalMatrixT<S>> host_;  // shared_assembly: one per slab, across points
    DeviceMatrixT<S> a_;
    Buffer row_ptr_, col_, val_, x_, r_, z_, q_, b_, inv_diag_, p_, staging_;

private:
    template <class T>
    static MPI_Datatype mpi_type() {
        return std::is_same_v<T, double> ? MPI_DOUBLE : MPI_C_DOUBLE_COMPLEX;
    }
    void start(MPI_Comm comm);
    void allocate(bool haloed_q);
    void bind();
    void build_halo(MPI_Comm comm);
};

extern template class Context<double>;
extern template class Context<complex>;

}  // namespace fftune::krylov
