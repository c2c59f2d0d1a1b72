// Reference: the whole 3D transform spread over every GPU of one process by
// cufftXt (single-process multi-GPU cuFFT), measured by the same runner and
// stored like any configuration: cuda/reference_cufftxt/default/1x1/none/host.
//
// Design: a point of ranks = 1. cufftXt is single-process by construction:
// one process drives all GPUs it sees (cufftXtSetGPUs) and cuFFT moves the
// data between them itself, without MPI. So, like reference_3d, it runs in a
// job of one rank; the GPUs it used are in the record's timing.devices (a
// job's "ranks" counts MPI processes, not GPUs). Set CUDA_VISIBLE_DEVICES to
// run it on fewer GPUs than the node has: a distributed plan at P ranks (one
// GPU each) compares with this reference measured with the same P GPUs visible.
//
// Applicability (the same on every rank, as for every decomposition): one
// process, grid 1x1, the default layout; and the backend must spread a
// transform over several devices (Backend::multi_device_unavailable: the cuda
// backend needs 2 to 16 visible GPUs of one architecture; fftw has none).
// cuFFT's own size limits are not guessed here: when cufftMakePlan3d refuses a
// size, plan creation throws Unsupported and the point is recorded as skipped
// with cuFFT's error as the reason.
//
// Chain: the same two layouts as reference_3d (the whole real grid and the
// whole complex grid, z contiguous, x slowest) with one step over every
// device. cufftXt leaves the spectrum permuted across the GPUs
// (CUFFT_XT_FORMAT_INPLACE_SHUFFLED); the plan copies it back in natural
// order, so validation (spectral Laplacian, round trip, whole-world oracle)
// reads exactly what it reads from reference_3d. Timed: the execution
// (cufftXtExecDescriptor) alone, as phase fft.xyz; the copies between the
// caller's buffers and the GPUs' descriptors are outside the timed region
// (Plan::stage/restage).
#include <fmt/format.h>

#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"

namespace fftune {
namespace {

class ReferenceCufftxt final : public Decomposition {
public:
    int redistribution_phases() const override { return 0; }
    bool uses_process_grid() const override { return false; }
    std::optional<std::string> not_applicable(const Problem& problem, const Config& config) const override {
        if (problem.ranks != 1)
            return fmt::format("reference_cufftxt runs on one process (driving every GPU it sees), the job has {}",
                               problem.ranks);
        if (config.process_grid != std::array<int, 2>{1, 1})
            return fmt::format("reference_cufftxt uses the process grid 1x1, not {}x{}", config.process_grid[0],
                               config.process_grid[1]);
        if (config.layout != LayoutVariant::default_)
            return std::string("reference_cufftxt has one layout, default");
        return std::nullopt;
    }
    Chain chain(const Problem& problem, const Config&, int) const override {
        const Box3 real{{0, 0, 0}, problem.size}, half{{0, 0, 0}, complex_size(problem.size)};
        Chain c;
        c.layouts = {{real, order_xyz}, {half, order_xyz}};
        ChainStep all;
        all.kind = ChainStep::Kind::fft;
        all.axes = {axis_x, axis_y, axis_z};
        all.all_devices = true;
        c.steps = {all};
        return c;
    }
};

const bool registered = register_variant<Decomposition, ReferenceCufftxt>("reference_cufftxt");

}  // namespace
}  // namespace fftune
