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
#include "core/platform/mpi_util.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

// Fill the plan's input with the test field, where it lives (on a device by
// its kernel: no host array, no copy). Rank-local.
void fill_input(Plan& plan, Buffer& in) {
    const auto n = plan.problem().size;
    const Layout& l = plan.input_layout();
    if (!plan.buffers_on_host())
        return plan.backend().fill_separable(in.data(), l, test_input_terms(n, l.box), plan.problem().precision);
    if (plan.problem().precision == Precision::single) fill_test_input(in.as<float>(), l, n);
    else fill_test_input(in.as<double>(), l, n);
}

// One transform of one configuration, timed in the problem's direction.
class Fft3dWorkload final : public Workload {
public:
    Fft3dWorkload(Problem problem, Config config, Point point)
        : problem_(std::move(problem)), config_(std::move(config)), point_(std::move(point)) {}

    // A sweep's points of one size mostly want the same arrays: the next
    // point takes them, and the peers' IPC mappings of them, as they are.
    void setup(MPI_Comm comm) override {
        plan_ = std::make_unique<Plan>(comm, problem_, config_, InverseInput::preserve, ArrayLifetime::kept);
    }
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
        f.kept_before_bytes = plan_->kept_before_bytes();
        return f;
    }
    // Not for a rank driving several GPUs (cufftXt).
    std::vector<PhaseTraffic> traffic() const override {
        if (plan_->devices() != 1) return {};
        return plan_->phase_traffic(dir());
    }
    // Small grids: validation allocates its own input and output (never both
    // sets at once) for the full checks. Large ones check what the timing left
    // in these (validate_timed): a fraction of the timing's cost.
    void release() override {
        if (validated_by_samples(problem_)) return;
        real_ = Buffer();
        complex_ = Buffer();
    }
    // The plan's arrays stay for a next point of the same configuration and
    // problem (the other direction: one plan holds both); any other point
    // would only let them go in its set-up.
    void end(MPI_Comm comm, const Point* next) override {
        auto but_direction = [](json problem) {
            problem.erase("direction");
            return problem;
        };
        if (next && next->family() == "fft3d" && next->config == point_.config &&
            but_direction(next->problem) == but_direction(point_.problem))
            return;
        real_ = Buffer();  // the plan's backend's memory: before the plan
        complex_ = Buffer();
        plan_.reset();
        KeptArrays::instance().release(comm);
    }
    ValidationResult validate(MPI_Comm) override {
        if (validated_by_samples(problem_)) return validate_timed(*plan_, real_, complex_, dir());
        return fftune::validate(*plan_);
    }
    // Where the plan's set-up time went (rank 0's host times, Plan::setup_parts_ms).
    void annotate(MPI_Comm, json& record) override {
        json parts = json::object();
        for (const auto& [part, ms] : plan_->setup_parts_ms()) parts[part] = ms;
        record["fft3d"] = {{"setup_parts_ms", parts},
                           {"kept_arrays", {{"before_bytes", plan_->kept_before_bytes()},
                                            {"reused_bytes", plan_->kept_reused_bytes()}}}};
    }

private:
    Direction dir() const { return problem_.direction; }
    const void* src() const { return dir() == Direction::forward ? real_.data() : complex_.data(); }
    void* dst() const { return dir() == Direction::forward ? complex_.data() : real_.data(); }

    Problem problem_;
    Config config_;
    Point point_;
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
        std::vector<std::string> keys{"sizes", "precision", "direction"};
        for (const auto& k : engine_axis_keys()) keys.push_back(k);
        return keys;
    }

    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j,
                                            const std::vector<int>& ranks) const override {
        auto tc = std::make_shared<Fft3dAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        tc->sizes = ps.sizes(j.at("sizes"), "/sizes");
        tc->precisions = ps.enum_axis<Precision>(TestcaseParser::value_or(j, "precision", "double"), "/precision");
        tc->directions = ps.enum_axis<Direction>(TestcaseParser::value_or(j, "direction", "forward"), "/direction");
        static_cast<EngineAxes&>(*tc) = parse_engine_axes(ps, j, ranks);
        return tc;
    }

    std::vector<Point> points(const FamilyAxes& any, int p) const override {
        const auto& tc = dynamic_cast<const Fft3dAxes&>(any);
        std::vector<Point> out;
        for (const auto& size : tc.sizes)
            for (const auto& dname : tc.decompositions)
                for (const auto& shape : engine_shapes(tc, dname, p))
                    for (auto precision : tc.precisions)
                        for (auto direction : tc.directions)
                            for (const auto& config : engine_configs(tc, dname, shape)) {
                                Point pt = fft3d_point({"fft3d", size, precision, direction, p}, config);
                                pt.index = static_cast<int>(out.size());
                                out.push_back(std::move(pt));
                            }
        return out;
    }

    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        return check_applicable(problem.get<Problem>(), config.get<Config>());
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        return std::make_unique<Fft3dWorkload>(fft3d_problem(point), fft3d_config(point), point);
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
        std::vector<Adapted> out;
        for (const auto& c : fftune::adapt_to_ranks(measured, ranks)) out.push_back({c, regridded(measured, c, ranks)});
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

}  // namespace fftune
