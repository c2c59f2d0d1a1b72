// The krylov family (README.md beside this file): CG on the 7-point Poisson
// operator (Commer et al.), every storage format x fusion x preconditioner,
// z-slabs over the ranks with a halo exchange before each SpMV. A timed step
// is a fixed number of iterations from x = 0; validation solves to a relative
// residual of 1e-8 and recomputes the true one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <exception>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/engine/redistribution.hpp"
#include "core/engine/transport.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/run/family.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune::krylov {
namespace {

using json = nlohmann::json;

// Each operator: the solvers written for it (cg: real SPD; cocg: complex
// symmetric, CG with unconjugated dots; bicg: general BiCG with its shadow
// system, two SpMVs; qmr: general QMR (Freund and Nachtigal) on the two-sided
// Lanczos process, two SpMVs; qmr_sym: QMR on the symmetric Lanczos process
// of a complex symmetric operator (Freund), one SpMV) and the precision of its values.
struct OperatorInfo {
    std::string name;
    std::vector<std::string> solvers;
    std::string precision;
    bool takes(const std::string& solver) const {
        return std::find(solvers.begin(), solvers.end(), solver) != solvers.end();
    }
};
const std::vector<OperatorInfo> operator_info{{"poisson7", {"cg"}, "double"},
                                              {"curlcurl13", {"cocg", "bicg", "qmr", "qmr_sym"}, "complex_double"}};
const std::vector<std::string> solvers{"cg", "cocg", "bicg", "qmr", "qmr_sym"};
const std::vector<std::string> operators{"poisson7", "curlcurl13"};
const OperatorInfo& info_of(const std::string& op) {
    for (const auto& i : operator_info)
        if (i.name == op) return i;
    throw std::invalid_argument("unknown operator '" + op + "'");
}
const std::vector<std::string> fusions{"none", "fused", "folded", "one_pass"};
// A clock that records nothing: phases timed as part of an enclosing one.
struct NoClock final : PhaseClock {
    void start() override {}
    void stop() override {}
    double elapsed_ms() override { return 0; }
    void reset() override {}
};
// The halo exchange: `sendrecv` (MPI point-to-point with each neighbour, the
// family's own) or a registered transport of the engine, which moves the
// planes as two reshapes (KrylovWorkload::build_halo).
std::vector<std::string> halo_names() {
    std::vector<std::string> out{"sendrecv"};
    for (const auto& t : Registry<Transport>::instance().names()) out.push_back(t);
    return out;
}
const std::vector<std::string> preconditioners{"none", "jacobi"};
constexpr double target_residual = 1e-8;

struct KrylovAxes : FamilyAxes {
    std::vector<index_t> sizes;
    std::vector<std::string> operators, solvers, formats, fusions, preconditioners, backends, halos;
    int iterations = 1000;
};

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
    static double cond(index_t n) { return 0.5 * double(n + 1) * double(n + 1); }  // λmax < 12, λmin > 3π²/(n+1)²
};
template <>
struct OperatorOf<complex> {
    static constexpr int components = 3;
    static LocalMatrixT<complex> assemble(const Slab& s, bool) { return assemble_curlcurl13(s); }
    static void apply(const Slab& s, const complex* x, complex* y) { curlcurl13_reference(s, x, y); }
    static complex x_star(index_t g) { return manufactured_complex(g); }
    // |eigenvalues| between the smallest σ term (0.1) and 24 + 1: a heuristic for
    // a matrix that is not normal (README.md).
    static double cond(index_t) { return 1e3; }
};

bool finite(double v) { return std::isfinite(v); }
bool finite(const complex& v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
template <class T>
MPI_Datatype mpi_type() {
    return std::is_same_v<T, double> ? MPI_DOUBLE : MPI_C_DOUBLE_COMPLEX;
}

template <class S>
class KrylovWorkload final : public Workload {
public:
    explicit KrylovWorkload(const Point& pt)
        : n_(pt.problem.at("size")[0].get<index_t>()),
          iterations_(pt.problem.at("iterations")[0].get<int>()),
          format_(parse_format(pt.config.at("format").get<std::string>())),
          fused_(pt.config.at("fusion") == "fused"),
          folded_(pt.config.at("fusion") == "folded"),
          one_pass_(pt.config.at("fusion") == "one_pass"),
          jacobi_(pt.config.at("preconditioner") == "jacobi"),
          bicg_(pt.config.at("solver") == "bicg"),
          qmr_(pt.config.at("solver") == "qmr" || pt.config.at("solver") == "qmr_sym"),
          shadow_(pt.config.at("solver") == "qmr"),
          solver_(pt.config.at("solver").get<std::string>()),
          halo_(pt.config.value("halo", "sendrecv")),
          backend_name_(pt.backend()) {}

    void setup(MPI_Comm comm) override {
        comm_owned_ = Communicator::duplicate(comm);  // its own tags and collectives
        comm_ = comm_owned_.get();
        FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
        FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
        all_or_none(comm, [&] {
            backend_ = Registry<Backend>::instance().create(backend_name_);
            if (auto why = backend_->unavailable()) throw Unsupported(*why);
            kernels_ = Registry<KernelsT<S>>::instance().create(backend_name_);
            host_ = OperatorOf<S>::assemble(slab_of(n_, ranks_, rank_, OperatorOf<S>::components),
                                            format_ != Format::matrix_free);
            const Slab& s = host_.slab;
            if (format_ != Format::matrix_free && s.haloed() > std::numeric_limits<std::int32_t>::max())
                throw Unsupported(fmt::format("{} takes 32-bit column indices: {} haloed rows on a rank",
                                              format_names()[int(format_)], s.haloed()));
            a_.format = format_;
            a_.slab = s;
            if (format_ == Format::csr) {
                row_ptr_ = upload(host_.row_ptr);
                col_ = upload(host_.col);
                val_ = upload(host_.val);
            } else if (format_ == Format::cusparse_csr) {
                if (host_.nnz() > std::numeric_limits<std::int32_t>::max())
                    throw Unsupported("cusparse_csr takes 32-bit indices: too many nonzeros on a rank");
                row_ptr_ = upload(std::vector<std::int32_t>(host_.row_ptr.begin(), host_.row_ptr.end()));
                col_ = upload(host_.col);
                val_ = upload(host_.val);
            } else if (format_ == Format::ell) {
                col_ = upload(host_.ell_col);
                val_ = upload(host_.ell_val);
                a_.ell_width = host_.ell_width;
            }
            a_.row_ptr = static_cast<const std::int64_t*>(row_ptr_.data());
            a_.row_ptr32 = static_cast<const std::int32_t*>(row_ptr_.data());
            a_.col = static_cast<const std::int32_t*>(col_.data());
            a_.val = static_cast<const S*>(val_.data());
            const std::size_t rows = bytes(s.rows()), haloed = bytes(s.haloed());
            for (Buffer* v : {&x_, &b_}) *v = Buffer(*backend_, rows);
            q_ = Buffer(*backend_, one_pass_ ? haloed : rows);  // one_pass: the next pass reads q at the neighbours
            std::vector<S> zeros(static_cast<std::size_t>(s.haloed()), S(0));
            if (jacobi_) {  // haloed: the folded SpMV scales r on the halo rows too (prepare() fills them)
                z_ = Buffer(*backend_, rows);
                std::vector<S> inv(zeros);
                for (std::size_t i = 0; i < host_.diag.size(); ++i) inv[s.plane() + i] = S(1) / host_.diag[i];
                inv_diag_ = upload(inv);
            }
            // r is haloed too: the folded iteration exchanges r's halo instead of p's.
            for (Buffer* v : {&p_, &r_}) *v = Buffer(*backend_, haloed);
            if (folded_ || one_pass_) p_next_ = Buffer(*backend_, haloed);
            if (one_pass_) {  // r, q double-buffered, p triple-buffered (x adds two directions every other pass)
                r_next_ = Buffer(*backend_, haloed), q_next_ = Buffer(*backend_, haloed);
                p_prev_ = Buffer(*backend_, haloed);
                sums_ = Buffer(*backend_, one_pass_sum_count<S>(true) * sizeof(double));
                scalars_ = Buffer(*backend_, sizeof(OnePassScalars<S>));
            }
            for (Buffer* v : {&p_, &r_, &p_next_, &r_next_, &q_, &q_next_, &p_prev_})  // halos outside the domain stay 0
                if (v->bytes() > 0 && v->data()) backend_->copy_from_host(v->data(), zeros.data(), v->bytes());
            if (bicg_) {  // the shadow system: r~, q~, p~ and conj(p~) (haloed), D^-H and z~
                rt_ = Buffer(*backend_, rows), qt_ = Buffer(*backend_, rows);
                pt_ = Buffer(*backend_, haloed), ct_ = Buffer(*backend_, haloed);
                if (haloed > 0) backend_->copy_from_host(ct_.data(), zeros.data(), haloed);
                if (jacobi_) {
                    zt_ = Buffer(*backend_, rows);
                    std::vector<S> inv(host_.diag.size());
                    for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = cj(S(1) / host_.diag[i]);
                    inv_diag_h_ = upload(inv);
                }
            }
            if (qmr_) {  // ṽ, y, ỹ; d, s; with the shadow: w̃, z, z̃, A^H q, conj(q) (haloed), q
                vt_ = Buffer(*backend_, rows), d_ = Buffer(*backend_, rows), s_ = Buffer(*backend_, rows);
                if (jacobi_) {  // split: M1 = M2 = D^{1/2}
                    yq_ = Buffer(*backend_, rows), ty_ = Buffer(*backend_, rows);
                    std::vector<S> inv(host_.diag.size());
                    for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = S(1) / std::sqrt(host_.diag[i]);
                    inv_sqrt_diag_ = upload(inv);
                    if (shadow_) {
                        for (auto& v : inv) v = cj(v);
                        inv_sqrt_diag_h_ = upload(inv);
                    }
                }
                if (shadow_) {
                    wt_ = Buffer(*backend_, rows), ql_ = Buffer(*backend_, rows), qt_ = Buffer(*backend_, rows);
                    ct_ = Buffer(*backend_, haloed);
                    if (haloed > 0) backend_->copy_from_host(ct_.data(), zeros.data(), haloed);
                    if (jacobi_) zq_ = Buffer(*backend_, rows), tz_ = Buffer(*backend_, rows);
                }
            }
            if (backend_->device_memory()) {  // MPI reads host memory: the halo planes go through pinned buffers
                staging_ = Buffer(*backend_, 4 * bytes(s.plane()), true);
            }
            kernels_->bind(*backend_, a_);
            timer_ = std::make_unique<PhaseTimer>(*backend_);
            for (const char* ph : {"halo", "spmv", "update", "reduce"}) timer_->phase(ph);
        });
        if (halo_ != "sendrecv" && ranks_ > 1) build_halo(comm_);
    }
    Backend& backend() override { return *backend_; }

    // b = A x*, rank-locally: x* is known on the halo planes too.
    void prepare(MPI_Comm comm) override {
        all_or_none(comm, [&] {
            const Slab& s = host_.slab;
            std::vector<S> xs(static_cast<std::size_t>(s.haloed()), S(0)), b(static_cast<std::size_t>(s.rows()));
            for (index_t z = s.z0 - 1; z <= s.z1; ++z) {
                if (z < 0 || z >= s.n) continue;
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
                if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
                timer_->collect();  // not a step's halo time
            });
        }
    }
    std::unique_ptr<PhaseClock> make_clock() override { return backend_->make_clock(); }
    std::vector<std::string> phase_names() override { return timer_->names(); }
    // Untimed, between steps: x = 0, r = b, z = D^-1 r, p = z.
    void stage() override { restart(); }
    void restage() override { restart(); }
    // A rank-local failure stops every rank at the same iteration (its NaN
    // reaches every allreduce) and is then rethrown here for the runner to agree;
    // so is a breakdown (a scalar not finite or a zero (p, Ap)), which would
    // otherwise leave the timed step short.
    void step() override {
        stop_ = false;
        if (qmr_) qmr_start();
        else if (!one_pass_) rz_ = allreduce(local([&] { return timed(3, [&] { return rho_local(); }); }));
        alpha_prev_ = alpha_prev2_ = beta_ = S(0);
        iteration_ = owed_ = 0;
        int k = 0;
        for (; k < iterations_ && !stop_; ++k) iterate();
        catch_up();
        if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
        if (one_pass_)  // its scalars stay on the device: a breakdown shows at the end (the pass it happened in)
            if (const double broken = scalars().broken; broken > 0) stop_ = true, k = static_cast<int>(broken);
        if (stop_)
            throw std::runtime_error(fmt::format("{} broke down at iteration {} of {} (a scalar not finite or zero): "
                                                 "the step would be short; fewer krylov_iterations or a larger grid",
                                                 solver_, k, iterations_));
    }
    std::vector<double> collect_phase_times() override { return timer_->collect(); }
    Footprint footprint() const override {
        Footprint f;
        for (const Buffer* b : {&row_ptr_, &col_, &val_, &x_, &r_, &q_, &b_, &z_, &inv_diag_, &p_, &rt_, &qt_, &pt_, &ct_,
                                &zt_, &inv_diag_h_, &vt_, &yq_, &ty_, &d_, &s_, &wt_, &zq_, &tz_, &ql_, &inv_sqrt_diag_,
                                &inv_sqrt_diag_h_, &p_next_, &r_next_, &q_next_, &p_prev_, &sums_, &scalars_})
            f.backend_bytes += b->bytes();
        f.workspace_bytes = f.backend_bytes - b_.bytes() - x_.bytes();
        f.host_staging_bytes = staging_.bytes();
        return f;
    }
    // Per step (iterations_ iterations; the first (r, z) once).
    std::vector<PhaseTraffic> traffic() const override {
        const std::size_t k = static_cast<std::size_t>(iterations_), v = bytes(rows());
        const std::size_t halo = bytes(host_.slab.plane()) * ((host_.slab.below ? 1 : 0) + (host_.slab.above ? 1 : 0));
        // update: x += αp and r -= αq (3 streams each; fused: p, q, x, r read, x, r written),
        // z = D^-1 r (3; fused 2: r is at hand), p = z + βp (3)
        // (cusparse_csr: cuBLAS has no xpay: dscal + daxpy, 5 streams)
        const std::size_t update = 6 * v + (jacobi_ ? (fused_ ? 2 : 3) * v : 0) + (format_ == Format::cusparse_csr ? 5 : 3) * v;
        // unfused: (p, q) and (r, z) as passes of their own ((r, r): one stream)
        const std::size_t reduce = fused_ ? 0 : 2 * v + (jacobi_ ? 2 : 1) * v;
        if (one_pass_) {
            // The pass: the matrix; r, q, p (and D^-1) read and r_next, p_next written on every haloed row,
            // q_next written on the own rows (spmv_bytes counts x and y once); every other pass from the
            // third, x read and written (2; the older direction reconstructed from p and r, read (+1) only
            // where |β| < one_pass_reconstruct_beta). Update: once per step what x and r still owe:
            // x += αp (+ α'p' when the step's count is even), r -= αq. Reduce: none.
            const std::size_t vh = bytes(host_.slab.haloed());
            const std::size_t spmv = spmv_bytes(format_, host_) - 2 * v + (jacobi_ ? 6 : 5) * vh + v;
            const std::size_t x_passes = k > 0 ? (k - 1) / 2 : 0, owed = k == 0 ? 0 : k % 2 == 1 ? 1 : 2;
            const std::size_t up = owed * 3 * v + 3 * v;  // one axpy per owed direction, one for r
            return {{0, k * halo, k * halo}, {k * spmv + x_passes * 2 * v, 0, 0}, {up, 0, 0}, {0, 0, 0}};
        }
        if (folded_) {
            // SpMV pass: the matrix; r, p (and D^-1) read and p_next written on every haloed row; x read
            // and written, q written (spmv_bytes counts x and y once: + q). Update: r -= αq (3; Jacobi: + D^-1),
            // and once per step the lagging x += αp (3).
            const std::size_t vh = bytes(host_.slab.haloed());
            const std::size_t spmv = spmv_bytes(format_, host_) - 2 * v + (jacobi_ ? 4 : 3) * vh + 3 * v;
            const std::size_t up = k * (jacobi_ ? 4 : 3) * v + 3 * v;
            return {{0, k * halo, k * halo}, {k * spmv, 0, 0}, {up, 0, 0}, {(jacobi_ ? 2 : 1) * v, 0, 0}};
        }
        if (qmr_) {
            // One SpMV (qmr: two, A^H q = conj(A conj(q)): 2 conjugating passes of 2 streams) and halo exchange
            // each. Updates: scal ṽ (2), p = ỹ + c p (3), ṽ = p̃ - β ṽ (3), d and s: scal + axpy (5 each),
            // x += d, r -= s (3 each); Jacobi: scal y (2), ỹ = D^-1/2 y and y = D^-1/2 ṽ (3 each). Reduces:
            // δ = y^T y (1), ε = p^T p̃ (2), ‖y‖² (1). The shadow doubles the Lanczos side: scal w̃ (2), q (3),
            // w̃ (3), Jacobi 8 more; conj(z) for z^H y (2) and conj(q) (2, counted in the SpMV); δ reads 2, ε 2, ‖z‖² 1.
            const std::size_t sides = shadow_ ? 2 : 1;
            const std::size_t spmv = sides * spmv_bytes(format_, host_) + (shadow_ ? 4 * v : 0);
            const std::size_t up = 26 * v + (jacobi_ ? 8 * v : 0) + (shadow_ ? 8 * v + (jacobi_ ? 8 * v : 0) : 0);
            const std::size_t red = (shadow_ ? 2 + 2 + 2 + 1 + 1 : 4) * v;
            return {{0, sides * k * halo, sides * k * halo}, {k * spmv, 0, 0}, {k * up, 0, 0}, {k * red + sides * v, 0, 0}};
        }
        if (bicg_) {
            // Two SpMVs (A p; A^H p~ = conj(A conj(p~)): 2 conjugating passes of 2 streams), two halo
            // exchanges; updates x, r, r~ (9), D^-1 r and D^-H r~ (6), p and p~ (6); reduces (p~, q) and
            // (r~, z) after conjugating r~ (6).
            const std::size_t spmv = 2 * spmv_bytes(format_, host_) + 4 * v;
            const std::size_t up = 9 * v + (jacobi_ ? 6 * v : 0) + 6 * v;
            return {{0, 2 * k * halo, 2 * k * halo}, {k * spmv, 0, 0}, {k * up, 0, 0}, {k * 6 * v + 4 * v, 0, 0}};
        }
        return {{0, k * halo, k * halo}, {k * spmv_bytes(format_, host_), 0, 0}, {k * update, 0, 0}, {k * reduce + (jacobi_ ? 2 : 1) * v, 0, 0}};
    }

    // The format's SpMV against the stencil oracle on a random vector; then a
    // solve to 1e-8 with the true residual recomputed; the error to x*.
    ValidationResult validate(MPI_Comm comm) override {
        ValidationResult v;
        double mine[3] = {0, 0, 0};  // max |spmv - oracle|, max |oracle|, not finite
        all_or_none(comm, [&] {
            const Slab& s = host_.slab;
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
        const double nan = std::numeric_limits<double>::quiet_NaN();

        // The solve: converged in at most 50 n + 100 iterations (CG needs O(n) here).
        all_or_none(comm, [&] { restart(); });
        stop_ = false;
        const double bb = allreduce(local_norm2(b()));
        if (qmr_) qmr_start();
        else rz_ = allreduce(local([&] { return rho_local(); }));
        double rr = bb;
        converged_iterations_ = 0;
        alpha_prev_ = alpha_prev2_ = beta_ = S(0);
        iteration_ = owed_ = 0;
        const int max_iterations = static_cast<int>(50 * n_ + 100);
        while (!stop_ && converged_iterations_ < max_iterations && std::sqrt(rr / bb) > target_residual) {
            iterate();
            if (one_pass_) {  // r lags: ‖r − αq‖² from the sums
                const OnePassScalars<S> sc = scalars();
                rr = sc.rr;
                stop_ = sc.broken > 0 || !std::isfinite(rr);
            } else {
                rr = allreduce(local_norm2(r()));
            }
            ++converged_iterations_;
        }
        catch_up();
        if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
        recurrence_ = std::sqrt(allreduce(local_norm2(r())) / bb);  // the r the solve ends with
        // True residual: b - A x, x through p's haloed buffer.
        const Slab& s = host_.slab;
        all_or_none(comm, [&] {
            backend_->copy_region(p_.data(), {{1, 1, s.rows()}, {0, 0, 1}, s.plane()}, x_.data(), {{1, 1, s.rows()}, {0, 0, 1}, 0},
                                  sizeof(S));
        });
        exchange();
        local([&] {
            kernels_->spmv(a_, static_cast<const S*>(p_.data()), q(), false);
            kernels_->axpy(S(-1), b(), q(), rows());  // q = A x - b
        });
        true_residual_ = std::sqrt(allreduce(local_norm2(q())) / bb);
        if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
        // Error to the manufactured solution.
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
        // ||x - x*|| / ||x*|| <= cond(A) * residual.
        const double cond = OperatorOf<S>::cond(n_);
        v.checks.push_back(make_check("true_residual", true_residual_, 2 * target_residual));
        v.checks.push_back(make_check("recurrence_residual", recurrence_, target_residual));
        v.checks.push_back(make_check("residual_gap", std::abs(true_residual_ - recurrence_), 1e-10));
        Check e = make_check("manufactured_solution", std::sqrt(sum[0] / sum[1]), cond * 2 * target_residual);
        e.l2_rel_error = std::sqrt(sum[0] / sum[1]);
        v.checks.push_back(e);
        v.checks.push_back(make_check("spmv_oracle", mx[2] > 0 ? nan : mx[0] / std::max(mx[1], 1e-300), 1e-14));
        v.checks.push_back(make_check("halo_exchange", halo_error(comm), 0));
        return v;
    }
    void annotate(MPI_Comm, json& record) override {
        const Slab& s = host_.slab;
        // The device's copy rate on this rank's vectors (read + write), beside the kernels' achieved rates.
        double copy_gbps = 0;
        if (s.rows() > 0) {
            auto clock = backend_->make_clock();
            const StridedRegion all{{1, 1, s.rows()}, {0, 0, 1}, 0};
            backend_->copy_region(q_.data(), all, b_.data(), all, sizeof(S));  // warm
            clock->reset();
            clock->start();
            for (int k = 0; k < 10; ++k) backend_->copy_region(q_.data(), all, b_.data(), all, sizeof(S));
            clock->stop();
            copy_gbps = 10 * 2 * double(bytes(s.rows())) / (clock->elapsed_ms() * 1e6);
        }
        record["krylov"] = {{"iterations_per_step", iterations_},
                            {"converged_iterations", converged_iterations_},
                            {"recurrence_residual", recurrence_},
                            {"true_residual", true_residual_},
                            {"nnz", host_.nnz()},
                            {"spmv_bytes", spmv_bytes(format_, host_)},
                            {"halo_bytes_per_iteration", bytes(s.plane()) * ((s.below ? 1 : 0) + (s.above ? 1 : 0))},
                            {"copy_GBps", copy_gbps}};
    }

private:
    static std::size_t bytes(index_t n) { return static_cast<std::size_t>(n) * sizeof(S); }
    index_t rows() const { return host_.slab.rows(); }
    S* x() { return static_cast<S*>(x_.data()); }
    S* r() { return static_cast<S*>(r_.data()) + host_.slab.plane(); }
    S* z() { return jacobi_ ? static_cast<S*>(z_.data()) : r(); }
    S* q() { return static_cast<S*>(q_.data()) + (one_pass_ ? host_.slab.plane() : 0); }
    const S* b() { return static_cast<const S*>(b_.data()); }
    S* p() { return static_cast<S*>(p_.data()) + host_.slab.plane(); }
    const S* inv_diag() { return jacobi_ ? static_cast<const S*>(inv_diag_.data()) + host_.slab.plane() : nullptr; }
    S* rt() { return static_cast<S*>(rt_.data()); }
    S* zt() { return jacobi_ ? static_cast<S*>(zt_.data()) : rt(); }
    S* qt() { return static_cast<S*>(qt_.data()); }
    S* pt() { return static_cast<S*>(pt_.data()) + host_.slab.plane(); }
    S* ct() { return static_cast<S*>(ct_.data()) + host_.slab.plane(); }
    const S* inv_diag_h() { return static_cast<const S*>(inv_diag_h_.data()); }
    // QMR's vectors (README.md): without Jacobi y is ṽ, ỹ is y (and z is w̃, z̃ is z).
    S* vt() { return static_cast<S*>(vt_.data()); }
    S* yq() { return jacobi_ ? static_cast<S*>(yq_.data()) : vt(); }
    S* ty() { return jacobi_ ? static_cast<S*>(ty_.data()) : yq(); }
    S* dq() { return static_cast<S*>(d_.data()); }
    S* sq() { return static_cast<S*>(s_.data()); }
    S* wt() { return static_cast<S*>(wt_.data()); }
    S* zq() { return jacobi_ ? static_cast<S*>(zq_.data()) : wt(); }
    S* tz() { return jacobi_ ? static_cast<S*>(tz_.data()) : zq(); }
    S* ql() { return static_cast<S*>(ql_.data()); }
    const S* inv_sqrt_diag() { return static_cast<const S*>(inv_sqrt_diag_.data()); }
    const S* inv_sqrt_diag_h() { return static_cast<const S*>(inv_sqrt_diag_h_.data()); }

    template <class T>
    Buffer upload(const std::vector<T>& v) {
        Buffer b(*backend_, v.size() * sizeof(T));
        if (!v.empty()) backend_->copy_from_host(b.data(), v.data(), v.size() * sizeof(T));
        return b;
    }
    template <class F>
    std::invoke_result_t<F> timed(int phase, F f) {
        PhaseScope s(*timer_, phase);
        return f();
    }
    // The exchange itself: p's own planes set to a function of the global row,
    // its halos then must hold the neighbours' (0 where the domain ends).
    // Largest difference over every rank (0 when right).
    double halo_error(MPI_Comm comm) {
        const Slab& s = host_.slab;
        const index_t plane = s.plane();
        auto value = [](index_t global) { return 1.0 + double(global % 9973); };
        all_or_none(comm, [&] {
            std::vector<S> own(static_cast<std::size_t>(s.rows()));
            for (index_t i = 0; i < s.rows(); ++i) own[i] = S(value(s.z0 * plane + i));
            if (!own.empty()) backend_->copy_from_host(p(), own.data(), bytes(s.rows()));
            backend_->synchronize();
        });
        exchange();
        if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
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
    double local_norm2(const S* v) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        if (failed_) return nan;
        try {
            return kernels_->norm2(v, rows());
        } catch (...) {
            failed_ = std::current_exception();
            return nan;
        }
    }
    // The one-pass scalars, from backend memory (a wait; NaN after a failure on this rank).
    OnePassScalars<S> scalars() {
        OnePassScalars<S> sc;
        sc.rr = std::numeric_limits<double>::quiet_NaN();
        local([&] {
            backend_->copy_to_host(&sc, scalars_.data(), sizeof(sc));
            backend_->synchronize();
        });
        return sc;
    }
    template <class T>
    T allreduce(T local) {
        T sum = 0;
        PhaseScope s(*timer_, 3);
        FFTUNE_MPI_CHECK(MPI_Allreduce(&local, &sum, 1, mpi_type<T>(), MPI_SUM, comm_));
        return sum;
    }
    void restart() {
        const index_t n = rows();
        const StridedRegion all{{1, 1, n}, {0, 0, 1}, 0};
        if (n > 0) {
            const std::vector<S> zeros(static_cast<std::size_t>(n), S(0));
            backend_->copy_from_host(x_.data(), zeros.data(), bytes(n));
            if (one_pass_) {  // the first pass takes r − 0 q and 0 p: α = β = 0
                backend_->copy_from_host(q(), zeros.data(), bytes(n));
                const OnePassScalars<S> none;
                backend_->copy_from_host(scalars_.data(), &none, sizeof(none));
            }
            backend_->copy_region(r(), all, b_.data(), all, sizeof(S));
            if (jacobi_) kernels_->scale(inv_diag(), r(), z(), n);
            backend_->copy_region(p(), all, z(), all, sizeof(S));
            if (qmr_) {  // ṽ = r0 = b, y = M1^-1 ṽ; p = d = s = 0 (their first update scales them by 0);
                         // the shadow w̃ = conj(b), as BiCG's r~: its Lanczos vectors are then QMR-SYM's, conjugated
                backend_->copy_region(vt(), all, b(), all, sizeof(S));
                if (jacobi_) kernels_->scale(inv_sqrt_diag(), vt(), yq(), n);
                for (S* v : {p(), dq(), sq()}) backend_->copy_from_host(v, zeros.data(), bytes(n));
                if (shadow_) {
                    kernels_->conjugate(b(), wt(), n);
                    if (jacobi_) kernels_->scale(inv_sqrt_diag_h(), wt(), zq(), n);
                    backend_->copy_from_host(ql(), zeros.data(), bytes(n));
                }
            }
            if (bicg_) {  // r~ = conj(b): BiCG's shadow iterates are then COCG's, conjugated
                kernels_->conjugate(b(), rt(), n);
                if (jacobi_) kernels_->scale(inv_diag_h(), rt(), zt(), n);
                backend_->copy_region(pt(), all, zt(), all, sizeof(S));
            }
        }
        backend_->synchronize();
    }
    // ρ = (r~)^H z for BiCG, r^T z otherwise; rank-local.
    S rho_local() {
        if (!bicg_) return kernels_->dot(r(), z(), rows());
        kernels_->conjugate(rt(), ct(), rows());
        return kernels_->dot(ct(), z(), rows());
    }
    // The halo exchange through transport halo_ as two reshapes of the
    // haloed vector, in (z, 1, plane) coordinates: "up" sends each rank's last
    // plane into its upper neighbour's lower halo, "down" its first plane into
    // the lower neighbour's upper halo. Before: the interior [z0, z1); after:
    // the planes a rank holds, halos included ([z0 - 1, z1 + 1) within the
    // domain). The moving boxes keep the self block empty: only halo planes move.
    void build_halo(MPI_Comm comm) {
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
        // pack/exchange/unpack phases get clocks that record nothing (a
        // backend clock would add events to every exchange and, never
        // collected, keep them all).
        all_or_none(comm, [&] {
            halo_timer_ = std::make_unique<PhaseTimer>(*backend_);
            for (const char* step : {"pack.", "exchange.", "unpack."})
                for (const char* k : {"0", "1"}) halo_timer_->phase(std::string(step) + k, std::make_unique<NoClock>());
        });
        up_ = std::make_unique<Redistribution>(comm, *backend_, halo_, 0, interior, held, sizeof(S), *halo_timer_, last, lower);
        down_ = std::make_unique<Redistribution>(comm, *backend_, halo_, 1, interior, held, sizeof(S), *halo_timer_, first,
                                                 upper);
    }
    // p's own first and last planes to the neighbours, theirs into p's halos.
    void exchange() { exchange(p_); }
    void exchange(Buffer& haloed) {
        PhaseScope s(*timer_, 0);
        const Slab& sl = host_.slab;
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
    static S cj(S v) {
        if constexpr (std::is_same_v<S, double>) return v;
        else return std::conj(v);
    }
    // One preconditioned BiCG iteration (README.md), unfused.
    void iterate_bicg() {
        const index_t n = rows();
        exchange(p_);
        local([&] { timed(1, [&] { kernels_->spmv(a_, static_cast<const S*>(p_.data()), q(), false); }); });
        local([&] { timed(1, [&] { kernels_->conjugate(pt(), ct(), n); }); });
        exchange(ct_);
        local([&] {
            timed(1, [&] {
                kernels_->spmv(a_, static_cast<const S*>(ct_.data()), qt(), false);  // A conj(p~)
                kernels_->conjugate(qt(), qt(), n);                                  // q~ = A^H p~
            });
        });
        const S sigma = allreduce(local([&] { return timed(3, [&] { return kernels_->dot(ct(), q(), n); }); }));
        if (!finite(sigma) || sigma == S(0)) {
            stop_ = true;
            return;
        }
        const S alpha = rz_ / sigma;
        local([&] {
            timed(2, [&] {
                kernels_->axpy(alpha, p(), x(), n);
                kernels_->axpy(-alpha, q(), r(), n);
                kernels_->axpy(-cj(alpha), qt(), rt(), n);
                if (jacobi_) {
                    kernels_->scale(inv_diag(), r(), z(), n);
                    kernels_->scale(inv_diag_h(), rt(), zt(), n);
                }
            });
        });
        const S rho = allreduce(local([&] { return timed(3, [&] { return rho_local(); }); }));
        if (!finite(rho)) {
            stop_ = true;
            return;
        }
        const S beta = rho / rz_;
        rz_ = rho;
        local([&] {
            timed(2, [&] {
                kernels_->xpay(z(), beta, p(), n);
                kernels_->xpay(zt(), cj(beta), pt(), n);
            });
        });
    }
    // QMR's scalars at x = 0: ρ1 = ‖y‖ (ξ1 = ‖z‖), γ0 = 1, η0 = -1, θ0 = 0.
    void qmr_start() {
        rho_ = std::sqrt(allreduce(local_norm2(yq())));
        xi_ = shadow_ ? std::sqrt(allreduce(local_norm2(zq()))) : rho_;
        gamma_ = 1, theta_ = 0, eta_ = S(-1), eps_ = S(1);
        first_ = true;
    }
    // One QMR iteration without look-ahead (Barrett et al., Templates, fig. 2.7;
    // README.md), M1 = M2 = D^{1/2} with Jacobi. qmr_sym: the left Lanczos
    // vectors are the right ones (w = v, z = y, q = p, ξ = ρ) and every form is
    // the bilinear x^T y. qmr: its own left vectors, forms z^H y and q^H A p, A^H q.
    void iterate_qmr() {
        const index_t n = rows();
        if (!(rho_ > 0) || !(xi_ > 0) || !std::isfinite(rho_) || !std::isfinite(xi_)) {
            stop_ = true;
            return;
        }
        // v = ṽ/ρ, y = y/ρ (w = w̃/ξ, z = z/ξ)
        local([&] {
            timed(2, [&] {
                kernels_->scal(S(1 / rho_), vt(), n);
                if (jacobi_) kernels_->scal(S(1 / rho_), yq(), n);
                if (shadow_) {
                    kernels_->scal(S(1 / xi_), wt(), n);
                    if (jacobi_) kernels_->scal(S(1 / xi_), zq(), n);
                }
            });
        });
        // δ = z^T y (qmr_sym: y^T y; qmr: z^H y)
        const S delta = allreduce(local([&] {
            return timed(3, [&] {
                if (!shadow_) return kernels_->dot(yq(), yq(), n);
                kernels_->conjugate(zq(), ct(), n);
                return kernels_->dot(ct(), yq(), n);
            });
        }));
        if (!finite(delta) || delta == S(0)) {
            stop_ = true;
            return;
        }
        // ỹ = M2^-1 y, p = ỹ - (ξδ/ε) p (z̃ = M1^-H z, q = z̃ - conj(ρδ/ε) q); the first: p = ỹ
        const S cp = first_ ? S(0) : -S(xi_) * delta / eps_, cq = first_ ? S(0) : -cj(S(rho_) * delta / eps_);
        local([&] {
            timed(2, [&] {
                if (jacobi_) kernels_->scale(inv_sqrt_diag(), yq(), ty(), n);
                kernels_->xpay(ty(), cp, p(), n);
                if (shadow_) {
                    if (jacobi_) kernels_->scale(inv_sqrt_diag_h(), zq(), tz(), n);
                    kernels_->xpay(tz(), cq, ql(), n);
                }
            });
        });
        // p̃ = A p (in q); qmr: A^H q = conj(A conj(q)) (in qt)
        exchange(p_);
        local([&] { timed(1, [&] { kernels_->spmv(a_, static_cast<const S*>(p_.data()), q(), false); }); });
        if (shadow_) {
            local([&] { timed(1, [&] { kernels_->conjugate(ql(), ct(), n); }); });
            exchange(ct_);
            local([&] {
                timed(1, [&] {
                    kernels_->spmv(a_, static_cast<const S*>(ct_.data()), qt(), false);
                    kernels_->conjugate(qt(), qt(), n);
                });
            });
        }
        // ε = q^T p̃ (qmr: q^H p̃ with conj(q) at hand), β = ε/δ
        const S eps = allreduce(local([&] {
            return timed(3, [&] { return kernels_->dot(shadow_ ? ct() : p(), q(), n); });
        }));
        const S beta = eps / delta;
        if (!finite(beta) || beta == S(0)) {
            stop_ = true;
            return;
        }
        // ṽ = p̃ - β v, y = M1^-1 ṽ (w̃ = A^H q - conj(β) w, z = M2^-H w̃)
        local([&] {
            timed(2, [&] {
                kernels_->xpay(q(), -beta, vt(), n);
                if (jacobi_) kernels_->scale(inv_sqrt_diag(), vt(), yq(), n);
                if (shadow_) {
                    kernels_->xpay(qt(), -cj(beta), wt(), n);
                    if (jacobi_) kernels_->scale(inv_sqrt_diag_h(), wt(), zq(), n);
                }
            });
        });
        const double rho = std::sqrt(allreduce(local_norm2(yq())));
        const double xi = shadow_ ? std::sqrt(allreduce(local_norm2(zq()))) : rho;
        // The quasi-minimisation: θ = ρ'/(γ0 |β|), γ = 1/√(1+θ²), η = -η ρ γ²/(β γ0²)
        const double theta = rho / (gamma_ * std::abs(beta)), gamma = 1 / std::sqrt(1 + theta * theta);
        const S eta = -eta_ * S(rho_ * gamma * gamma) / (beta * S(gamma_ * gamma_));
        const double c = (theta_ * gamma) * (theta_ * gamma);
        if (!std::isfinite(theta) || !(gamma > 0) || !finite(eta)) {
            stop_ = true;
            return;
        }
        // d = η p + (θ0 γ)² d, s = η p̃ + (θ0 γ)² s; x += d, r -= s
        local([&] {
            timed(2, [&] {
                kernels_->scal(S(c), dq(), n);
                kernels_->axpy(eta, p(), dq(), n);
                kernels_->scal(S(c), sq(), n);
                kernels_->axpy(eta, q(), sq(), n);
                kernels_->axpy(S(1), dq(), x(), n);
                kernels_->axpy(S(-1), sq(), r(), n);
            });
        });
        rho_ = rho, xi_ = xi, gamma_ = gamma, theta_ = theta, eta_ = eta, eps_ = eps;
        first_ = false;
    }
    // One preconditioned CG iteration (README.md).
    void iterate() {
        if (folded_) return iterate_folded();
        if (one_pass_) return iterate_one_pass();
        if (qmr_) return iterate_qmr();
        if (bicg_) return iterate_bicg();
        const index_t n = rows();
        exchange();
        S pq = local([&] {
            return timed(1, [&] { return kernels_->spmv(a_, static_cast<const S*>(p_.data()), q(), fused_); });
        });
        if (!fused_) pq = local([&] { return timed(3, [&] { return kernels_->dot(p(), q(), n); }); });
        const S pq_all = allreduce(pq);
        if (!finite(pq_all) || pq_all == S(0)) {  // a failure somewhere, or a breakdown: every rank stops here
            stop_ = true;
            return;
        }
        const S alpha = rz_ / pq_all;
        S rz_local = 0;
        if (fused_) {
            rz_local = local([&] {
                return timed(2, [&] { return kernels_->fused_update(alpha, p(), q(), x(), r(), inv_diag(), z(), n); });
            });
        } else {
            local([&] {
                timed(2, [&] {
                    kernels_->axpy(alpha, p(), x(), n);
                    kernels_->axpy(-alpha, q(), r(), n);
                    if (jacobi_) kernels_->scale(inv_diag(), r(), z(), n);
                });
            });
            rz_local = local([&] { return timed(3, [&] { return kernels_->dot(r(), z(), n); }); });
        }
        const S rz_new = allreduce(rz_local);
        if (!finite(rz_new)) {
            stop_ = true;
            return;
        }
        const S beta = rz_new / rz_;
        rz_ = rz_new;
        local([&] { timed(2, [&] { kernels_->xpay(z(), beta, p(), n); }); });
    }
    // One folded CG iteration (README.md): halo(r); p' = D^-1 r + βp, x += α_prev p and q = A p' in one
    // pass; r -= αq and (r, D^-1 r) in another. x lags one iteration behind: catch_up() adds the last αp.
    void iterate_folded() {
        const index_t n = rows();
        exchange(r_);
        const S pq = local([&] {
            return timed(1, [&] {
                const S* dinv = jacobi_ ? static_cast<const S*>(inv_diag_.data()) : nullptr;
                return kernels_->spmv_folded(a_, beta_, alpha_prev_, static_cast<const S*>(r_.data()), dinv,
                                             static_cast<const S*>(p_.data()), static_cast<S*>(p_next_.data()), x(), q());
            });
        });
        std::swap(p_, p_next_);
        const S pq_all = allreduce(pq);
        if (!finite(pq_all) || pq_all == S(0)) {
            stop_ = true;
            return;
        }
        const S alpha = rz_ / pq_all;
        const S rz_local = local([&] { return timed(2, [&] { return kernels_->update_residual(alpha, q(), r(), inv_diag(), n); }); });
        const S rz_new = allreduce(rz_local);
        if (!finite(rz_new)) {
            stop_ = true;
            return;
        }
        beta_ = rz_new / rz_;
        rz_ = rz_new;
        alpha_prev_ = alpha;
    }
    // One CG iteration in one pass (README.md): halo(q) (r's at the first); r' = r − α q,
    // p' = D^-1 r' + βp on every haloed row, q' = A p' on the own rows, and every sum of the
    // iteration; then the next α, β from the sums added over the ranks. The scalars stay in backend
    // memory (OnePassScalars): at one rank nothing waits for the host between iterations. r lags one
    // step, x one or two: it adds the two directions it owes every other pass (one read and write
    // of x per two iterations); catch_up() adds what is left.
    void iterate_one_pass() {
        exchange(iteration_ == 0 ? r_ : q_);  // r and p follow on the halo rows from the pass before
        const bool add_x = owed_ == 2;        // x += α p + α2 p_prev
        const bool norms = jacobi_ || !std::is_same_v<S, double>;
        double* sums = static_cast<double*>(sums_.data());
        auto* sc = static_cast<OnePassScalars<S>*>(scalars_.data());
        local([&] {
            timed(1, [&] {
                const S* dinv = jacobi_ ? static_cast<const S*>(inv_diag_.data()) : nullptr;
                kernels_->spmv_one_pass(a_, sc, static_cast<const S*>(r_.data()), static_cast<const S*>(q_.data()),
                                        static_cast<const S*>(p_.data()), dinv, static_cast<S*>(r_next_.data()),
                                        static_cast<S*>(q_next_.data()), static_cast<S*>(p_next_.data()),
                                        add_x ? x() : nullptr, static_cast<const S*>(p_prev_.data()), sums);
            });
        });
        if (add_x) owed_ = 0;
        ++owed_;  // α p' from this pass
        std::swap(r_, r_next_), std::swap(q_, q_next_);
        std::swap(p_prev_, p_), std::swap(p_, p_next_);  // (p_prev, p, p_next) ← (p, p_next, p_prev)
        if (ranks_ > 1) {  // the sums over every rank, through the host (one rank: they are the sums)
            std::vector<double> h(static_cast<std::size_t>(one_pass_sum_count<S>(norms)),
                                  std::numeric_limits<double>::quiet_NaN());  // this rank failed: NaN stops every rank
            local([&] {
                backend_->copy_to_host(h.data(), sums, h.size() * sizeof(double));
                backend_->synchronize();
            });
            {
                PhaseScope ph(*timer_, 3);
                FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, h.data(), static_cast<int>(h.size()), MPI_DOUBLE, MPI_SUM, comm_));
            }
            local([&] { backend_->copy_from_host(sums, h.data(), h.size() * sizeof(double)); });
        }
        local([&] { timed(3, [&] { kernels_->one_pass_scalars(sums, norms, iteration_, sc); }); });
        ++iteration_;
    }
    // What a lagging iteration still owes: folded x += α_prev p; one_pass x's owed directions
    // (α p, and α2 p_prev) and r −= α q, its scalars read back.
    void catch_up() {
        if (!folded_ && !one_pass_) return;
        if (one_pass_) {
            const OnePassScalars<S> sc = scalars();
            alpha_prev_ = sc.alpha, alpha_prev2_ = sc.alpha2;
        }
        local([&] {
            timed(2, [&] {
                if (folded_ || owed_ > 0) kernels_->axpy(alpha_prev_, p(), x(), rows());
                if (one_pass_ && owed_ == 2)
                    kernels_->axpy(alpha_prev2_, static_cast<S*>(p_prev_.data()) + host_.slab.plane(), x(), rows());
                if (one_pass_) kernels_->axpy(-alpha_prev_, q(), r(), rows());
            });
        });
        alpha_prev_ = alpha_prev2_ = S(0);
        owed_ = 0;
    }

    index_t n_;
    int iterations_;
    Format format_;
    bool fused_, folded_, one_pass_, jacobi_, bicg_, qmr_, shadow_;
    std::string solver_;
    std::string halo_;  // sendrecv or a transport's name
    std::string backend_name_;
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
    LocalMatrixT<S> host_;
    DeviceMatrixT<S> a_;
    Buffer row_ptr_, col_, val_, x_, r_, z_, q_, b_, inv_diag_, p_, p_next_, r_next_, q_next_, p_prev_, staging_;
    Buffer sums_, scalars_;  // one_pass: the pass's sums and the scalars, in backend memory
    Buffer rt_, qt_, pt_, ct_, zt_, inv_diag_h_;  // BiCG's shadow system (qt_, ct_: QMR's too)
    Buffer vt_, yq_, ty_, d_, s_, wt_, zq_, tz_, ql_, inv_sqrt_diag_, inv_sqrt_diag_h_;  // QMR's
    S rz_ = 0;
    S alpha_prev_ = 0, beta_ = 0;  // folded, one_pass: the last step (x lags by it) and the next direction's β
    S alpha_prev2_ = 0;            // one_pass: the step of p_prev_, while x owes it
    int iteration_ = 0;            // one_pass: iterations into the solve (the first exchanges r's halo)
    int owed_ = 0;                 // one_pass: directions x still owes (0, 1 or 2: α p, α2 p_prev)
    double rho_ = 0, xi_ = 0, gamma_ = 1, theta_ = 0;  // QMR's scalars
    S eta_ = S(-1), eps_ = S(1);
    bool first_ = true;
    double recurrence_ = 0, true_residual_ = 0;
    int converged_iterations_ = 0;
};

class KrylovFamily final : public Family {
public:
    std::string name() const override { return "krylov"; }
    std::string summary() const override {
        return "Krylov solvers (Commer et al.): CG on the 7-point Poisson operator, CSR/ELL/matrix-free, fused, folded, "
               "one pass or not, Jacobi";
    }
    std::vector<std::string> testcase_keys() const override {
        return {"sizes", "operator", "solver", "format", "fusion", "preconditioner", "precision", "backend",
                "halo", "krylov_iterations"};
    }
    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j,
                                            const std::vector<int>&) const override {
        auto a = std::make_shared<KrylovAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        a->sizes = ps.cube_sizes(j.at("sizes"), "/sizes", index_t{1} << 31, "krylov");
        a->operators = ps.names_axis(TestcaseParser::value_or(j, "operator", "poisson7"), "/operator", operators);
        a->solvers = ps.names_axis(TestcaseParser::value_or(j, "solver", "all"), "/solver", solvers);
        for (const auto& op : a->operators)
            if (std::none_of(a->solvers.begin(), a->solvers.end(), [&](const std::string& s) { return info_of(op).takes(s); }))
                ps.fail("/solver", fmt::format("operator {} is solved by {}, none of which /solver lists", op,
                                               TestcaseParser::list(info_of(op).solvers)));
        a->formats = ps.names_axis(TestcaseParser::value_or(j, "format", "all"), "/format", format_names());
        a->fusions = ps.names_axis(TestcaseParser::value_or(j, "fusion", "all"), "/fusion", fusions);
        a->preconditioners =
            ps.names_axis(TestcaseParser::value_or(j, "preconditioner", "all"), "/preconditioner", preconditioners);
        // The precision follows the operator (poisson7 double, curlcurl13 complex_double).
        ps.names_axis(TestcaseParser::value_or(j, "precision", "all"), "/precision", {"double", "complex_double"});
        a->backends = ps.names_axis(TestcaseParser::value_or(j, "backend", "fftw"), "/backend",
                                    Registry<KrylovKernels>::instance().names());
        a->halos = ps.names_axis(TestcaseParser::value_or(j, "halo", "sendrecv"), "/halo", halo_names());
        const auto its = ps.int_axis(TestcaseParser::value_or(j, "krylov_iterations", 1000), "/krylov_iterations", 1);
        if (its.size() != 1) ps.fail("/krylov_iterations", "one count of timed iterations per step, not a list");
        a->iterations = its[0];
        return a;
    }
    std::vector<Point> points(const FamilyAxes& any, int ranks) const override {
        const auto& a = dynamic_cast<const KrylovAxes&>(any);
        std::vector<Point> out;
        for (index_t n : a.sizes)
            for (const auto& op : a.operators)
                for (const auto& solver : a.solvers)
                    if (info_of(op).takes(solver))  // each operator with its solvers (parse checked one is listed)
                    for (const auto& format : a.formats)
                        for (const auto& fusion : a.fusions)
                            for (const auto& pre : a.preconditioners)
                                for (const auto& backend : a.backends)
                                for (const auto& halo : a.halos) {
                                    Point pt;
                                    pt.index = static_cast<int>(out.size());
                                    pt.problem = {{"kind", "krylov"}, {"ranks", ranks}, {"size", {n, n, n}},
                                                  {"operator", op}, {"precision", info_of(op).precision},
                                                  {"iterations", {a.iterations}}};
                                    pt.config = {{"solver", solver}, {"format", format}, {"fusion", fusion},
                                                 {"preconditioner", pre}, {"backend", backend}, {"halo", halo}};
                                    pt.key = config_key(pt.config);
                                    pt.label = fmt::format("krylov {}^3 {} {}", n, op, pt.key);
                                    out.push_back(std::move(pt));
                                }
        return out;
    }
    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        const index_t n = problem.at("size")[0].get<index_t>();
        const int p = problem.at("ranks").get<int>();
        if (n < p) return fmt::format("{} z-planes over {} ranks: every rank needs a plane", n, p);
        const std::string backend = config.at("backend").get<std::string>();
        const OperatorInfo& op = info_of(problem.at("operator").get<std::string>());
        const std::string solver = config.at("solver").get<std::string>();
        if (!op.takes(solver))
            return fmt::format("{} solves {}; {} takes {}", solver,
                               solver == "cg" ? "real SPD operators (poisson7)" : "complex symmetric ones (curlcurl13)",
                               op.name, TestcaseParser::list(op.solvers));
        if ((solver == "bicg" || solver == "qmr" || solver == "qmr_sym") && config.at("fusion") != "none")
            return solver + " runs unfused (one kernel per operation)";
        if (op.precision == "complex_double") {
            if (config.at("format") == "matrix_free") return "matrix_free is poisson7's stencil only";
            if (!Registry<KernelsT<complex>>::instance().contains(backend))
                return "backend " + backend + " has no complex Krylov kernels (have: " +
                       Registry<KernelsT<complex>>::instance().joined_names() + ")";
        }
        if (config.at("format") == "cusparse_csr") {
            if (backend != "cuda") return "cusparse_csr multiplies with cuSPARSE: backend cuda only";
            if (config.at("fusion") != "none")
                return "cusparse_csr is the library reference, one call per operation: fusion none only";
        }
        if (!Registry<KrylovKernels>::instance().contains(backend))
            return "backend " + config.at("backend").get<std::string>() + " has no Krylov kernels (have: " +
                   Registry<KrylovKernels>::instance().joined_names() + ")";
        if (const std::string halo = config.value("halo", "sendrecv"); halo != "sendrecv") {
            if (p == 1) return "one rank exchanges no halo: halo " + halo + " would repeat the sendrecv point";
            if (Registry<Transport>::instance().create(halo)->maps_peer_memory())
                return halo + " maps fixed peer buffers at setup; the halo exchanges several vectors";
        }
        return std::nullopt;
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        if (info_of(point.problem.at("operator").get<std::string>()).precision == "complex_double")
            return std::make_unique<KrylovWorkload<complex>>(point);
        return std::make_unique<KrylovWorkload<double>>(point);
    }
    // solver/format/fusion/preconditioner/backend, then /halo where it is a transport.
    std::string config_key(const json& c) const override {
        const std::string halo = c.value("halo", "sendrecv");
        return fmt::format("{}/{}/{}/{}/{}{}", c.at("solver").get<std::string>(), c.at("format").get<std::string>(),
                           c.at("fusion").get<std::string>(), c.at("preconditioner").get<std::string>(),
                           c.at("backend").get<std::string>(), halo == "sendrecv" ? "" : "/" + halo);
    }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        return {{"size", Role::size, {}, "", 3, "n n n: the grid of unknowns (a cube)"},
                {"operator", Role::category, operators, "poisson7", 0, "poisson7 or curlcurl13"},
                {"precision", Role::category, {"double", "complex_double"}, "double", 0, "double (poisson7) or complex_double (curlcurl13)"},
                {"iterations", Role::size, {}, "", 1, "timed iterations per step (default 1000)"}};
    }
    std::vector<std::string> config_axes() const override {
        return {"solver", "format", "fusion", "preconditioner", "backend", "halo"};
    }
    json default_config(const json& problem) const override {
        const std::string op = problem.contains("operator") ? problem.at("operator").get<std::string>() : "poisson7";
        return {{"solver", info_of(op).solvers.front()}, {"format", "csr"}, {"fusion", "none"}, {"preconditioner", "none"},
                {"backend", "fftw"}, {"halo", "sendrecv"}};
    }
};

const bool registered = register_variant<Family, KrylovFamily>("krylov");

}  // namespace
}  // namespace fftune::krylov
