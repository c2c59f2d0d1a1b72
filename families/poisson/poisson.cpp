// The poisson family (README.md beside this file): ∇²φ = −4πρ with free,
// wire, surface or periodic boundaries, by the padded or the zero-skipping
// algorithm (solver.hpp), validated against an analytic solution per boundary.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/engine/validation.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/run/family.hpp"
#include "core/run/engine_axes.hpp"
#include "families/poisson/solver.hpp"

namespace fftune::poisson {
namespace {

using json = nlohmann::json;

// The engine's keys a padded point takes from the testcase (core/run/engine_axes.hpp).
const std::vector<std::string> engine_keys{"decomposition", "layout", "redistribution", "redistribution_phases",
                                           "process_grid", "backend", "gpu_aware"};

struct PoissonAxes : FamilyAxes {
    std::vector<Size> sizes;
    std::vector<Boundary> boundaries;
    std::vector<Kernel> kernels;
    std::vector<std::string> algorithms;
    std::vector<Precision> precisions;
    std::vector<std::string> backends;
    std::vector<std::string> methods;  // zero_skipping's slab reshape: every method the testcase names
    EngineAxes engine;  // the padded transform's configurations
};

json config_of(const std::string& algorithm, const json& engine_config) {
    json c = engine_config;
    c["algorithm"] = algorithm;
    return c;
}

class PoissonWorkload final : public Workload {
public:
    explicit PoissonWorkload(const Point& pt) : problem_(pt.problem.get<Problem>()), config_(pt.config) {}

    void setup(MPI_Comm comm) override { solver_ = make_solver(comm, problem_, config_); }
    Backend& backend() override { return solver_->backend(); }
    void prepare(MPI_Comm comm) override {
        all_or_none(comm, [&] { rho_filled_ = fill_rho(*solver_, {problem_.n, problem_.boundary}, problem_.precision); });
    }
    std::unique_ptr<PhaseClock> make_clock() override { return solver_->make_clock(); }
    std::vector<std::string> phase_names() override { return solver_->phase_names(); }
    void step() override { solver_->solve(); }
    std::vector<double> collect_phase_times() override { return solver_->collect_phase_times(); }
    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = solver_->backend_bytes();
        f.workspace_bytes = solver_->workspace_bytes();
        f.host_staging_bytes = solver_->host_staging_bytes();
        f.ranks_on_device = solver_->ranks_on_device();
        return f;
    }
    std::vector<PhaseTraffic> traffic() const override { return solver_->traffic(); }

    // Max and L2 relative error against the analytic solution, over every
    // rank's part (check_phi: on the device every plane; on the host, from
    // 2^24 points on, sampled x-planes).
    ValidationResult validate(MPI_Comm comm) override {
        const bool large = problem_.n[0] * problem_.n[1] * problem_.n[2] >= sampled_validation_min_points;
        PhiCheck check;
        all_or_none(comm, [&] {  // a device reduction or copy: agreed before the reductions
            check = check_phi(*solver_, {problem_.n, problem_.boundary}, problem_.precision, large);
        });
        phi_checked_ = check.where;
        const bool sampled = check.sampled;
        const PhiErrors& e = check.errors;
        double local[5] = {e.max_error, e.max_exact, e.not_finite ? 1.0 : 0.0, e.sum_error2, e.sum_exact2};
        double mx[3], sum[2];
        FFTUNE_MPI_CHECK(MPI_Allreduce(local, mx, 3, MPI_DOUBLE, MPI_MAX, comm));
        FFTUNE_MPI_CHECK(MPI_Allreduce(local + 3, sum, 2, MPI_DOUBLE, MPI_SUM, comm));
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double max_rel = mx[2] > 0 ? nan : mx[1] > 0 ? mx[0] / mx[1] : mx[0];
        Check c = make_check("analytic_" + to_string(problem_.boundary) + (sampled ? "_sampled" : ""), max_rel,
                             tolerance(problem_.n, problem_.boundary, problem_.kernel,
                                       problem_.precision == Precision::single));
        c.l2_rel_error = mx[2] > 0 ? nan : sum[1] > 0 ? std::sqrt(sum[0] / sum[1]) : std::sqrt(sum[0]);
        return {{c}};
    }
    void annotate(MPI_Comm, json& record) override {
        json d = solver_->details();
        d["kernel_setup_ms"] = solver_->kernel_setup_ms();
        d["kernel_built"] = solver_->kernel_built();
        d["rho_filled"] = rho_filled_;
        d["phi_checked"] = phi_checked_;
        record["poisson"] = d;
    }

private:
    Problem problem_;
    json config_;
    std::unique_ptr<Solver> solver_;
    std::string rho_filled_, phi_checked_;  // "backend" or "host: REASON" (fill_rho, check_phi)
};

// The kernels some boundary of `bs` takes.
std::vector<std::string> allowed_kernels(const std::vector<Boundary>& bs) {
    std::vector<std::string> out;
    for (auto k : all_values<Kernel>())
        if (std::any_of(bs.begin(), bs.end(), [&](Boundary b) { return !kernel_not_applicable(b, k); }))
            out.push_back(to_string(k));
    return out;
}

class PoissonFamily final : public Family {
public:
    std::string name() const override { return "poisson"; }
    std::string summary() const override {
        return "Poisson solver, free/wire/surface/periodic boundaries (Dugan et al.): padded or zero-skipping "
               "convolution with the Green's function";
    }
    std::vector<std::string> testcase_keys() const override {
        std::vector<std::string> k{"sizes", "boundary", "kernel", "algorithm", "precision"};
        k.insert(k.end(), engine_keys.begin(), engine_keys.end());
        return k;
    }

    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j,
                                            const std::vector<int>& ranks) const override {
        auto a = std::make_shared<PoissonAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        a->sizes = ps.sizes(j.at("sizes"), "/sizes", index_t{1} << 36);
        a->boundaries = ps.enum_axis<Boundary>(TestcaseParser::value_or(j, "boundary", "all"), "/boundary");
        a->kernels = ps.enum_axis<Kernel>(TestcaseParser::value_or(j, "kernel", "hockney"), "/kernel");
        a->algorithms = ps.names_axis(TestcaseParser::value_or(j, "algorithm", "all"), "/algorithm",
                                      Registry<Solver>::instance().names());
        a->precisions = ps.enum_axis<Precision>(TestcaseParser::value_or(j, "precision", "double"), "/precision");
        // A kernel no listed boundary takes is refused (regularized4: free only).
        for (std::size_t i = 0; i < a->kernels.size(); ++i) {
            std::string why;
            bool any = false;
            for (auto b : a->boundaries) {
                const auto w = kernel_not_applicable(b, a->kernels[i]);
                any = any || !w;
                if (w) why = *w;
            }
            if (!any)
                ps.fail(a->kernels.size() > 1 || (j.contains("kernel") && j.at("kernel").is_array())
                            ? fmt::format("/kernel/{}", i)
                            : "/kernel",
                        why + " (allowed with /boundary as given: " +
                            TestcaseParser::list(allowed_kernels(a->boundaries)) + ")");
        }
        // A size no listed boundary can check is refused (size_not_applicable).
        const bool one = !j.at("sizes").is_array();  // a list's entries are /sizes/i (TestcaseParser::sizes)
        for (std::size_t i = 0; i < a->sizes.size(); ++i) {
            std::optional<std::string> why;
            bool any = false;
            for (auto b : a->boundaries) {
                const auto w = size_not_applicable(a->sizes[i], b);
                any = any || !w;
                if (w && !why) why = w;
            }
            if (!any)
                ps.fail(one ? "/sizes" : fmt::format("/sizes/{}", i),
                        fmt::format("{} (allowed: at least {} points along the smallest side; periodic: {} per axis)",
                                    *why, min_points_charged, min_points_periodic));
        }
        // The engine's axes (errors name the same paths as fft3d's).
        json e = json::object();
        for (const auto& k : engine_keys)
            if (j.contains(k)) e[k] = j.at(k);
        a->engine = parse_engine_axes(ps, e, ranks);
        a->backends = a->engine.backends;
        for (const auto& phase : a->engine.redistribution)
            for (const auto& m : phase)
                if (std::find(a->methods.begin(), a->methods.end(), m) == a->methods.end()) a->methods.push_back(m);
        return a;
    }

    std::vector<Point> points(const FamilyAxes& any, int ranks) const override {
        const auto& a = dynamic_cast<const PoissonAxes&>(any);
        // The padded transform's configurations at this rank count.
        std::vector<json> engine;
        for (const auto& c : engine_configs(a.engine, ranks)) engine.push_back(c);
        std::vector<Point> out;
        for (const auto& size : a.sizes)
            for (auto b : a.boundaries)
                for (auto k : a.kernels) {
                    if (kernel_not_applicable(b, k)) continue;
                    for (auto precision : a.precisions)
                        for (const auto& algorithm : a.algorithms) {
                            std::vector<json> configs;
                            // Algorithms of their own (zero_skipping) take backends and methods only.
                            if (solver({{"algorithm", algorithm}}).takes_engine_configurations()) {
                                for (const auto& c : engine) configs.push_back(config_of(algorithm, c));
                            } else {
                                // One rank has no reshape: one point per backend.
                                for (const auto& be : a.backends)
                                    for (const auto& method : ranks == 1 ? std::vector<std::string>{""} : a.methods)
                                        configs.push_back({{"algorithm", algorithm},
                                                           {"backend", be},
                                                           {"redistribution", method.empty() ? json::array()
                                                                                             : json::array({method})}});
                            }
                            for (const auto& c : configs) {
                                Point pt;
                                pt.index = static_cast<int>(out.size());
                                pt.problem = Problem{size, b, k, precision, ranks};
                                pt.config = c;
                                pt.key = config_key(c);
                                pt.label = fmt::format("{} {} {} {} {}", size_string(size), to_string(b), to_string(k),
                                                       to_string(precision), pt.key);
                                out.push_back(std::move(pt));
                            }
                        }
                }
        return out;
    }

    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        const Problem p = problem.get<Problem>();
        if (auto why = kernel_not_applicable(p.boundary, p.kernel)) return why;
        if (auto why = size_not_applicable(p.n, p.boundary, p.kernel)) return why;
        return solver(config).not_applicable(p, config);
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        return std::make_unique<PoissonWorkload>(point);
    }

    std::string config_key(const json& c) const override {
        return c.at("algorithm").get<std::string>() + "/" + solver(c).key(c);
    }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        return {{"size", Role::size, {}, "", 3, "Nx Ny Nz of the grid (not padded)"},
                {"boundary", Role::category, all_names<Boundary>(), "free", 0, "free, wire, surface or periodic"},
                {"kernel", Role::category, all_names<Kernel>(), "hockney", 0, "Green's function: hockney or regularized4"},
                {"precision", Role::category, all_names<Precision>(), "double", 0, "single or double"}};
    }
    std::vector<std::string> config_axes() const override {
        return {"algorithm", "backend", "decomposition", "layout", "redistribution", "process_grid", "gpu_aware"};
    }
    json default_config(const json& problem) const override {
        const Problem p = problem.get<Problem>();
        return config_of("padded", fftune::default_config({"fft3d", padded_size(p.n, p.boundary), p.precision,
                                                           Direction::forward, p.ranks}));
    }
    std::vector<Adapted> adapt_to_ranks(const json& config, int ranks) const override {
        if (!config.contains("decomposition")) return {{config, ""}};
        std::vector<Adapted> out;
        const Config measured = config.get<Config>();
        for (const auto& c : fftune::adapt_to_ranks(measured, ranks))
            out.push_back({config_of(config.at("algorithm").get<std::string>(), c), regridded(measured, c, ranks)});
        return out;
    }

private:
    const Solver& solver(const json& config) const {
        const std::string a = config.at("algorithm").get<std::string>();
        static std::mutex mutex;
        static std::map<std::string, std::unique_ptr<Solver>> made;  // stateless until setup
        std::lock_guard lock(mutex);
        auto& s = made[a];
        if (!s) s = Registry<Solver>::instance().create(a);
        return *s;
    }
};

const bool registered = register_variant<Family, PoissonFamily>("poisson");

}  // namespace
}  // namespace fftune::poisson
