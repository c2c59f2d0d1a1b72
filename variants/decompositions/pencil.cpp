// Pencil decomposition (thesis 4.4) on a P1 x P2 grid, rank r = (r / P2, r % P2).
// Input Nx/P1 x Ny/P2 x Nz; z FFT; phase 0 inside the row (same p1, P2 ranks) to
// Nx/P1 x Ny x Nzc/P2; y FFT; phase 1 inside the column (same p2, P1 ranks) to
// Nx x Ny/P1 x Nzc/P2; x FFT.
// Realigned: z FFT writes y-contiguous (zxy), y FFT writes x-contiguous (yzx),
// x FFT writes z-contiguous again.
#include <fmt/format.h>

#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"

namespace fftune {
namespace {

class Pencil final : public Decomposition {
public:
    int redistribution_phases() const override { return 2; }
    bool uses_process_grid() const override { return true; }
    std::optional<std::string> not_applicable(const Problem& problem,
                                              const Config& config) const override {
        const auto [p1, p2] = config.process_grid;
        if (p1 < 1 || p2 < 1 || p1 * p2 != problem.ranks)
            return fmt::format("process grid {}x{} needs {} ranks, the job has {}", p1, p2,
                               p1 * p2, problem.ranks);
        if (p1 > problem.size[0])
            return fmt::format("pencil splits x over P1={} but Nx={} < P1", p1, problem.size[0]);
        if (p2 > problem.size[1])
            return fmt::format("pencil splits y over P2={} but Ny={} < P2", p2, problem.size[1]);
        return std::nullopt;
    }
    Chain chain(const Problem& problem, const Config& config, int rank) const override {
        const auto [p1, p2] = config.process_grid;
        const int i = rank / p2, j = rank % p2;
        const auto nr = problem.size;
        const auto nc = complex_size(nr);
        const bool realigned = config.layout == LayoutVariant::realigned;
        const AxisOrder after_z = realigned ? order_zxy : order_xyz;
        const AxisOrder after_y = realigned ? order_yzx : order_xyz;
        Chain c;
        c.layouts = {{grid_box(nr, axis_x, p1, i, axis_y, p2, j), order_xyz},
                     {grid_box(nc, axis_x, p1, i, axis_y, p2, j), after_z},
                     {grid_box(nc, axis_x, p1, i, axis_z, p2, j), after_z},
                     {grid_box(nc, axis_x, p1, i, axis_z, p2, j), after_y},
                     {grid_box(nc, axis_y, p1, i, axis_z, p2, j), after_y},
                     {grid_box(nc, axis_y, p1, i, axis_z, p2, j), order_xyz}};
        c.steps = {{ChainStep::Kind::fft, {axis_z}, 0, 0},
                   {ChainStep::Kind::reshape, {}, 0, i},
                   {ChainStep::Kind::fft, {axis_y}, 0, 0},
                   {ChainStep::Kind::reshape, {}, 1, j},
                   {ChainStep::Kind::fft, {axis_x}, 0, 0}};
        return c;
    }
};

const bool registered = register_variant<Decomposition, Pencil>("pencil");

}  // namespace
}  // namespace fftune
