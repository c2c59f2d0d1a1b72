#include "families/convolution/sampling.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "core/platform/parallel.hpp"
#include "core/run/testcase_parser.hpp"

namespace fftune::convolution {

const std::vector<SamplingScheme>& sampling_schemes() {
    // fine: the adjacent cells at full resolution, then every 2nd and 4th point;
    // coarse: every 2nd point next to the source, then the 4th and the 8th (the
    // paper's r = 2 near the sub-domain, 8 farther, 16-32 beyond, at small grids).
    // Smallest side: at 2-4 ranks fine exceeded its bound at 8^3 (0.0033
    // against 0.003), coarse up to 12^3 (0.033 against 0.02); both held from
    // 10^3 and 14^3 on, and on non-cubic grids from these sides on (README.md).
    static const std::vector<SamplingScheme> s{
        {"full", 4, {1}, 2}, {"fine", 4, {1, 2, 4}, 10}, {"coarse", 4, {2, 4, 8}, 16}};
    return s;
}
std::vector<std::string> sampling_names() {
    std::vector<std::string> out;
    for (const auto& s : sampling_schemes()) out.push_back(s.name);
    return out;
}
const SamplingScheme& sampling_scheme(const std::string& name) {
    for (const auto& s : sampling_schemes())
        if (s.name == name) return s;
    throw std::invalid_argument("unknown sampling '" + name + "' (allowed: " + TestcaseParser::list(sampling_names()) +
                                ")");
}

namespace {
// A cell axis's sample coordinates without allocating (sample_coords' values):
// cells are small, at most `capacity` sample points per axis.
struct Coords {
    static constexpr int capacity = 64;
    index_t v[capacity];
    int n = 0;
    void push(index_t x) {
        if (n == capacity) throw std::invalid_argument("octree cells of at most 64 sample points per axis");
        v[n++] = x;
    }
};
Coords coords(index_t lo, index_t hi, index_t s) {
    Coords c;
    for (index_t i = lo; i < hi; i += s) c.push(i);
    if (c.n > 0 && c.v[c.n - 1] != hi - 1) c.push(hi - 1);
    return c;
}
// Their count: ⌈(hi − lo)/s⌉, plus hi − 1 where the stride misses it.
index_t coord_count(index_t lo, index_t hi, index_t s) {
    return hi > lo ? (hi - lo + s - 1) / s + ((hi - 1 - lo) % s != 0 ? 1 : 0) : 0;
}
}  // namespace

std::vector<index_t> sample_coords(index_t lo, index_t hi, index_t s) {
    const Coords c = coords(lo, hi, s);
    return {c.v, c.v + c.n};
}

std::size_t Cell::samples() const {
    std::size_t n = 1;
    for (int a = 0; a < 3; ++a) n *= std::size_t(coord_count(box.lo[a], box.hi[a], rate));
    return n;
}

std::optional<DroppedCell>& dropped_cell_for_testing() {
    static std::optional<DroppedCell> d;
    return d;
}

std::optional<WrongAnswer>& wrong_answer_for_testing() {
    static std::optional<WrongAnswer> w;
    return w;
}

void apply_wrong_answer(std::vector<double>& y, index_t nz) {
    const auto& w = wrong_answer_for_testing();
    if (!w) return;
    switch (*w) {
        case WrongAnswer::zeros: std::fill(y.begin(), y.end(), 0.0); break;
        case WrongAnswer::scaled: for (double& v : y) v *= 1.1; break;
        case WrongAnswer::shifted:  // each point takes the next one's value along z
            for (std::size_t l = 0; l + std::size_t(nz) <= y.size(); l += std::size_t(nz))
                std::rotate(y.begin() + std::ptrdiff_t(l), y.begin() + std::ptrdiff_t(l) + 1,
                            y.begin() + std::ptrdiff_t(l + std::size_t(nz)));
            break;
    }
}

namespace {
// The rate of the x plane of cells [i, i_hi): by the planes strictly between it and the source along axis 0.
index_t plane_rate(index_t i, index_t i_hi, const Box3& source, const SamplingScheme& s) {
    const index_t gap = i >= source.hi[0] ? i - source.hi[0] : source.lo[0] >= i_hi ? source.lo[0] - i_hi : 0;
    return s.rates[std::min(std::size_t(gap / s.cell), s.rates.size() - 1)];
}
std::array<index_t, 3> cell_blocks(const Box3& region, index_t b) {
    std::array<index_t, 3> blocks{};
    for (int a = 0; a < 3; ++a) blocks[std::size_t(a)] = std::max<index_t>(0, (region.extent(a) + b - 1) / b);
    return blocks;
}
}  // namespace

// Cell (i, j, l) of the blocks, x slowest, at index (i·nj + j)·nl + l: made on
// every host thread, a block plane of x each (at 512^3 on 2 x H200 the tiling
// of a scheme's first octree point took 209-264 ms, 104-123 ms so;
// results/h200x2-2026-11-29-fixed-cost). The array's value-initialisation
// stays on one thread. The host's tiling: the CPU oracle of Tiling.
std::vector<Cell> tile(const Box3& region, const Box3& source, const SamplingScheme& s) {
    const index_t b = s.cell;
    const std::array<index_t, 3> blocks = cell_blocks(region, b);
    std::vector<Cell> out(std::size_t(blocks[0] * blocks[1] * blocks[2]));
    parallel_for(0, blocks[0], [&](std::int64_t lo, std::int64_t hi) {
        for (index_t bi = lo; bi < hi; ++bi) {
            const index_t i = region.lo[0] + bi * b, i_hi = std::min(i + b, region.hi[0]);
            const index_t rate = plane_rate(i, i_hi, source, s);
            Cell* c = out.data() + bi * blocks[1] * blocks[2];
            for (index_t j = region.lo[1]; j < region.hi[1]; j += b)
                for (index_t l = region.lo[2]; l < region.hi[2]; l += b, ++c) {
                    c->box = {{i, j, l}, {i_hi, std::min(j + b, region.hi[1]), std::min(l + b, region.hi[2])}};
                    c->rate = rate;
                }
        }
    }, host_threads(), 8);
    const auto& drop = dropped_cell_for_testing();
    if (drop && drop->region == region && drop->index < out.size()) out.erase(out.begin() + std::ptrdiff_t(drop->index));
    return out;
}

Tiling tiling(const Box3& region, const Box3& source, const SamplingScheme& s) {
    Tiling t;
    t.region = region, t.source = source, t.scheme = s;
    const index_t b = s.cell;
    t.blocks = cell_blocks(region, b);
    const std::size_t cells = std::size_t(t.blocks[0] * t.blocks[1] * t.blocks[2]);
    t.plane_start.assign(std::size_t(t.blocks[0]) + 1, 0);
    // A row of cells along axis a at rate r: its whole cells', then its last cell's samples.
    auto row = [&](int a, index_t r) {
        const index_t last = region.extent(a) - (t.blocks[std::size_t(a)] - 1) * b;
        return std::size_t((t.blocks[std::size_t(a)] - 1) * coord_count(0, b, r) + coord_count(0, last, r));
    };
    for (index_t bi = 0; bi < t.blocks[0]; ++bi) {
        const index_t i = region.lo[0] + bi * b, i_hi = std::min(i + b, region.hi[0]);
        t.rates.push_back(plane_rate(i, i_hi, source, s));
        const std::size_t plane = cells == 0 ? 0 : std::size_t(coord_count(i, i_hi, t.rates.back())) *
                                                        row(1, t.rates.back()) * row(2, t.rates.back());
        t.plane_start[std::size_t(bi) + 1] = t.plane_start[std::size_t(bi)] + plane;
    }
    const auto& drop = dropped_cell_for_testing();
    if (drop && drop->region == region && drop->index < cells) {
        t.dropped = drop->index;
        const auto per_plane = std::size_t(t.blocks[1] * t.blocks[2]);
        const auto bi = index_t(drop->index / per_plane), bj = index_t(drop->index % per_plane) / t.blocks[2],
                   bl = index_t(drop->index % std::size_t(t.blocks[2]));
        const index_t r = t.rates[std::size_t(bi)];
        std::size_t n = 1;
        for (const auto& [a, k] : {std::pair{0, bi}, std::pair{1, bj}, std::pair{2, bl}}) {
            const index_t lo = region.lo[a] + k * b;
            n *= std::size_t(coord_count(lo, std::min(lo + b, region.hi[a]), r));
        }
        t.dropped_samples = n;
    }
    return t;
}
std::size_t Tiling::count() const {
    const auto all = std::size_t(blocks[0] * blocks[1] * blocks[2]);
    return dropped ? all - 1 : all;
}
std::size_t Tiling::samples() const { return plane_start.empty() ? 0 : plane_start.back() - dropped_samples; }
std::size_t Tiling::max_points() const {
    if (blocks[0] * blocks[1] * blocks[2] == 0) return 0;
    std::size_t n = 1;
    for (int a = 0; a < 3; ++a) n *= std::size_t(std::min(scheme.cell, region.extent(a)));
    return n;
}

std::size_t sample_count(const std::vector<Cell>& cells) {
    std::size_t n = 0;
    for (const auto& c : cells) n += c.samples();
    return n;
}

std::vector<std::array<index_t, 3>> probe_points(const Box3& region, index_t cell, std::size_t max_probes) {
    if (region.empty()) return {};
    index_t b = cell;
    auto blocks = [&](index_t side) {
        std::size_t n = 1;
        for (int a = 0; a < 3; ++a) n *= std::size_t((region.extent(a) + side - 1) / side);
        return n;
    };
    while (blocks(b) > std::max<std::size_t>(max_probes, 1)) b *= 2;
    std::vector<std::array<index_t, 3>> out;
    out.reserve(blocks(b));
    for (index_t i = region.lo[0]; i < region.hi[0]; i += b)
        for (index_t j = region.lo[1]; j < region.hi[1]; j += b)
            for (index_t l = region.lo[2]; l < region.hi[2]; l += b) {
                // A point of the block hashed from its corner (splitmix64), so
                // that coarse blocks do not all probe the same corner of a cell.
                std::uint64_t h = std::uint64_t((i * 0x1F1F1F1Fll) ^ (j * 0x3C6EF372ll) ^ (l * 0x5851F42Dll)) +
                                  0x9E3779B97F4A7C15ull;
                const std::array<index_t, 3> lo{i, j, l};
                std::array<index_t, 3> p = lo;
                for (int a = 0; a < 3; ++a) {
                    h ^= h >> 30, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 27, h *= 0x94D049BB133111EBull, h ^= h >> 31;
                    p[a] += index_t(h % std::uint64_t(std::min(lo[a] + b, region.hi[a]) - lo[a]));
                }
                out.push_back(p);
            }
    return out;
}

std::optional<index_t>& sampled_check_from_for_testing() {
    static std::optional<index_t> n;
    return n;
}

std::vector<std::array<index_t, 3>> check_points(const std::vector<Box3>& slabs, const Box3& domain, index_t cell,
                                                 std::size_t max_probes, std::size_t random) {
    std::vector<std::array<index_t, 3>> out;
    for (const Box3& s : slabs) {
        const auto p = probe_points(s, cell, max_probes);
        out.insert(out.end(), p.begin(), p.end());
    }
    if (domain.empty()) return out;
    // Made in parallel (65 536 took 3-4 ms on one thread), the same on every rank and run.
    const std::size_t first = out.size();
    out.resize(first + random);
    parallel_for(0, std::int64_t(random), [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t k = lo; k < hi; ++k) out[first + std::size_t(k)] = random_check_point(domain, std::uint64_t(k));
    }, host_threads(), 4096);
    return out;
}

std::vector<std::size_t> sample_offsets(const std::vector<Cell>& cells) {
    std::vector<std::size_t> off(cells.size() + 1, 0);
    parallel_for(0, std::int64_t(cells.size()), [&](std::int64_t lo, std::int64_t hi) {
        for (auto c = std::size_t(lo); c < std::size_t(hi); ++c) off[c + 1] = cells[c].samples();
    }, host_threads(), 4096);
    for (std::size_t c = 0; c < cells.size(); ++c) off[c + 1] += off[c];
    return off;
}

namespace {
// Cells in parallel (host_threads()), cell k writing out[offsets[k] ..).
template <class F>
void sample_with(const Cell* cells, const std::size_t* off, std::size_t n, const F& value, double* out) {
    parallel_for(
        0, std::int64_t(n),
        [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t k = lo; k < hi; ++k) {
                const Cell& c = cells[std::size_t(k)];
                const Coords xs = coords(c.box.lo[0], c.box.hi[0], c.rate),
                             ys = coords(c.box.lo[1], c.box.hi[1], c.rate),
                             zs = coords(c.box.lo[2], c.box.hi[2], c.rate);
                double* o = out + off[std::size_t(k)];
                for (int a = 0; a < xs.n; ++a)
                    for (int b = 0; b < ys.n; ++b)
                        for (int d = 0; d < zs.n; ++d) *o++ = value(xs.v[a], ys.v[b], zs.v[d]);
            }
        },
        host_threads(), 64);
}

// Point p between samples c[k] and c[k+1]: k and the weight of c[k+1].
void bracket(const Coords& c, index_t p, int& k, double& t) {
    k = 0;
    while (k + 1 < c.n && c.v[k + 1] <= p) ++k;
    if (k + 1 >= c.n) {  // the last sample (or the only one)
        k = c.n >= 2 ? c.n - 2 : 0;
        t = c.n >= 2 ? 1.0 : 0.0;
        return;
    }
    t = double(p - c.v[k]) / double(c.v[k + 1] - c.v[k]);
}
// Each point of a cell's axis: its bracket, computed once per cell.
struct Brackets {
    int k[Coords::capacity];
    double t[Coords::capacity];
};
Brackets brackets(const Coords& c, index_t lo, index_t hi) {
    if (hi - lo > Coords::capacity) throw std::invalid_argument("octree cells of at most 64 points per axis");
    Brackets b;
    for (index_t p = lo; p < hi; ++p) bracket(c, p, b.k[p - lo], b.t[p - lo]);
    return b;
}
}  // namespace

namespace {
template <class F>
void append_samples(const std::vector<Cell>& cells, const F& value, std::vector<double>& out) {
    const std::vector<std::size_t> off = sample_offsets(cells);
    const std::size_t base = out.size();
    out.resize(base + off.back());
    sample_with(cells.data(), off.data(), cells.size(), value, out.data() + base);
}
}  // namespace

void sample(const std::vector<Cell>& cells, const std::function<double(index_t, index_t, index_t)>& value,
            std::vector<double>& out) {
    append_samples(cells, value, out);
}
void sample(const std::vector<Cell>& cells, const GridView& value, std::vector<double>& out) {
    append_samples(cells, value, out);
}
void sample(const Cell* cells, const std::size_t* offsets, std::size_t n, const GridView& value, double* out) {
    sample_with(cells, offsets, n, value, out);
}

// Separable per cell: the samples lerped along z onto the cell's z points,
// then along y, then along x into `out` (three lerps per point where the
// trilinear sum takes eight weighted terms). lerp(a, b, t) = (1 − t)·a + t·b
// is exact at t = 0 and t = 1, so samples come back unchanged.
void interpolate_add(const std::vector<Cell>& cells, const double* samples, const Box3& region, double* out) {
    const std::vector<std::size_t> off = sample_offsets(cells);
    interpolate_add(cells.data(), off.data(), cells.size(), samples, region, out);
}
void interpolate_add(const Cell* cells, const std::size_t* off, std::size_t n, const double* samples,
                     const Box3& region, double* out) {
    const index_t ny = region.extent(1), nz = region.extent(2);
    // Cells in parallel: each writes only its own box of `out`.
    parallel_for(
        0, std::int64_t(n),
        [&](std::int64_t first, std::int64_t last) {
            std::vector<double> along_z, along_y;  // reused across this chunk's cells
            for (std::int64_t k = first; k < last; ++k) {
                const Cell& c = cells[std::size_t(k)];
                const double* samples_c = samples + off[std::size_t(k)];
                const Coords a[3] = {coords(c.box.lo[0], c.box.hi[0], c.rate), coords(c.box.lo[1], c.box.hi[1], c.rate),
                                     coords(c.box.lo[2], c.box.hi[2], c.rate)};
                const index_t ex = c.box.extent(0), ey = c.box.extent(1), ez = c.box.extent(2);
                const Brackets bx = brackets(a[0], c.box.lo[0], c.box.hi[0]),
                               by = brackets(a[1], c.box.lo[1], c.box.hi[1]),
                               bz = brackets(a[2], c.box.lo[2], c.box.hi[2]);
                const index_t sx = a[0].n, sy = a[1].n, sz = a[2].n;
                auto lerp = [](double u, double v, double t) { return (1 - t) * u + t * v; };
                // along_z[(i·sy + j)·ez + z]: sample row (i, j) at the cell's z points.
                along_z.resize(std::size_t(sx * sy * ez));
                for (index_t r = 0; r < sx * sy; ++r) {
                    const double* row = samples_c + r * sz;
                    for (index_t z = 0; z < ez; ++z) {
                        const int l = bz.k[z];
                        along_z[std::size_t(r * ez + z)] = sz > 1 ? lerp(row[l], row[l + 1], bz.t[z]) : row[0];
                    }
                }
                // along_y[(i·ey + y)·ez + z].
                along_y.resize(std::size_t(sx * ey * ez));
                for (index_t i = 0; i < sx; ++i)
                    for (index_t y = 0; y < ey; ++y) {
                        const int j = by.k[y];
                        const double* lo = &along_z[std::size_t((i * sy + j) * ez)];
                        const double* hi = sy > 1 ? lo + ez : lo;
                        double* dst = &along_y[std::size_t((i * ey + y) * ez)];
                        for (index_t z = 0; z < ez; ++z) dst[z] = lerp(lo[z], hi[z], by.t[y]);
                    }
                for (index_t x = 0; x < ex; ++x) {
                    const int i = bx.k[x];
                    const double t = bx.t[x];
                    for (index_t y = 0; y < ey; ++y) {
                        const double* lo = &along_y[std::size_t((i * ey + y) * ez)];
                        const double* hi = sx > 1 ? lo + ey * ez : lo;
                        double* row = out +
                                      ((c.box.lo[0] + x - region.lo[0]) * ny + (c.box.lo[1] + y - region.lo[1])) * nz +
                                      (c.box.lo[2] - region.lo[2]);
                        for (index_t z = 0; z < ez; ++z) row[z] += lerp(lo[z], hi[z], t);
                    }
                }
            }
        },
        host_threads(), 64);
}

}  // namespace fftune::convolution
