#include "families/fft3d/fft3d.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/base/registry.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/transport.hpp"
#include "core/engine/validation.hpp"
#include "core/platform/device_fault.hpp"
#include "core/platform/host_scratch.hpp"
#include "core/platform/mpi_util.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

// Fill the plan's input with the test field. Rank-local.
void fill_input(Plan& plan, Buffer& in) {
    Backend& be = plan.backend();
    const auto n = plan.problem().size;
    auto load_real = [&](auto zero) {
        using T = decltype(zero);
        if (plan.buffers_on_host()) return fill_test_input(in.as<T>(), plan.input_layout(), n);
        T* f = host_scratch(ScratchRole::test_input).get<T>(plan.input_layout().box.count(), &be);
        fill_test_input(f, plan.input_layout(), n);
        be.copy_from_host(in.data(), f, plan.input_bytes());
    };
    if (plan.problem().precision == Precision::single) load_real(float{});
    else load_real(double{});
}

// One transform of one configuration, timed in the problem's direction.
class Fft3dWorkload final : public Workload {
public:
    Fft3dWorkload(Problem problem, Config config) : problem_(std::move(problem)), config_(std::move(config)) {}

    void setup(MPI_Comm comm) override { plan_ = std::make_unique<Plan>(comm, problem_, config_); }
    Backend& backend() override { return plan_->backend(); }

    void prepare(MPI_Comm comm) override {
        // Allocating and filling are rank-local: agreed before the first exchange.
        all_or_none(comm, [&] {
            real_ = plan_->allocate_input();
            complex_ = plan_->allocate_output();
            fill_input(*plan_, real_);
        });
        if (dir() == Direction::inverse) {
            // The inverse reads the spectrum: forward once, then swap roles.
            const auto failed = unless_device_lost(plan_->backend(), comm, failure_of([&] {
                plan_->forward(real_.data(), complex_.data());
            }));
            all_or_none(comm, failed, [&] { plan_->collect_phase_times(Direction::forward); });
        }
    }

    std::unique_ptr<PhaseClock> make_clock() override { return plan_->make_clock(); }
    std::vector<std::string> phase_names() override { return plan_->phase_names(dir()); }
    // Plans that transform in storage of their own (reference_cufftxt) copy the
    // input there outside the timed region; for the others these calls do
    // nothing and run_staged() is forward()/inverse().
    void stage() override {
        plan_->stage(dir(), src());
        plan_->restage(dir());
    }
    void restage() override { plan_->restage(dir()); }
    void step() override { plan_->run_staged(dir(), src(), dst()); }
    std::vector<double> collect_phase_times() override { return plan_->collect_phase_times(dir()); }
    // FFT slices run beside reshapes (Config::overlap): phases add up to more than the total.
    std::string timing_mode() const override { return config_.overlap > 1 ? "overlapped" : "attribution"; }

    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = plan_->backend_bytes();
        f.workspace_bytes = plan_->workspace_bytes();
        f.host_staging_bytes = plan_->host_staging_bytes();
        f.devices = plan_->devices();
        f.ranks_on_device = plan_->ranks_on_device();
        // The backend's device is one of several: the plan measures them all.
        if (f.devices > 1) f.measured_multi_device_bytes = plan_->measured_multi_device_bytes();
        return f;
    }
    // Not for a rank driving several GPUs (cufftXt).
    std::vector<PhaseTraffic> traffic() const override {
        if (plan_->devices() != 1) return {};
        return plan_->phase_traffic(dir());
    }
    // Validation allocates its own input and output: never both sets at once.
    void release() override {
        real_ = Buffer();
        complex_ = Buffer();
    }
    ValidationResult validate(MPI_Comm) override { return fftune::validate(*plan_); }

private:
    Direction dir() const { return problem_.direction; }
    const void* src() const { return dir() == Direction::forward ? real_.data() : complex_.data(); }
    void* dst() const { return dir() == Direction::forward ? complex_.data() : real_.data(); }

    Problem problem_;
    Config config_;
    std::unique_ptr<Plan> plan_;
    Buffer real_, complex_;
};

class Fft3dFamily final : public Family {
public:
    std::string name() const override { return "fft3d"; }
    std::string summary() const override {
        return "distributed 3D real-to-complex FFT (forward r2c, inverse c2r): decomposition x layout x "
               "redistribution x process grid";
    }

    std::vector<std::string> testcase_keys() const override {
        return {"sizes", "precision", "direction", "decomposition", "layout", "redistribution", "redistribution_phases",
                "process_grid", "backend", "gpu_aware", "overlap", "fft_stores_kept"};
    }

    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j,
                                            const std::vector<int>& ranks) const override {
        auto tc = std::make_shared<Fft3dAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        tc->sizes = ps.sizes(j.at("sizes"), "/sizes");
        tc->precisions = ps.enum_axis<Precision>(TestcaseParser::value_or(j, "precision", "double"), "/precision");
        tc->directions = ps.enum_axis<Direction>(TestcaseParser::value_or(j, "direction", "forward"), "/direction");
        tc->layouts = ps.enum_axis<LayoutVariant>(TestcaseParser::value_or(j, "layout", "all"), "/layout");
        tc->decompositions = ps.names_axis(TestcaseParser::value_or(j, "decomposition", "all"), "/decomposition",
                                           Registry<Decomposition>::instance().names());
        tc->backends = ps.names_axis(TestcaseParser::value_or(j, "backend", "fftw"), "/backend",
                                     Registry<Backend>::instance().names());
        const auto methods = Registry<Transport>::instance().names();
        tc->redistribution = {
            ps.names_axis(TestcaseParser::value_or(j, "redistribution", "all"), "/redistribution", methods)};
        if (j.contains("redistribution_phases")) {
            // Either one axis for every phase or one per phase: both would silently drop one.
            if (j.contains("redistribution"))
                ps.fail("/redistribution_phases",
                        fmt::format("given together with /redistribution {} (allowed: one of them: \"redistribution\" "
                                    "uses each method in every phase, \"redistribution_phases\" takes one axis per "
                                    "phase)",
                                    j.at("redistribution").dump()));
            const json& ph = j.at("redistribution_phases");
            if (!ph.is_array() || ph.size() != 2)
                ps.fail("/redistribution_phases",
                        fmt::format("{} is not a list of two axes (phase 0, phase 1)", ph.dump()));
            tc->redistribution = {ps.names_axis(ph[0], "/redistribution_phases/0", methods),
                                  ps.names_axis(ph[1], "/redistribution_phases/1", methods)};
        }

        const json grid = TestcaseParser::value_or(j, "process_grid", "auto");
        if (grid.is_string() && grid.get<std::string>() == "auto") {
            tc->grid_mode = Fft3dAxes::GridMode::automatic;
        } else if (grid.is_string() && grid.get<std::string>() == "all") {
            tc->grid_mode = Fft3dAxes::GridMode::all;
        } else if (grid.is_array() && !grid.empty()) {
            tc->grid_mode = Fft3dAxes::GridMode::list;
            for (std::size_t i = 0; i < grid.size(); ++i) {
                const std::string p = fmt::format("/process_grid/{}", i);
                if (!grid[i].is_array() || grid[i].size() != 2)
                    ps.fail(p, fmt::format("{} is not [P1, P2]", grid[i].dump()));
                tc->grids.push_back({ps.integer(grid[i][0], p + "/0", 1), ps.integer(grid[i][1], p + "/1", 1)});
            }
        } else {
            ps.fail("/process_grid", fmt::format("{} is not a process grid axis (allowed: \"auto\", \"all\", or a list "
                                                 "of [P1, P2])",
                                                 grid.dump()));
        }
        for (std::size_t i = 0; i < tc->grids.size(); ++i) {
            const int n = tc->grids[i][0] * tc->grids[i][1];
            if (std::find(ranks.begin(), ranks.end(), n) == ranks.end())
                ps.fail(fmt::format("/process_grid/{}", i),
                        fmt::format("{}x{} needs {} ranks, which /ranks ({}) does not list", tc->grids[i][0],
                                    tc->grids[i][1], n, fmt::join(ranks, ", ")));
        }

        // A boolean axis: true, false, a list of them, or "all".
        auto bool_axis = [&](const char* key) {
            const json a = TestcaseParser::value_or(j, key, false);
            const std::string path = fmt::format("/{}", key);
            std::vector<bool> out;
            if (a.is_string() && a.get<std::string>() == "all") {
                out = {false, true};
            } else if (a.is_boolean()) {
                out = {a.get<bool>()};
            } else if (a.is_array() && !a.empty()) {
                for (std::size_t i = 0; i < a.size(); ++i) {
                    if (!a[i].is_boolean())
                        ps.fail(fmt::format("{}/{}", path, i),
                                fmt::format("{} is not a boolean (allowed: true, false, or \"all\")", a[i].dump()));
                    out.push_back(a[i].get<bool>());
                }
            } else {
                ps.fail(path, fmt::format("{} is not a boolean axis (allowed: true, false, a list of them, or "
                                          "\"all\")",
                                          a.dump()));
            }
            return out;
        };
        tc->gpu_aware = bool_axis("gpu_aware");
        tc->fft_stores_kept = bool_axis("fft_stores_kept");

        // Overlap chunks: K or a list of them; 1 is no overlap.
        const json ov = TestcaseParser::value_or(j, "overlap", 1);
        if (ov.is_array() && ov.empty()) ps.fail("/overlap", "empty list (give chunk counts, 1 for no overlap)");
        tc->overlap.clear();
        for (std::size_t i = 0; i < (ov.is_array() ? ov.size() : 1); ++i) {
            const std::string p = ov.is_array() ? fmt::format("/overlap/{}", i) : "/overlap";
            const int k = ps.integer(ov.is_array() ? ov[i] : ov, p, 1);
            if (k > max_overlap_chunks)
                ps.fail(p, fmt::format("{} chunks is out of range (allowed: 1 to {})", k, max_overlap_chunks));
            tc->overlap.push_back(k);
        }
        return tc;
    }

    std::vector<Point> points(const FamilyAxes& any, int p) const override {
        const auto& tc = dynamic_cast<const Fft3dAxes&>(any);
        std::vector<Point> out;
        auto& decomps = Registry<Decomposition>::instance();
        for (const auto& size : tc.sizes)
            for (const auto& dname : tc.decompositions) {
                const auto decomposition = decomps.create(dname);
                std::vector<std::array<int, 2>> gs;
                if (!decomposition->uses_process_grid()) gs = {{p, 1}};
                else if (tc.grid_mode == Fft3dAxes::GridMode::automatic) gs = {auto_grid(p)};
                else if (tc.grid_mode == Fft3dAxes::GridMode::all) gs = all_grids(p);
                else gs = tc.grids;
                // Methods: "redistribution" uses each method for every phase;
                // "redistribution_phases" takes the product of the per-phase axes.
                const int phases = decomposition->redistribution_phases();
                std::vector<std::vector<std::string>> combos;
                if (tc.redistribution.size() == 1) {
                    for (const auto& m : tc.redistribution[0]) combos.push_back(std::vector<std::string>(phases, m));
                    if (phases == 0) combos = {{}};
                } else {
                    combos = {{}};
                    for (int ph = 0; ph < phases; ++ph) {
                        std::vector<std::vector<std::string>> next;
                        for (const auto& c : combos)
                            for (const auto& m : tc.redistribution[ph]) {
                                next.push_back(c);
                                next.back().push_back(m);
                            }
                        combos = std::move(next);
                    }
                }
                for (auto layout : tc.layouts)
                    for (const auto& grid : gs)
                        for (const auto& methods : combos)
                            for (auto precision : tc.precisions)
                                for (auto direction : tc.directions)
                                    for (const auto& backend : tc.backends)
                                        for (bool aware : tc.gpu_aware)
                                            for (int chunks : tc.overlap)
                                                for (bool kept : tc.fft_stores_kept) {
                                                    Point pt = fft3d_point({"fft3d", size, precision, direction, p},
                                                                           {backend, dname, layout, grid, methods, aware,
                                                                            chunks, kept});
                                                    pt.index = static_cast<int>(out.size());
                                                    out.push_back(std::move(pt));
                                                }
            }
        return out;
    }

    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        return check_applicable(problem.get<Problem>(), config.get<Config>());
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        return std::make_unique<Fft3dWorkload>(fft3d_problem(point), fft3d_config(point));
    }

    std::string config_key(const json& config) const override { return config.get<Config>().key(); }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        return {{"size", Role::size, {}, "", 3, "Nx Ny Nz of the real data"},
                {"precision", Role::category, all_names<Precision>(), "double", 0, "single or double"},
                {"direction", Role::category, all_names<Direction>(), "forward", 0,
                 "forward (r2c) or inverse (c2r)"}};
    }
    std::vector<std::string> config_axes() const override {
        return {"decomposition", "layout",   "redistribution", "process_grid",
                "backend",       "gpu_aware", "overlap",        "fft_stores_kept"};
    }
    json default_config(const json& problem) const override {
        return fftune::default_config(problem.get<Problem>());
    }
    std::vector<Adapted> adapt_to_ranks(const json& config, int ranks) const override {
        const Config measured = config.get<Config>();
        auto grid = [](const std::array<int, 2>& g) { return fmt::format("{}x{}", g[0], g[1]); };
        std::vector<Adapted> out;
        for (const auto& c : fftune::adapt_to_ranks(measured, ranks))
            out.push_back({c, c.process_grid == measured.process_grid
                                  ? ""
                                  : fmt::format("with the process grid {} re-derived as {} for {} ranks",
                                                grid(measured.process_grid), grid(c.process_grid), ranks)});
        return out;
    }
    std::optional<PhaseSplit> phase_split(const Point& point) const override {
        const auto& methods = point.config.at("redistribution");
        if (methods.size() < 2) return std::nullopt;
        json rest = point.config;
        rest.erase("redistribution");
        return PhaseSplit{problem_key(point.problem) + rest.dump(), methods.get<std::vector<std::string>>()};
    }
    std::string per_phase_key() const override { return "redistribution_phases"; }
    std::string problem_label(const json& p) const override {
        return fmt::format("{:>14} {:>6} {:>7}", size_string(p.at("size").get<std::array<index_t, 3>>()),
                           p.at("precision").get<std::string>(), p.at("direction").get<std::string>());
    }
    std::string problem_header() const override { return fmt::format("{:>14} {:>6} {:>7}", "size", "prec", "dir"); }
};

const bool registered = register_variant<Family, Fft3dFamily>("fft3d");

bool usable(const Backend& b) { return !b.unavailable(); }

bool applies(const Problem& p, const Config& c) {
    try {
        return !check_applicable(p, c);
    } catch (const std::exception&) {
        return false;  // a name this build does not have
    }
}

}  // namespace

const Fft3dAxes& fft3d_axes(const Testcase& tc) {
    const auto* axes = dynamic_cast<const Fft3dAxes*>(tc.axes.get());
    if (!axes) throw std::invalid_argument("testcase " + tc.name + " is not an fft3d testcase (problem " + tc.problem + ")");
    return *axes;
}

const Fft3dAxes& fft3d_axes(const FamilyAxes& axes) { return dynamic_cast<const Fft3dAxes&>(axes); }

Problem fft3d_problem(const Point& point) { return point.problem.get<Problem>(); }
Config fft3d_config(const Point& point) { return point.config.get<Config>(); }

Point fft3d_point(const Problem& problem, const Config& config) {
    Point pt;
    pt.problem = problem;
    pt.config = config;
    pt.key = config.key();
    pt.label = fmt::format("{} {} {} {}", size_string(problem.size), pt.key, to_string(problem.precision),
                           to_string(problem.direction));
    return pt;
}

Config default_config(const Problem& problem) {
    // The GPU when there is one (NCCL when built), else FFTW; slabs while every
    // rank gets an x-plane, pencils on the most square grid beyond that.
    std::string backend = "fftw";
    std::string method = "a2a_sync";
    if (Registry<Backend>::instance().contains("cuda") && usable(*Registry<Backend>::instance().create("cuda"))) {
        backend = "cuda";
        if (Registry<Transport>::instance().contains("nccl_a2a")) method = "nccl_a2a";
    }
    const int p = problem.ranks;
    if (p == 1) return {backend, "reference_3d", LayoutVariant::default_, {1, 1}, {}, false};
    Config slab{backend, "slab_2d1d", LayoutVariant::default_, {p, 1}, {method}, false};
    if (applies(problem, slab)) return slab;
    // Pencil grids from the most square one (P1 >= P2 first) to the most elongated.
    auto grids = all_grids(p);
    std::stable_sort(grids.begin(), grids.end(), [](const auto& a, const auto& b) {
        auto skew = [](const std::array<int, 2>& g) {
            return std::abs(std::log(double(g[0]) / g[1])) - (g[0] >= g[1] ? 1e-9 : 0);
        };
        return skew(a) < skew(b);
    });
    for (const auto& g : grids) {
        Config pencil{backend, "pencil", LayoutVariant::default_, g, {method, method}, false};
        if (applies(problem, pencil)) return pencil;
    }
    return slab;  // nothing applies (e.g. more ranks than Nx * Ny); Plan will say why
}

std::vector<Config> adapt_to_ranks(const Config& c, int ranks) {
    std::vector<Config> out;
    if (!Registry<Decomposition>::instance().contains(c.decomposition)) return out;
    if (!Registry<Decomposition>::instance().create(c.decomposition)->uses_process_grid()) {
        Config a = c;
        a.process_grid = {ranks, 1};  // slabs (and the one-rank reference) use P x 1
        out.push_back(a);
        return out;
    }
    // Pencils: every grid of the new rank count, the aspect P1/P2 nearest the measured one first.
    auto grids = all_grids(ranks);
    const double aspect = std::log(double(c.process_grid[0]) / double(c.process_grid[1]));
    // Key: distance in log aspect (rounded, so equal distances tie), then P1 >= P2 first.
    auto key = [&](const std::array<int, 2>& g) {
        return std::make_pair(std::llround(1e9 * std::abs(std::log(double(g[0]) / g[1]) - aspect)), g[0] < g[1]);
    };
    std::stable_sort(grids.begin(), grids.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    for (const auto& g : grids) {
        Config a = c;
        a.process_grid = g;
        out.push_back(a);
    }
    return out;
}

}  // namespace fftune
