// 1D-2D slab decomposition (thesis 4.3): 1D FFTs along z on x-slabs,
// one redistribution to z-slabs, 2D FFTs over (x, y).
// Input Nx/P x Ny x Nz, output Nx x Ny x (Nz/2+1)/P.
// Realigned: the z FFT writes y-contiguous data (order zxy), the 2D FFT writes z-contiguous again.
#include "core/base/registry.hpp"
#include "variants/decompositions/slab_common.hpp"

namespace fftune {
namespace {

class Slab1d2d final : public Decomposition {
public:
    int redistribution_phases() const override { return 1; }
    bool uses_process_grid() const override { return false; }
    std::optional<std::string> not_applicable(const Problem& problem,
                                              const Config& config) const override {
        return slab::not_applicable("slab_1d2d", problem, config);
    }
    Chain chain(const Problem& problem, const Config& config, int rank) const override {
        const int p = problem.ranks;
        const auto nr = problem.size;
        const auto nc = complex_size(nr);
        const AxisOrder mid =
            config.layout == LayoutVariant::realigned ? order_zxy : order_xyz;
        Chain c;
        c.layouts = {{grid_box(nr, axis_x, p, rank, axis_y, 1, 0), order_xyz},
                     {grid_box(nc, axis_x, p, rank, axis_y, 1, 0), mid},
                     {grid_box(nc, axis_z, p, rank, axis_y, 1, 0), mid},
                     {grid_box(nc, axis_z, p, rank, axis_y, 1, 0), order_xyz}};
        c.steps = {{ChainStep::Kind::fft, {axis_z}, 0, 0},
                   {ChainStep::Kind::reshape, {}, 0, 0},
                   {ChainStep::Kind::fft, {axis_x, axis_y}, 0, 0}};
        return c;
    }
};

const bool registered = register_variant<Decomposition, Slab1d2d>("slab_1d2d");

}  // namespace
}  // namespace fftune
