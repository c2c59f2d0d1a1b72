// The padded algorithm: the whole padded grid (zeros included) through the
// engine's distributed r2c transform, the kernel multiply on its spectrum,
// and the c2r back. Every decomposition, layout and transport of the engine.
#include <chrono>

#include <fmt/format.h>

#include "core/platform/parallel.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/platform/mpi_util.hpp"
#include "families/poisson/solver.hpp"

namespace fftune::poisson {
namespace {

using json = nlohmann::json;

fftune::Problem engine_problem(const Problem& p) {
    return {"fft3d", padded_size(p.n, p.boundary), p.precision, Direction::forward, p.ranks};
}

fftune::Config engine_config(const json& c) {
    json e = c;
    e.erase("algorithm");
    return e.get<fftune::Config>();
}

class Padded final : public Solver {
public:
    std::optional<std::string> not_applicable(const Problem& p, const json& c) const override {
        if (auto why = check_applicable(engine_problem(p), engine_config(c))) return why;
        // A transform over every device of the process keeps its arrays in lent
        // host memory, one input at a time: the solver needs two.
        const auto ec = engine_config(c);
        const auto chain = Registry<Decomposition>::instance().create(ec.decomposition)->chain(engine_problem(p), ec, 0);
        if (chain.steps.size() == 1 && chain.steps[0].all_devices)
            return "the padded solver holds two real arrays; " + ec.decomposition + " lends one";
        return std::nullopt;
    }
    bool takes_engine_configurations() const override { return true; }
    std::string key(const json& c) const override { return engine_config(c).key(); }

    void setup(MPI_Comm comm, const Problem& p, const json& c) override {
        problem_ = p;
        // The spectrum is discarded after the inverse: no copy of it (InverseInput::destroy).
        plan_ = std::make_unique<Plan>(comm, engine_problem(p), engine_config(c), InverseInput::destroy);
        Backend& be = plan_->backend();
        // The plan checked its own arrays; the padded ρ, the spectrum, φ and the
        // kernel must fit beside them too (else cudaMalloc fails mid-setup).
        // (Not for a transform over every device: its arrays are pinned host memory.)
        if (!(plan_->buffers_on_host() && be.device_memory()))
            require_device_memory(comm, be, 2 * plan_->input_bytes() + plan_->output_bytes() +
                                                 std::size_t(plan_->output_count()) * real_bytes(p.precision));
        all_or_none(comm, [&] {
            in_ = plan_->allocate_input();
            spectrum_ = plan_->allocate_output();
            out_ = plan_->allocate_input();
            // The padding is zero once and for all: solve() never writes the input.
            be.zero(in_.data(), plan_->input_bytes());
            const auto t0 = std::chrono::steady_clock::now();
            kernel_ = Buffer(be, std::size_t(plan_->output_count()) * real_bytes(p.precision));
            kernel_built_ = build_spectral_kernel(be, p.n, p.boundary, p.kernel, plan_->output_layout(), p.precision,
                                                  kernel_.data());
            kernel_setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            timer_ = std::make_unique<PhaseTimer>(be);
            timer_->phase("kernel");
        });
    }
    Backend& backend() override { return plan_->backend(); }
    Box3 physical_box() const override { return intersect(plan_->input_layout().box, {{0, 0, 0}, problem_.n}); }

    // The physical box in the input array, and packed as ρ and φ come (x
    // slowest), both walked in the input layout's axis order: what load_rho()
    // and phi() copy, so that only the physical points cross to and from the host.
    std::pair<StridedRegion, StridedRegion> physical_regions() const {
        const Layout& l = plan_->input_layout();
        const Box3 box = physical_box();
        StridedRegion packed = packed_region(l, box, 0);
        const auto st = Layout{box, order_xyz}.strides();
        for (int d = 0; d < 3; ++d) packed.stride[d] = st[l.order[d]];
        return {region_of(l, box), packed};
    }

    GridArray rho_array() override { return grid_array(in_.data(), plan_->input_layout(), physical_box()); }
    GridArray phi_array() override { return grid_array(out_.data(), plan_->input_layout(), physical_box()); }

    // The padding stays the zero that setup() wrote.
    void load_rho(const std::vector<double>& rho) override {
        if (rho.empty()) return;
        const auto [in_grid, packed] = physical_regions();
        auto load = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(rho.size());
            parallel_for(0, std::int64_t(rho.size()), [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = lo; k < hi; ++k) host[std::size_t(k)] = T(rho[std::size_t(k)]);
            });
            Buffer staged(backend(), host.size() * sizeof(T));
            backend().copy_from_host(staged.data(), host.data(), host.size() * sizeof(T));
            backend().copy_region(in_.data(), in_grid, staged.data(), packed, sizeof(T));
            backend().synchronize();
        };
        if (problem_.precision == Precision::single) load(float{});
        else load(double{});
    }

    void solve() override {
        plan_->forward(in_.data(), spectrum_.data());
        {
            PhaseScope s(*timer_, 0);
            backend().multiply_real(spectrum_.data(), kernel_.data(), plan_->output_count(), problem_.precision);
        }
        plan_->inverse(spectrum_.data(), out_.data());
    }

    std::vector<double> phi() override {
        const auto [in_grid, packed] = physical_regions();
        auto read = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(static_cast<std::size_t>(packed.count()));
            std::vector<double> out(host.size());
            if (host.empty()) return out;
            Buffer staged(backend(), host.size() * sizeof(T));
            backend().copy_region(staged.data(), packed, out_.data(), in_grid, sizeof(T));
            backend().copy_to_host(host.data(), staged.data(), host.size() * sizeof(T));
            backend().synchronize();
            parallel_for(0, std::int64_t(host.size()), [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = lo; k < hi; ++k) out[std::size_t(k)] = double(host[std::size_t(k)]);
            });
            return out;
        };
        return problem_.precision == Precision::single ? read(float{}) : read(double{});
    }

    std::vector<std::string> phase_names() const override {
        std::vector<std::string> out;
        for (const auto& n : plan_->phase_names(Direction::forward)) out.push_back("forward." + n);
        out.push_back("kernel");
        for (const auto& n : plan_->phase_names(Direction::inverse)) out.push_back("inverse." + n);
        return out;
    }
    std::vector<double> collect_phase_times() override {
        auto out = plan_->collect_phase_times(Direction::forward);
        out.push_back(timer_->collect().at(0));
        for (double t : plan_->collect_phase_times(Direction::inverse)) out.push_back(t);
        return out;
    }
    std::vector<PhaseTraffic> traffic() const override {
        if (plan_->devices() != 1) return {};
        auto out = plan_->phase_traffic(Direction::forward);
        // The multiply reads the spectrum and the kernel and writes the spectrum.
        const std::size_t n = static_cast<std::size_t>(plan_->output_count());
        out.push_back({n * (2 * complex_bytes(problem_.precision) + real_bytes(problem_.precision)), 0, 0});
        for (const auto& t : plan_->phase_traffic(Direction::inverse)) out.push_back(t);
        return out;
    }
    std::unique_ptr<PhaseClock> make_clock() override { return plan_->make_clock(); }
    std::size_t backend_bytes() const override { return plan_->backend_bytes() + out_.bytes() + kernel_.bytes(); }
    // Besides the padded input and φ: the plan's work arrays, the spectrum and the kernel.
    std::size_t workspace_bytes() const override {
        return plan_->workspace_bytes() + spectrum_.bytes() + kernel_.bytes();
    }
    int ranks_on_device() const override { return plan_->ranks_on_device(); }
    std::size_t host_staging_bytes() const override { return plan_->host_staging_bytes(); }
    json details() const override { return {{"padded_size", padded_size(problem_.n, problem_.boundary)}}; }

private:
    Problem problem_;
    std::unique_ptr<Plan> plan_;
    Buffer in_, spectrum_, out_, kernel_;
    std::unique_ptr<PhaseTimer> timer_;
};

const bool registered = register_variant<Solver, Padded>("padded");

}  // namespace
}  // namespace fftune::poisson
