// The krylov family (README.md beside this file): CG on the 7-point Poisson
// operator (Commer et al.), every storage format x fusion x preconditioner,
// z-slabs of an N1 x N2 x N3 grid over the ranks with a halo exchange before
// each SpMV. A timed step is a fixed number of iterations from x = 0,
// restarted from x = 0 at the residual floor; validation solves to a relative
// residual of 1e-8 and recomputes the true one. The solvers are files of their
// own (solver.hpp), over the shared context (context.hpp); here: the testcase
// axes, the points, the workload that runs one, its checks and its record.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/box.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "core/run/family.hpp"
#include "families/krylov/solver.hpp"

namespace fftune {
FFTUNE_DEFINE_REGISTRY(krylov::SolverT<double>);
FFTUNE_DEFINE_REGISTRY(krylov::SolverT<std::complex<double>>);
}  // namespace fftune

namespace fftune::krylov {
namespace {

using json = nlohmann::json;

// Each operator: the solvers written for it (cg: real SPD; cocg: complex
// symmetric, CG with unconjugated dots; bicg: general BiCG with its shadow
// system, two SpMVs; qmr: general QMR (Freund and Nachtigal) on the two-sided
// Lanczos process, two SpMVs; qmr_sym: QMR on the symmetric Lanczos process
// of a complex symmetric operator (Freund), one SpMV), the kind of operator
// they solve and the precision of its values.
struct OperatorInfo {
    std::string name;
    std::vector<std::string> solvers;
    std::string precision;
    std::string kind;
    bool takes(const std::string& solver) const {
        return std::find(solvers.begin(), solvers.end(), solver) != solvers.end();
    }
};
const std::vector<OperatorInfo> operator_info{
    {"poisson7", {"cg"}, "double", "real SPD operators"},
    {"curlcurl13", {"cocg", "bicg", "qmr", "qmr_sym"}, "complex_double", "complex symmetric ones"}};
const std::vector<std::string> solvers{"cg", "cocg", "bicg", "qmr", "qmr_sym"};
const std::vector<std::string> operators{"poisson7", "curlcurl13"};
const OperatorInfo& info_of(const std::string& op) {
    for (const auto& i : operator_info)
        if (i.name == op) return i;
    throw std::invalid_argument("unknown operator '" + op + "'");
}
// The operator a solver is written for (every solver has one).
const OperatorInfo& operator_for(const std::string& solver) {
    for (const auto& i : operator_info)
        if (i.takes(solver)) return i;
    throw std::invalid_argument("unknown solver '" + solver + "'");
}
// A solver with a fusion, as the solver registries name it.
std::string solver_key(const json& config) {
    return config.at("solver").get<std::string>() + "/" + config.at("fusion").get<std::string>();
}
const std::vector<std::string> fusions{"none", "fused", "folded", "one_pass"};
// The halo exchange: `sendrecv` (MPI point-to-point with each neighbour, the
// family's own) or a registered transport of the engine, which moves the
// planes as two reshapes (Context::build_halo).
std::vector<std::string> halo_names() {
    std::vector<std::string> out{"sendrecv"};
    for (const auto& t : Registry<Transport>::instance().names()) out.push_back(t);
    return out;
}
const std::vector<std::string> preconditioners{"none", "jacobi"};
constexpr double target_residual = 1e-8;
// The residual floor: ‖r‖/‖b‖ of the recurrence at most 64 ulps. The recurrence
// residual keeps falling past the true residual's floor (cond · ε) until a
// scalar underflows, so a converging solve reaches it whatever the operator's
// condition; a stop above it is a breakdown.
constexpr double residual_floor = 64 * std::numeric_limits<double>::epsilon();
// Iterations between a step's looks at ‖r‖ (and one_pass's at its scalars).
constexpr int floor_look = 16;

struct KrylovAxes : FamilyAxes {
    std::vector<std::array<index_t, 3>> sizes;
    std::vector<std::string> operators, solvers, formats, fusions, preconditioners, backends, halos;
    int iterations = 1000;
};

template <class S>
class KrylovWorkload final : public Workload {
public:
    explicit KrylovWorkload(const Point& pt)
        : c_(pt.problem.at("size").get<std::array<index_t, 3>>(), parse_format(pt.config.at("format").get<std::string>()),
             pt.config.at("preconditioner") == "jacobi", pt.config.value("halo", "sendrecv"), pt.backend()),
          iterations_(pt.problem.at("iterations")[0].get<int>()),
          solver_name_(pt.config.at("solver").get<std::string>()),
          solver_(Registry<SolverT<S>>::instance().create(solver_key(pt.config))) {}

    void setup(MPI_Comm comm) override { c_.setup(comm, solver_->haloed_q(), [&] { solver_->setup(c_); }); }
    Backend& backend() override { return *c_.backend_; }
    // b; ‖b‖² for the floor (not a step's reduce time).
    void prepare(MPI_Comm comm) override {
        c_.prepare(comm);
        double local = 0;
        all_or_none(comm, [&] {
            if (c_.rows() > 0) local = c_.kernels_->norm2(c_.b(), c_.rows());
        });
        FFTUNE_MPI_CHECK(MPI_Allreduce(&local, &bb_, 1, MPI_DOUBLE, MPI_SUM, comm));
    }
    std::unique_ptr<PhaseClock> make_clock() override { return c_.backend_->make_clock(); }
    std::vector<std::string> phase_names() override { return c_.timer_->names(); }
    // Untimed, between steps: x = 0, r = b, z = D^-1 r, p = z and the solver's own.
    void stage() override { restart(); }
    void restage() override { restart(); }
    // iterations_ iterations in cycles from x = 0. Every floor_look iterations
    // the step looks at ‖r‖ (residual2: a norm and an allreduce; one_pass its
    // scalars) and at ‖r‖/‖b‖ <= residual_floor restarts: x = 0 again
    // (restarts_), and the cycle goes on with the iterations left. A stop (a
    // scalar not finite or zero) between looks is a restart too where ‖r‖ is at
    // the floor, the stopped iteration not counted; any other stop is a
    // breakdown, thrown (the step would be short), as is a rank-local failure:
    // its NaN reaches every allreduce, so every rank stops at the same
    // iteration and then rethrows. one_pass sees a stop only at a look (its
    // scalars stay in backend memory); the passes past it run on, not counted.
    void step() override {
        restarts_ = 0;
        const double floor2 = residual_floor * residual_floor * bb_;
        for (int done = 0;;) {  // iterations of the step before this cycle
            c_.stop_ = false;
            solver_->start(c_);
            const int budget = iterations_ - done;
            int k = 0, stopped = 0;  // the cycle's iterations; the one (1-based) that stopped
            bool at_floor = false;
            while (k < budget && stopped == 0 && !at_floor) {
                solver_->iterate(c_);
                ++k;
                if (c_.stop_) {
                    stopped = k;
                } else if (k % floor_look == 0 || k == budget) {
                    stopped = static_cast<int>(solver_->broken_at(c_));
                    if (c_.failed_ && stopped == 0) stopped = k;  // a failed rank stops where its NaN stops the others
                    // the same on every rank: a sum over them (one_pass: scalars from the summed sums)
                    if (stopped == 0 && k < budget) at_floor = solver_->residual2(c_) <= floor2;
                }
            }
            solver_->catch_up(c_);
            if (at_floor) {
                done += k;
            } else if (stopped > 0) {
                // At the floor on every rank (one rank's failure: none); a stop at a cycle's first iteration made no progress.
                const double rr = solver_->residual2(c_);  // one_pass: of the last pass before the stop
                int floor = !c_.failed_ && stopped > 1 && rr <= floor2 ? 1 : 0;
                FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &floor, 1, MPI_INT, MPI_MIN, c_.comm_));
                if (!floor) {
                    c_.rethrow();
                    throw std::runtime_error(fmt::format(
                        "{} broke down at iteration {} of {} (a scalar not finite or zero, ‖r‖/‖b‖ = {:.3g} above the "
                        "floor {:.3g}): the step would be short",
                        solver_name_, done + stopped, iterations_, std::sqrt(rr / bb_), residual_floor));
                }
                done += stopped - 1;
            } else {
                break;
            }
            ++restarts_;
            c_.local([&] { restart(); });
        }
        c_.rethrow();
    }
    std::vector<double> collect_phase_times() override { return c_.timer_->collect(); }
    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = c_.backend_bytes() + solver_->backend_bytes();
        f.workspace_bytes = f.backend_bytes - c_.b_.bytes() - c_.x_.bytes();
        f.host_staging_bytes = c_.staging_.bytes();
        return f;
    }
    // Per step (iterations_ iterations; the first (r, z) once).
    // The looks at ‖r‖ read r once each (reduce; one_pass reads its scalars), restarts aside.
    std::vector<PhaseTraffic> traffic() const override {
        auto t = solver_->traffic(c_, static_cast<std::size_t>(iterations_));
        t[phase::reduce].device_bytes += static_cast<std::size_t>((iterations_ - 1) / floor_look) * solver_->look_bytes(c_);
        return t;
    }

    // The format's SpMV against the stencil oracle on a random vector; then a
    // solve to 1e-8 with the true residual recomputed; the error to x*.
    ValidationResult validate(MPI_Comm comm) override {
        ValidationResult v;
        const double oracle = c_.spmv_oracle_error(comm);
        // The last step's answer (its last cycle's, after restarts) gives back its r: a restart that
        // left x or r behind shows as a gap of order 1. (Up to 1000 iterations' drift: below 1e-8.)
        const double step_recurrence = std::sqrt(c_.allreduce(c_.local_norm2(c_.r())) / bb_);
        const double step_gap = std::abs(std::sqrt(c_.true_residual2(comm) / bb_) - step_recurrence);
        c_.rethrow();
        // The solve: converged in at most 50 n + 100 iterations, n the largest extent (CG needs O(n) here).
        all_or_none(comm, [&] { restart(); });
        c_.stop_ = false;
        const double bb = c_.allreduce(c_.local_norm2(c_.b()));
        solver_->start(c_);
        double rr = bb;
        converged_iterations_ = 0;
        const int max_iterations = static_cast<int>(50 * std::max({c_.n_[0], c_.n_[1], c_.n_[2]}) + 100);
        while (!c_.stop_ && converged_iterations_ < max_iterations && std::sqrt(rr / bb) > target_residual) {
            solver_->iterate(c_);
            rr = solver_->residual2(c_);
            ++converged_iterations_;
        }
        solver_->catch_up(c_);
        c_.rethrow();
        recurrence_ = std::sqrt(c_.allreduce(c_.local_norm2(c_.r())) / bb);  // the r the solve ends with
        true_residual_ = std::sqrt(c_.true_residual2(comm) / bb);
        c_.rethrow();
        const auto [err2, norm2] = c_.solution_error2(comm);  // ‖x − x*‖², ‖x*‖²
        // ||x - x*|| / ||x*|| <= cond(A) * residual.
        const double cond = OperatorOf<S>::cond(c_.n_);  // of the grid's extents
        v.checks.push_back(make_check("true_residual", true_residual_, 2 * target_residual));
        v.checks.push_back(make_check("recurrence_residual", recurrence_, target_residual));
        v.checks.push_back(make_check("residual_gap", std::abs(true_residual_ - recurrence_), 1e-10));
        v.checks.push_back(make_check("step_residual_gap", step_gap, target_residual));
        Check e = make_check("manufactured_solution", std::sqrt(err2 / norm2), cond * 2 * target_residual);
        e.l2_rel_error = std::sqrt(err2 / norm2);
        v.checks.push_back(e);
        v.checks.push_back(make_check("spmv_oracle", oracle, 1e-14));
        v.checks.push_back(make_check("halo_exchange", c_.halo_error(comm), 0));
        return v;
    }
    void annotate(MPI_Comm, json& record) override {
        record["krylov"] = {{"iterations_per_step", iterations_},
                            {"restarts", restarts_},  // the last step's, from x = 0 at the residual floor
                            {"converged_iterations", converged_iterations_},
                            {"recurrence_residual", recurrence_},
                            {"true_residual", true_residual_},
                            {"nnz", c_.host_->nnz()},
                            {"spmv_bytes", spmv_bytes(c_.format_, *c_.host_)},
                            {"halo_bytes_per_iteration", halo_bytes(c_)},
                            {"copy_GBps", c_.copy_gbps()}};  // the device's copy rate beside the kernels'
    }

private:
    void restart() {
        if (c_.rows() > 0) {
            c_.restart();
            solver_->restart(c_);
        }
        c_.backend_->synchronize();
    }

    Context<S> c_;
    int iterations_;
    std::string solver_name_;
    std::unique_ptr<SolverT<S>> solver_;
    double recurrence_ = 0, true_residual_ = 0;
    int converged_iterations_ = 0;
    double bb_ = 0;     // ‖b‖²
    int restarts_ = 0;  // in the last step
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
        a->sizes = ps.sizes(j.at("sizes"), "/sizes", index_t{1} << 31);
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
        for (const auto& n : a.sizes)
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
                                    pt.problem = {{"kind", "krylov"}, {"ranks", ranks}, {"size", n},
                                                  {"operator", op}, {"precision", info_of(op).precision},
                                                  {"iterations", {a.iterations}}};
                                    pt.config = {{"solver", solver}, {"format", format}, {"fusion", fusion},
                                                 {"preconditioner", pre}, {"backend", backend}, {"halo", halo}};
                                    pt.key = config_key(pt.config);
                                    pt.label = fmt::format("krylov {} {} {}", size_string(n), op, pt.key);
                                    out.push_back(std::move(pt));
                                }
        return out;
    }
    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        const auto n = problem.at("size").get<std::array<index_t, 3>>();
        const int p = problem.at("ranks").get<int>();
        if (n[2] < p) return fmt::format("{} z-planes over {} ranks: every rank needs a plane", n[2], p);
        // One unknown (1^3): a wrong answer shifted by a row is the same answer, so validation means nothing.
        if (std::min({n[0], n[1], n[2]}) < 2)
            return fmt::format("a {} grid has an extent of 1, as 1^3 has one unknown, where validation cannot tell a "
                               "wrong answer (allowed: every extent >= 2)", size_string(n));
        const std::string backend = config.at("backend").get<std::string>();
        const OperatorInfo& op = info_of(problem.at("operator").get<std::string>());
        const std::string solver = config.at("solver").get<std::string>();
        if (!op.takes(solver)) {
            const OperatorInfo& its = operator_for(solver);
            return fmt::format("{} solves {} ({}); {} takes {}", solver, its.kind, its.name, op.name,
                               TestcaseParser::list(op.solvers));
        }
        const bool registered = op.precision == "complex_double"
                                    ? Registry<SolverT<complex>>::instance().contains(solver_key(config))
                                    : Registry<SolverT<double>>::instance().contains(solver_key(config));
        if (!registered) return solver + " runs unfused (one kernel per operation)";  // its only fusion: none
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
        return {{"size", Role::size, {}, "", 3, "N1 N2 N3: the grid of unknowns, x fastest, z-slabs over the ranks (any extents >= 2; N3 >= ranks)"},
                {"operator", Role::category, operators, "poisson7", 0, "poisson7 or curlcurl13"},
                {"precision", Role::category, {"double", "complex_double"}, "double", 0,
                 "the operator's scalar: double (poisson7) or complex_double (curlcurl13)",
                 [](const json& problem) {
                     return info_of(problem.value("operator", std::string("poisson7"))).precision;
                 },
                 "operator"},
                {"iterations", Role::count, {}, "1000", 1, "iterations per solve"}};
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
