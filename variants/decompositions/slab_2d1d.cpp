// 2D-1D slab decomposition (thesis 4.2): 2D FFTs over (y, z) on x-slabs,
// one redistribution to y-slabs, 1D FFTs along x.
// Input Nx/P x Ny x Nz, output Nx x Ny/P x (Nz/2+1).
// Realigned: the 2D FFT writes x-contiguous data (order yzx), the x FFT writes z-contiguous again.
#include "core/base/registry.hpp"
#include "variants/decompositions/slab_common.hpp"

namespace fftune {
namespace {

class Slab2d1d final : public Decomposition {
public:
    int redistribution_phases() const override { return 1; }
    bool uses_process_grid() const override { return false; }
    std::optional<std::string> not_applicable(const Problem& problem,
                                              const Config& config) const override {
        return slab::not_applicable("slab_2d1d", problem, config);
    }
    Chain chain(const Problem& problem, const Config& config, int rank) const override {
        const int p = problem.ranks;
        const auto nr = problem.size;
        const auto nc = complex_size(nr);
        const AxisOrder mid =
            config.layout == LayoutVariant::realigned ? order_yzx : order_xyz;
        Chain c;
        c.layouts = {{grid_box(nr, axis_x, p, rank, axis_y, 1, 0), order_xyz},
                     {grid_box(nc, axis_x, p, rank, axis_y, 1, 0), mid},
                     {grid_box(nc, axis_y, p, rank, axis_x, 1, 0), mid},
                     {grid_box(nc, axis_y, p, rank, axis_x, 1, 0), order_xyz}};
        c.steps = {{ChainStep::Kind::fft, {axis_y, axis_z}, 0, 0},
                   {ChainStep::Kind::reshape, {}, 0, 0},
                   {ChainStep::Kind::fft, {axis_x}, 0, 0}};
        return c;
    }
};

const bool registered = register_variant<Decomposition, Slab2d1d>("slab_2d1d");

}  // namespace
}  // namespace fftune
