// The octree sampling: sample coordinates, the cell rates by distance, and
// interpolation that reproduces trilinear fields exactly and any field at rate 1.
#include "families/convolution/sampling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace fftune::convolution {
namespace {

TEST(Sampling, CoordinatesKeepTheCellsLastPoint) {
    EXPECT_EQ(sample_coords(0, 4, 1), (std::vector<index_t>{0, 1, 2, 3}));
    EXPECT_EQ(sample_coords(0, 4, 2), (std::vector<index_t>{0, 2, 3}));
    EXPECT_EQ(sample_coords(4, 8, 8), (std::vector<index_t>{4, 7}));
    EXPECT_EQ(sample_coords(5, 6, 4), (std::vector<index_t>{5}));
}

TEST(Sampling, CellsAreRatedByTheirDistanceFromTheSource) {
    const auto& s = sampling_scheme("fine");  // cell 4, rates 1, 2, 4
    const Box3 source{{0, 0, 0}, {4, 8, 8}}, region{{4, 0, 0}, {18, 8, 8}};
    const auto cells = tile(region, source, s);
    ASSERT_EQ(cells.size(), 4u * 2 * 2);                             // x: 4..8, 8..12, 12..16, 16..18
    EXPECT_EQ(cells.front().rate, 1);                                // adjacent
    EXPECT_EQ(cells[4].rate, 2);                                     // 4 planes away: level 1
    EXPECT_EQ(cells[8].rate, 4);                                     // level 2
    EXPECT_EQ(cells.back().rate, 4);                                 // farther: the last rate
    EXPECT_EQ(cells.back().box.extent(0), 2);                        // clipped
    EXPECT_EQ(cells[4].samples(), std::size_t(3 * 3 * 3));           // 0, 2, 3 per axis
    EXPECT_THROW(sampling_scheme("sparse"), std::invalid_argument);
}

// tile() and sample_offsets(), made on every host thread, against the loops
// they replaced (x, then y, then z; the k-th cell left out by the test seam):
// the same cells in the same order, for each scheme, sources below, above and
// overlapping, a region off the origin clipped on every axis (50 x-blocks).
TEST(Sampling, TileAndOffsetsAreTheSequentialLoopsOnEveryThread) {
    auto sequential = [](const Box3& region, const Box3& source, const SamplingScheme& s, std::optional<std::size_t> skip) {
        std::vector<Cell> out;
        std::size_t index = 0;
        const index_t b = s.cell;
        for (index_t i = region.lo[0]; i < region.hi[0]; i += b)
            for (index_t j = region.lo[1]; j < region.hi[1]; j += b)
                for (index_t l = region.lo[2]; l < region.hi[2]; l += b) {
                    Cell c;
                    c.box = {{i, j, l}, {std::min(i + b, region.hi[0]), std::min(j + b, region.hi[1]),
                                         std::min(l + b, region.hi[2])}};
                    const index_t gap = c.box.lo[0] >= source.hi[0]   ? c.box.lo[0] - source.hi[0]
                                        : source.lo[0] >= c.box.hi[0] ? source.lo[0] - c.box.hi[0]
                                                                      : 0;
                    c.rate = s.rates[std::min(std::size_t(gap / b), s.rates.size() - 1)];
                    if (index++ != skip) out.push_back(c);
                }
        return out;
    };
    auto same = [](const std::vector<Cell>& a, const std::vector<Cell>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t k = 0; k < a.size(); ++k)
            if (a[k].box != b[k].box || a[k].rate != b[k].rate) return false;
        return true;
    };
    const Box3 region{{3, 1, 2}, {201, 30, 27}};
    for (const auto& s : sampling_schemes())
        for (const Box3& source : {Box3{{0, 0, 0}, {3, 30, 27}}, Box3{{201, 0, 0}, {260, 30, 27}},
                                   Box3{{90, 0, 0}, {120, 30, 27}}}) {
            const auto cells = tile(region, source, s);
            ASSERT_TRUE(same(cells, sequential(region, source, s, std::nullopt))) << s.name << " from " << source.str();
            std::vector<std::size_t> off{0};
            for (const auto& c : cells) off.push_back(off.back() + c.samples());
            EXPECT_EQ(sample_offsets(cells), off) << s.name;
        }
    dropped_cell_for_testing() = DroppedCell{region, 777};
    const Box3 source{{0, 0, 0}, {3, 30, 27}};
    const auto dropped = tile(region, source, sampling_scheme("fine"));
    const auto other = tile(Box3{{3, 1, 2}, {201, 30, 26}}, source, sampling_scheme("fine"));  // another region: all
    dropped_cell_for_testing().reset();
    EXPECT_TRUE(same(dropped, sequential(region, source, sampling_scheme("fine"), 777)));
    EXPECT_EQ(other.size(), tile(Box3{{3, 1, 2}, {201, 30, 26}}, source, sampling_scheme("fine")).size());
}

// Tiling's numbers against tile()'s cells: each x plane's rate and first
// sample offset, the counts, and the dropped cell's samples left out.
TEST(Sampling, TilingsPlanesAreTheCellsOfTile) {
    const Box3 region{{3, 1, 2}, {61, 30, 27}};
    for (const auto& s : sampling_schemes())
        for (const Box3& source : {Box3{{0, 0, 0}, {3, 30, 27}}, Box3{{61, 0, 0}, {90, 30, 27}},
                                   Box3{{20, 0, 0}, {33, 30, 27}}}) {
            const auto cells = tile(region, source, s);
            const auto off = sample_offsets(cells);
            const Tiling t = tiling(region, source, s);
            ASSERT_EQ(t.count(), cells.size());
            EXPECT_EQ(t.samples(), off.back());
            const auto plane = std::size_t(t.blocks[1] * t.blocks[2]);
            ASSERT_EQ(t.rates.size(), std::size_t(t.blocks[0]));
            ASSERT_EQ(t.plane_start.size(), std::size_t(t.blocks[0]) + 1);
            for (std::size_t i = 0; i < t.rates.size(); ++i) {
                EXPECT_EQ(t.rates[i], cells[i * plane].rate) << s.name << " plane " << i;
                EXPECT_EQ(t.plane_start[i], off[i * plane]) << s.name << " plane " << i;
            }
            std::size_t most = 0;
            for (const Cell& c : cells) most = std::max(most, std::size_t(c.box.count()));
            EXPECT_EQ(t.max_points(), most);
        }
    const Box3 source{{0, 0, 0}, {3, 30, 27}};
    dropped_cell_for_testing() = DroppedCell{region, 500};
    const Tiling dropped = tiling(region, source, sampling_scheme("coarse"));
    const auto cells = tile(region, source, sampling_scheme("coarse"));
    const Tiling other = tiling(Box3{{3, 1, 2}, {61, 30, 26}}, source, sampling_scheme("coarse"));
    dropped_cell_for_testing().reset();
    EXPECT_EQ(dropped.dropped, std::optional<std::size_t>(500));
    EXPECT_EQ(dropped.count(), cells.size());
    EXPECT_EQ(dropped.samples(), sample_count(cells));
    EXPECT_FALSE(other.dropped);  // another region
    EXPECT_EQ(tiling(Box3{{3, 0, 0}, {9, 0, 4}}, source, sampling_scheme("fine")).samples(), 0u);
}

// A receiving slab of an Nx×Ny×Nz grid: cells of 4³ from its low corner,
// each clipped where its axis ends (x 10 = 4 + 4 + 2, y 6 = 4 + 2, z 9 =
// 4 + 4 + 1), every point in exactly one cell; the level is the distance along
// x (the split axis) alone, whatever the cell's y and z.
TEST(Sampling, CellsOfABoxStopAtEachAxisEnd) {
    const Box3 region{{3, 0, 0}, {13, 6, 9}}, source{{0, 0, 0}, {3, 6, 9}};
    const auto cells = tile(region, source, sampling_scheme("coarse"));  // rates 2, 4, 8
    ASSERT_EQ(cells.size(), 3u * 2 * 3);
    std::vector<int> covered(static_cast<std::size_t>(region.count()), 0);
    for (const Cell& c : cells) {
        for (int a = 0; a < 3; ++a) {
            EXPECT_EQ(c.box.lo[a] % 4, region.lo[a] % 4) << c.box.str();
            EXPECT_EQ(c.box.extent(a), std::min<index_t>(4, region.hi[a] - c.box.lo[a])) << c.box.str();
        }
        EXPECT_EQ(c.rate, index_t(2) << ((c.box.lo[0] - 3) / 4)) << c.box.str();  // gaps 0, 4, 8: levels 0, 1, 2
        for (index_t i = c.box.lo[0]; i < c.box.hi[0]; ++i)
            for (index_t j = c.box.lo[1]; j < c.box.hi[1]; ++j)
                for (index_t l = c.box.lo[2]; l < c.box.hi[2]; ++l)
                    ++covered[std::size_t(((i - region.lo[0]) * 6 + j) * 9 + l)];
    }
    EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), std::ptrdiff_t(covered.size()));
    // The far corner: 2x2x1 points at rate 8, each a sample (x 11, 12; y 4, 5; z 8).
    const Cell& corner = cells.back();
    EXPECT_EQ(corner.box, (Box3{{11, 4, 8}, {13, 6, 9}}));
    EXPECT_EQ(corner.samples(), std::size_t(2 * 2 * 1));
    // The same slab's cells seen from a source beyond it along x: the order of the levels reverses.
    const auto back = tile(region, Box3{{13, 0, 0}, {20, 6, 9}}, sampling_scheme("coarse"));
    EXPECT_EQ(back.front().rate, 4);
    EXPECT_EQ(back.back().rate, 2);
}

// Samples then interpolation: a trilinear function comes back exactly at any
// rate, any field at rate 1; a curved field at rate 4 does not.
TEST(Sampling, InterpolationIsExactForTrilinearFields) {
    const Box3 region{{3, 0, 0}, {13, 6, 9}}, source{{0, 0, 0}, {3, 6, 9}};  // cells of 2 and 1 points too
    auto linear = [](index_t i, index_t j, index_t l) { return 1.0 + 2.0 * i - 0.5 * j + 0.25 * l + 0.1 * i * j * l; };
    auto curved = [](index_t i, index_t j, index_t l) { return std::sin(0.7 * i) + std::cos(0.9 * j * l); };
    for (const char* name : {"full", "fine", "coarse"}) {
        const auto cells = tile(region, source, sampling_scheme(name));
        for (int f = 0; f < 2; ++f) {
            const auto value = [&](index_t i, index_t j, index_t l) { return f ? curved(i, j, l) : linear(i, j, l); };
            std::vector<double> samples;
            sample(cells, value, samples);
            ASSERT_EQ(samples.size(), sample_count(cells));
            std::vector<double> out(static_cast<std::size_t>(region.count()), 0.0);
            interpolate_add(cells, samples.data(), region, out.data());
            double err = 0;
            std::size_t k = 0;
            for (index_t i = region.lo[0]; i < region.hi[0]; ++i)
                for (index_t j = region.lo[1]; j < region.hi[1]; ++j)
                    for (index_t l = region.lo[2]; l < region.hi[2]; ++l) err = std::max(err, std::abs(out[k++] - value(i, j, l)));
            if (f == 0 || std::string(name) == "full") EXPECT_LT(err, 1e-12) << name << " " << f;
            else EXPECT_GT(err, 1e-3) << name;  // the test can tell a wrong interpolation
        }
    }
    // Fewer samples than points away from the source.
    EXPECT_LT(sample_count(tile(region, source, sampling_scheme("coarse"))), std::size_t(region.count()) / 2);
}

// Validation's direct-sum probes: one in every cell tile() makes while they
// fit the cap (a dropped cell is seen), else one per block of 2^L cells.
TEST(Sampling, ProbesCoverEveryCellUnderTheirCap) {
    const Box3 region{{5, 0, 0}, {15, 10, 9}}, source{{0, 0, 0}, {5, 10, 9}};
    const auto cells = tile(region, source, sampling_scheme("fine"));
    const auto probes = probe_points(region, 4, 1000);
    EXPECT_EQ(probes.size(), cells.size());  // 3 x 3 x 3
    auto inside = [](const Box3& b, const std::array<index_t, 3>& p) {
        for (int a = 0; a < 3; ++a)
            if (p[a] < b.lo[a] || p[a] >= b.hi[a]) return false;
        return true;
    };
    for (const Cell& c : cells)
        EXPECT_EQ(std::count_if(probes.begin(), probes.end(), [&](const auto& p) { return inside(c.box, p); }), 1)
            << c.box.str();
    EXPECT_EQ(probes, probe_points(region, 4, 1000));  // deterministic
    // Capped: 8³ blocks (2 x 2 x 2), then 16³ (1).
    const auto fewer = probe_points(region, 4, 26);
    EXPECT_EQ(fewer.size(), 8u);
    for (const auto& p : fewer) EXPECT_TRUE(inside(region, p));
    EXPECT_EQ(probe_points(region, 4, 7).size(), 1u);
    EXPECT_TRUE(probe_points(Box3{}, 4, 10).empty());
}

// The sampled check's points: every slab's probes in slab order, then the
// random points, inside the domain, spread over it, the same on every call.
TEST(Sampling, CheckPointsAreTheProbesThenRandomPointsOfTheDomain) {
    const Box3 domain{{0, 0, 0}, {15, 10, 9}};
    const std::vector<Box3> slabs{{{0, 0, 0}, {5, 10, 9}}, {{5, 0, 0}, {15, 10, 9}}};
    const auto pts = check_points(slabs, domain, 4, 1000, 4000);
    const auto first = probe_points(slabs[0], 4, 1000), second = probe_points(slabs[1], 4, 1000);
    ASSERT_EQ(pts.size(), first.size() + second.size() + 4000);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), pts.begin()));
    EXPECT_TRUE(std::equal(second.begin(), second.end(), pts.begin() + std::ptrdiff_t(first.size())));
    std::array<std::vector<int>, 3> seen{std::vector<int>(15), std::vector<int>(10), std::vector<int>(9)};
    for (std::size_t k = first.size() + second.size(); k < pts.size(); ++k)
        for (int a = 0; a < 3; ++a) {
            ASSERT_GE(pts[k][a], domain.lo[a]);
            ASSERT_LT(pts[k][a], domain.hi[a]);
            ++seen[std::size_t(a)][std::size_t(pts[k][a])];
        }
    for (int a = 0; a < 3; ++a)  // 4000 points over at most 15 values: every one taken
        EXPECT_EQ(std::count(seen[std::size_t(a)].begin(), seen[std::size_t(a)].end(), 0), 0) << "axis " << a;
    EXPECT_EQ(pts, check_points(slabs, domain, 4, 1000, 4000));
}

// The random points are splitmix64's sequence from its seed, three values a
// point, whatever threads made them (enough points to split them).
TEST(Sampling, CheckPointsRandomPartIsTheSequentialSplitmixSequence) {
    const Box3 domain{{2, 0, 1}, {37, 29, 64}};
    const std::size_t n = 50000;
    const auto pts = check_points({}, domain, 4, 16, n);
    ASSERT_EQ(pts.size(), n);
    std::uint64_t h = 0x2545F4914F6CDD1Dull;
    auto next = [&h] {
        std::uint64_t z = (h += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    for (std::size_t k = 0; k < n; ++k)
        for (int a = 0; a < 3; ++a)
            ASSERT_EQ(pts[k][a], domain.lo[a] + index_t(next() % std::uint64_t(domain.extent(a)))) << "point " << k;
}

}  // namespace
}  // namespace fftune::convolution
