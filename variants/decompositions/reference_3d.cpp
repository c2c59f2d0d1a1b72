// Reference: the whole 3D transform as one FFT on one process (one cuFFT 3D
// plan on the cuda backend = the "cuFFT on one GPU" reference; FFTW 3D on the
// fftw backend = the CPU reference). Distributed plans are compared with it.
#include <fmt/format.h>

#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"

namespace fftune {
namespace {

class Reference3d final : public Decomposition {
public:
    int redistribution_phases() const override { return 0; }
    bool uses_process_grid() const override { return false; }
    std::optional<std::string> not_applicable(const Problem& problem, const Config& config) const override {
        if (problem.ranks != 1)
            return fmt::format("reference_3d runs on one process, the job has {}", problem.ranks);
        if (config.process_grid != std::array<int, 2>{1, 1})
            return fmt::format("reference_3d uses the process grid 1x1, not {}x{}", config.process_grid[0],
                               config.process_grid[1]);
        if (config.layout != LayoutVariant::default_)
            return std::string("reference_3d has one layout, default");
        return std::nullopt;
    }
    Chain chain(const Problem& problem, const Config&, int) const override {
        const Box3 real{{0, 0, 0}, problem.size}, half{{0, 0, 0}, complex_size(problem.size)};
        Chain c;
        c.layouts = {{real, order_xyz}, {half, order_xyz}};
        c.steps = {{ChainStep::Kind::fft, {axis_x, axis_y, axis_z}, 0, 0}};
        return c;
    }
};

const bool registered = register_variant<Decomposition, Reference3d>("reference_3d");

}  // namespace
}  // namespace fftune
