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

// Values of a real array in `layout` (host, its memory order) over `region`, x slowest.
template <class T>
std::vector<double> extract(const std::vector<T>& a, const Layout& layout, const Box3& region) {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(region.count()));
    for (index_t i = region.lo[0]; i < region.hi[0]; ++i)
        for (index_t j = region.lo[1]; j < region.hi[1]; ++j)
            for (index_t l = region.lo[2]; l < region.hi[2]; ++l)
                out.push_back(double(a[static_cast<std::size_t>(layout.offset_of({i, j, l}))]));
    return out;
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
            const std::vector<char> zeros(plan_->input_bytes(), 0);
            if (!zeros.empty()) be.copy_from_host(in_.data(), zeros.data(), zeros.size());
            const auto t0 = std::chrono::steady_clock::now();
            kernel_ = kernel_buffer(be, *shared_spectral_kernel(p.n, p.boundary, p.kernel, plan_->output_layout()), p.precision);
            kernel_setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            timer_ = std::make_unique<PhaseTimer>(be);
            timer_->phase("kernel");
        });
    }
    Backend& backend() override { return plan_->backend(); }
    Box3 physical_box() const override { return intersect(plan_->input_layout().box, {{0, 0, 0}, problem_.n}); }

    void load_rho(const std::vector<double>& rho) override {
        const Layout& l = plan_->input_layout();
        const Box3 box = physical_box();
        auto load = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(static_cast<std::size_t>(l.box.count()), T(0));
            const index_t plane = box.extent(1) * box.extent(2);
            parallel_for(box.lo[0], box.hi[0], [&](std::int64_t lo, std::int64_t hi) {  // x-planes over the host threads
                for (index_t i = lo; i < hi; ++i) {
                    std::size_t k = static_cast<std::size_t>((i - box.lo[0]) * plane);
                    for (index_t j = box.lo[1]; j < box.hi[1]; ++j)
                        for (index_t z = box.lo[2]; z < box.hi[2]; ++z) host[l.offset_of({i, j, z})] = T(rho[k++]);
                }
            });
            if (!host.empty()) backend().copy_from_host(in_.data(), host.data(), host.size() * sizeof(T));
        };
        if (problem_.precision == Precision::single) load(float{});
        else load(double{});
        backend().synchronize();
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
        const Layout& l = plan_->input_layout();
        auto read = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(static_cast<std::size_t>(l.box.count()));
            if (!host.empty()) backend().copy_to_host(host.data(), out_.data(), host.size() * sizeof(T));
            backend().synchronize();
            return extract(host, l, physical_box());
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
