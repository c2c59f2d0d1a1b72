// Decomposition: the chain of layouts a forward transform walks through, for any
// rank. Stage i turns layouts[i] into layouts[i + 1], either by batched FFTs
// along some axes or by a reshape inside a phase communicator. The inverse
// walks the same chain backwards. layouts[0] holds real data (Nz), the rest
// complex (Nz/2 + 1).
#pragma once

#include "core/base/registry.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/box.hpp"
#include "core/engine/config.hpp"

namespace fftune {

struct ChainStep {
    enum class Kind { fft, reshape } kind = Kind::fft;
    std::vector<int> axes;  // fft: transformed axes, slowest first (z last for r2c)
    int phase = 0;          // reshape: redistribution phase index
    int color = 0;          // reshape: MPI_Comm_split color of this rank's phase communicator
    // fft: one transform over every device this process drives (the backend's
    // MultiDeviceFft: cufftXt on the cuda backend); the whole grid, the only step.
    bool all_devices = false;
};

struct Chain {
    std::vector<Layout> layouts;
    std::vector<ChainStep> steps;
};

class Decomposition {
public:
    static constexpr const char* kind = "decomposition";
    virtual ~Decomposition() = default;

    virtual int redistribution_phases() const = 0;
    // Grid this decomposition uses for `ranks` when the config leaves it to the
    // decomposition (slabs: P x 1).
    virtual bool uses_process_grid() const = 0;
    // Why the configuration cannot apply to the problem, or nothing. Must be a
    // pure function of its arguments so that every rank agrees.
    virtual std::optional<std::string> not_applicable(const Problem& problem,
                                                      const Config& config) const = 0;
    virtual Chain chain(const Problem& problem, const Config& config, int rank) const = 0;
};
FFTUNE_DECLARE_REGISTRY(Decomposition);

// Global complex size after the r2c along z: {Nx, Ny, Nz/2 + 1}.
std::array<index_t, 3> complex_size(const std::array<index_t, 3>& n);

// Box of part (i, j) when axis a is split over pa parts and axis b over pb parts;
// the remaining axis is whole.
Box3 grid_box(const std::array<index_t, 3>& n, int a, int pa, int i, int b, int pb, int j);

// Process grids P1 x P2 = p: auto_grid is the most square one with P1 >= P2;
// all_grids every one, P1 ascending.
std::array<int, 2> auto_grid(int p);
std::vector<std::array<int, 2>> all_grids(int p);

// Every rank's chain (chains[r] for rank r). self_reshapes()[r][i]: chain step i
// of rank r is a reshape that would copy r's block onto itself (r is alone in
// its phase communicator and the layouts around the step are equal: one rank,
// or a phase of one rank in a 1 x P grid).
std::vector<std::vector<bool>> self_reshapes(const std::vector<Chain>& chains);

// A layout between two FFT stages with only such a reshape between them serves
// no exchange (a realigned order is there to make exchanges contiguous): it
// takes the order of the layout before the first of the two stages, so that
// they reorder only what an exchange or the caller's layouts need. The same on
// every rank, since every rank settles every chain.
void settle_unexchanged_orders(std::vector<Chain>& chains);

// Two FFT stages that such a reshape separates on every rank, where neither
// reorders axes (after settling: the same order before, between and after),
// become one stage over both stages' axes (slowest first in that order): at
// one rank every decomposition is then one 3D transform, as one cuFFT or FFTW
// plan would do it. `may_merge(phase, c2r_first)`: whether the stages around
// that phase's reshape may become one (a transport that runs alone keeps its
// stage; `c2r_first`: the merged stage would hold both step 0, the r2c, and
// the last FFT step, so the inverse's first stage would be the c2r, which
// overwrites the caller's spectrum: an inverse preserving it would copy it
// first, where keeping the last step apart lets the c2r read a work array).
// Merges go from step 0 on, so a refused one keeps the chain's last FFT step
// apart (one rank: x, then a y,z c2r, as the slab's inverse). Every chain
// changes alike.
void merge_unexchanged_ffts(std::vector<Chain>& chains, const std::function<bool(int, bool)>& may_merge);

}  // namespace fftune
