// The octree multi-resolution sampling of the convolution family (README.md):
// a rank's contribution to another rank's region is sent as samples, full
// resolution near the source and coarser with distance, and interpolated back
// (trilinear within each cell) by the receiver. Cells of `cell` points per axis
// tile the receiving region (any box: each cell stops where its axis ends); a
// cell `level` cells away from the source region along x (0: adjacent or
// overlapping) is sampled every rates[min(level, last)] points
// along each axis, plus its last point, so a cell interpolates on its own.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/box.hpp"

namespace fftune::convolution {

struct SamplingScheme {
    std::string name;
    index_t cell = 4;
    std::vector<index_t> rates;  // per level, the last for every farther one
    // The smallest side (of an Nx×Ny×Nz grid) from which the stored error
    // bounds hold at 2-4 ranks (README.md); below it the family refuses the scheme.
    index_t smallest_side = 2;
};
// The registered schemes: full (rate 1: exact up to rounding), fine, coarse.
const std::vector<SamplingScheme>& sampling_schemes();
const SamplingScheme& sampling_scheme(const std::string& name);
std::vector<std::string> sampling_names();

// Sample coordinates of a cell's axis [lo, hi) at stride s: lo, lo + s, ... and hi − 1.
std::vector<index_t> sample_coords(index_t lo, index_t hi, index_t s);

struct Cell {
    Box3 box;
    index_t rate = 1;
    std::size_t samples() const;  // the product of its axes' sample counts
};
// Where each cell's samples start: the prefix sums of Cell::samples() (cells + 1 values).
std::vector<std::size_t> sample_offsets(const std::vector<Cell>& cells);
// Cells tiling `region`, rated by their distance along axis 0 from `source`.
std::vector<Cell> tile(const Box3& region, const Box3& source, const SamplingScheme& s);
std::size_t sample_count(const std::vector<Cell>& cells);

// tile()'s cells and their sample_offsets by the few numbers they follow
// from, so that a kernel makes cell k and its offset from k alone (the host
// made 1M cells and offsets per peer at 512^3 on 2 ranks in 104-123 ms, and
// copied them to the device in 22-27 ms). Cell (i, j, l) of the blocks is
// index (i·blocks[1] + j)·blocks[2] + l (less one past a dropped cell); its
// offset is plane_start[i] + sx·(j·fy·Sz + sy·l·fz): sx, sy, sz its own axes'
// sample counts, fy, fz a whole cell's, Sz the z row's (all but the last cells
// of a row are whole), less the dropped cell's samples past it.
struct Tiling {
    Box3 region, source;
    SamplingScheme scheme;
    std::array<index_t, 3> blocks{0, 0, 0};  // cells per axis
    std::vector<index_t> rates;              // of each x plane of cells
    std::vector<std::size_t> plane_start;    // its first sample: blocks[0] + 1 values, all 0 with no cell
    // dropped_cell_for_testing()'s cell, where it applies to `region`, and its samples.
    std::optional<std::size_t> dropped;
    std::size_t dropped_samples = 0;
    std::size_t count() const;       // cells
    std::size_t samples() const;     // of them all: sample_count(tile(...))
    std::size_t max_points() const;  // at least the points of the largest cell (the first cell's)
};
Tiling tiling(const Box3& region, const Box3& source, const SamplingScheme& s);

// Test seam: tile() and tiling() leave out cell `index` (in tile()'s order) of
// every tiling of `region`, as a bug that drops a cell would; the sender and
// the receiver tile the same region, so they agree (convolution_mpi_test:
// validation catches it).
struct DroppedCell {
    Box3 region;
    std::size_t index = 0;
};
std::optional<DroppedCell>& dropped_cell_for_testing();

// Tests only: a wrong solver (issue 42). The answer a step returns over the
// rank's own slab (x slowest, z fastest) is replaced by zeros, scaled by 1.1,
// or shifted by one point along z within each line, before validation sees it.
enum class WrongAnswer { zeros, scaled, shifted };
std::optional<WrongAnswer>& wrong_answer_for_testing();
// Applies wrong_answer_for_testing() to `y`, lines of `nz` values; nothing when unset.
void apply_wrong_answer(std::vector<double>& y, index_t nz);

// Tests only: the octree is checked by sampled points (the check's values
// at check_points() only) from this many grid points on instead of
// sampled_validation_min_points (2^24, validation.hpp), so that small grids
// run that check too.
std::optional<index_t>& sampled_check_from_for_testing();

// The octree's sampled check points over `domain`: the probes of every slab
// (probe_points of each, in slab order), then `random` points spread over the
// domain, deterministic (splitmix64 from their index), the same on every rank.
std::vector<std::array<index_t, 3>> check_points(const std::vector<Box3>& slabs, const Box3& domain, index_t cell,
                                                 std::size_t max_probes, std::size_t random);
// The j-th of those random points: axis a from splitmix64's value 3j + a
// (its j-th value depends on j alone: the state advances by a constant), the
// cuda check_values kernel's formula too.
// random_check_coordinate gives one axis alone (an x-slab's test of it needs x only).
inline index_t random_check_coordinate(const Box3& domain, std::uint64_t j, int a) {
    constexpr std::uint64_t seed = 0x2545F4914F6CDD1Dull, gamma = 0x9E3779B97F4A7C15ull;
    std::uint64_t z = seed + (3 * j + std::uint64_t(a) + 1) * gamma;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return domain.lo[a] + index_t(z % std::uint64_t(domain.extent(a)));
}
inline std::array<index_t, 3> random_check_point(const Box3& domain, std::uint64_t j) {
    return {random_check_coordinate(domain, j, 0), random_check_coordinate(domain, j, 1),
            random_check_coordinate(domain, j, 2)};
}

// Direct-sum probe points of `region`, one per block, deterministic: blocks of
// cell·2^L points aligned as tile()'s cells, L the smallest level with at most
// `max_probes` blocks (L = 0: one probe in every octree cell).
std::vector<std::array<index_t, 3>> probe_points(const Box3& region, index_t cell, std::size_t max_probes);

// A grid of values by strides: point (i, j, l) at data[base + i·stride[0] + j·stride[1] + l·stride[2]].
struct GridView {
    const double* data = nullptr;
    index_t base = 0;
    std::array<index_t, 3> stride{0, 0, 0};
    double operator()(index_t i, index_t j, index_t l) const { return data[base + i * stride[0] + j * stride[1] + l * stride[2]]; }
};

// Appends the samples of `value` (at global grid points) cell by cell, x slowest.
void sample(const std::vector<Cell>& cells, const std::function<double(index_t, index_t, index_t)>& value,
            std::vector<double>& out);
void sample(const std::vector<Cell>& cells, const GridView& value, std::vector<double>& out);
// Adds the trilinear interpolation of `samples` (as sample() wrote them) to
// `out`, an array over `region` (x slowest, z fastest) that the cells tile.
void interpolate_add(const std::vector<Cell>& cells, const double* samples, const Box3& region, double* out);

// The same on arrays: `cells` [0, n) and `offsets` (their n + 1 sample_offsets);
// sample writes cell k's samples at out + offsets[k]. The CPU oracle of
// ConvolutionKernels (device_kernels.hpp).
void sample(const Cell* cells, const std::size_t* offsets, std::size_t n, const GridView& value, double* out);
void interpolate_add(const Cell* cells, const std::size_t* offsets, std::size_t n, const double* samples,
                     const Box3& region, double* out);

}  // namespace fftune::convolution

