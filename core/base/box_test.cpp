#include "core/base/box.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace fftune {
namespace {

TEST(Box, CountAndEmpty) {
    EXPECT_EQ((Box3{{0, 0, 0}, {2, 3, 4}}).count(), 24);
    EXPECT_TRUE((Box3{{1, 0, 0}, {1, 3, 4}}).empty());
    EXPECT_EQ((Box3{{3, 0, 0}, {1, 3, 4}}).count(), 0);  // inverted counts as empty
}

// Half-open on every axis: lo inside, hi outside.
TEST(Box, ContainsItsPointsHalfOpen) {
    const Box3 b{{1, 2, 3}, {4, 5, 6}};
    EXPECT_TRUE(b.contains({1, 2, 3}));
    EXPECT_TRUE(b.contains({3, 4, 5}));
    for (int a = 0; a < 3; ++a) {
        std::array<index_t, 3> p{1, 2, 3}, q{3, 4, 5};
        p[std::size_t(a)] -= 1, q[std::size_t(a)] += 1;
        EXPECT_FALSE(b.contains(p)) << "below on axis " << a;
        EXPECT_FALSE(b.contains(q)) << "at hi on axis " << a;
    }
    EXPECT_FALSE((Box3{{0, 0, 0}, {0, 1, 1}}).contains({0, 0, 0}));
}

TEST(Box, IntersectIsEmptyWhenDisjoint) {
    const Box3 a{{0, 0, 0}, {4, 4, 4}}, b{{2, 1, 3}, {6, 2, 9}};
    EXPECT_EQ(intersect(a, b), (Box3{{2, 1, 3}, {4, 2, 4}}));
    EXPECT_TRUE(intersect(a, Box3{{5, 0, 0}, {6, 4, 4}}).empty());
}

// a minus b: disjoint pieces inside a, outside b, that with a ∩ b count a's
// every point once; for b inside, around and beside a.
TEST(Box, SubtractLeavesDisjointPiecesOutsideTheCut) {
    const Box3 a{{0, 0, 0}, {6, 5, 4}};
    for (const Box3& b : {Box3{{2, 1, 1}, {4, 3, 2}}, Box3{{0, 0, 0}, {6, 5, 4}}, Box3{{-1, 2, -3}, {9, 4, 9}},
                          Box3{{6, 0, 0}, {8, 5, 4}}, Box3{{0, 0, 2}, {6, 5, 4}}}) {
        const auto pieces = subtract(a, b);
        EXPECT_LE(pieces.size(), 6u);
        index_t total = intersect(a, b).count();
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            EXPECT_FALSE(pieces[i].empty());
            EXPECT_EQ(intersect(pieces[i], a), pieces[i]) << b.str();
            EXPECT_TRUE(intersect(pieces[i], b).empty()) << b.str();
            for (std::size_t j = 0; j < i; ++j) EXPECT_TRUE(intersect(pieces[i], pieces[j]).empty()) << b.str();
            total += pieces[i].count();
        }
        EXPECT_EQ(total, a.count()) << b.str();
    }
    EXPECT_TRUE(subtract(a, a).empty());
    EXPECT_EQ(subtract(a, Box3{{6, 0, 0}, {8, 5, 4}}), std::vector<Box3>{a});
}

TEST(Split, BalancedWithRemainderFirst) {
    // 10 over 4: 3 3 2 2
    const index_t expect[] = {0, 3, 6, 8, 10};
    for (int i = 0; i <= 4; ++i) EXPECT_EQ(split_lo(10, 4, i), expect[i]);
    EXPECT_EQ(split_hi(10, 4, 3), 10);
}

TEST(Split, MorePartsThanItemsGivesEmptyParts) {
    index_t total = 0;
    for (int i = 0; i < 5; ++i) {
        const index_t n = split_hi(3, 5, i) - split_lo(3, 5, i);
        EXPECT_GE(n, 0);
        EXPECT_LE(n, 1);
        total += n;
    }
    EXPECT_EQ(total, 3);
    EXPECT_THROW(split_lo(3, 5, 6), std::invalid_argument);
}

TEST(Split, SlicesTileTheBoxAlongOneAxis) {
    const Box3 b{{2, 0, 1}, {9, 3, 4}};  // x extent 7 over 3 slices: 3 2 2
    EXPECT_EQ(slice_of(b, axis_x, 3, 0), (Box3{{2, 0, 1}, {5, 3, 4}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 1), (Box3{{5, 0, 1}, {7, 3, 4}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 2), (Box3{{7, 0, 1}, {9, 3, 4}}));
    EXPECT_EQ(slice_of(b, axis_y, 1, 0), b);
    EXPECT_TRUE(slice_of(b, axis_y, 5, 4).empty());  // 3 planes over 5 slices
    EXPECT_THROW(slice_of(b, axis_x, 3, 3), std::invalid_argument);
    // On multiples of 2 planes: 7 planes are 4 granules, over 3 slices 2 1 1 -> 4 2 1 planes.
    EXPECT_EQ(slice_of(b, axis_x, 3, 0, 2), (Box3{{2, 0, 1}, {6, 3, 4}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 1, 2), (Box3{{6, 0, 1}, {8, 3, 4}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 2, 2), (Box3{{8, 0, 1}, {9, 3, 4}}));
    EXPECT_TRUE(slice_of(b, axis_x, 5, 4, 2).empty());  // 4 granules over 5 slices
}

TEST(Split, TaperedPartsGrowFromTheSmallestAndTileTheRange) {
    // 256 planes over 8: ρ = 4^(1/7), the first 15 planes (even: 32), the last 57.
    EXPECT_EQ(tapered_lo(256, 8, 1), 15);
    EXPECT_EQ(256 - tapered_lo(256, 8, 7), 57);
    for (const auto& [n, p] : {std::pair<index_t, int>{256, 8}, {64, 4}, {1000, 16}, {9, 9}, {20, 3}, {7, 1}}) {
        std::vector<index_t> size;
        for (int i = 0; i < p; ++i) size.push_back(tapered_lo(n, p, i + 1) - tapered_lo(n, p, i));
        EXPECT_EQ(tapered_lo(n, p, 0), 0);
        EXPECT_EQ(tapered_lo(n, p, p), n);
        for (int i = 0; i < p; ++i) {
            EXPECT_GE(size[i], 1) << n << " over " << p << ", part " << i;
            if (i > 0) EXPECT_GE(size[i] + 1, size[i - 1]) << "sizes grow, within rounding";
            // Mirrored: the same sizes from the last part back.
            EXPECT_EQ(tapered_lo(n, p, i + 1, false) - tapered_lo(n, p, i, false), size[p - 1 - i]);
        }
        EXPECT_LE(size.back(), 4 * size.front() + 2);
        if (p > 1 && n >= 4 * p) EXPECT_LT(size.front(), n / p);
    }
    EXPECT_EQ(tapered_lo(3, 5, 2), split_lo(3, 5, 2));  // fewer items than parts: balanced
    EXPECT_THROW(tapered_lo(3, 5, 6), std::invalid_argument);
    // Slices on multiples of 2 planes, smallest last: 16 planes are 8 granules, 3 2 2 -> 2 2 3.
    const Box3 b{{0, 0, 0}, {16, 2, 2}};
    EXPECT_EQ(slice_of(b, axis_x, 3, 0, 2, true, false), (Box3{{0, 0, 0}, {6, 2, 2}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 2, 2, true, false), (Box3{{12, 0, 0}, {16, 2, 2}}));
    EXPECT_EQ(slice_of(b, axis_x, 3, 0, 2, true, true), (Box3{{0, 0, 0}, {4, 2, 2}}));
}

TEST(Layout, StridesFollowTheAxisOrder) {
    const Box3 b{{1, 2, 3}, {3, 5, 7}};  // extents 2, 3, 4
    EXPECT_EQ((Layout{b, order_xyz}).strides(), (std::array<index_t, 3>{12, 4, 1}));
    EXPECT_EQ((Layout{b, order_zxy}).strides(), (std::array<index_t, 3>{3, 1, 6}));
    EXPECT_EQ((Layout{b, order_yzx}).strides(), (std::array<index_t, 3>{1, 8, 2}));
    EXPECT_EQ(order_name(order_zxy), "zxy");
}

TEST(Layout, OffsetsAreABijectionOntoTheArray) {
    for (const auto order : {order_xyz, order_zxy, order_yzx}) {
        const Layout l{{{1, 2, 3}, {3, 5, 7}}, order};
        std::vector<int> seen(l.box.count(), 0);
        for (index_t x = 1; x < 3; ++x)
            for (index_t y = 2; y < 5; ++y)
                for (index_t z = 3; z < 7; ++z) ++seen.at(l.offset_of({x, y, z}));
        for (int s : seen) EXPECT_EQ(s, 1) << order_name(order);
    }
}

TEST(Region, SubBoxInEachOrder) {
    const Layout l{{{0, 0, 0}, {4, 5, 6}}, order_zxy};  // strides x 5, y 1, z 20
    const Box3 sub{{1, 2, 3}, {3, 4, 6}};
    const StridedRegion r = region_of(l, sub);
    EXPECT_EQ(r.extent, (std::array<index_t, 3>{3, 2, 2}));  // z, x, y
    EXPECT_EQ(r.stride, (std::array<index_t, 3>{20, 5, 1}));
    EXPECT_EQ(r.offset, l.offset_of({1, 2, 3}));
    EXPECT_FALSE(r.contiguous());
    EXPECT_THROW(region_of(l, Box3{{0, 0, 0}, {5, 1, 1}}), std::logic_error);
}

TEST(Region, ContiguousDetection) {
    const Layout l{{{0, 0, 0}, {4, 5, 6}}, order_xyz};
    EXPECT_TRUE(region_of(l, Box3{{1, 0, 0}, {3, 5, 6}}).contiguous());   // whole x-slabs
    EXPECT_TRUE(region_of(l, Box3{{1, 2, 0}, {2, 4, 6}}).contiguous());   // rows in one slab
    EXPECT_FALSE(region_of(l, Box3{{1, 2, 0}, {3, 4, 6}}).contiguous());  // rows across slabs
    EXPECT_TRUE(region_of(l, Box3{{0, 0, 1}, {1, 1, 3}}).contiguous());   // part of one row
    EXPECT_FALSE(region_of(l, Box3{{0, 0, 1}, {1, 2, 3}}).contiguous());  // parts of two rows
    const StridedRegion p = packed_region(l, Box3{{1, 2, 0}, {3, 4, 6}}, 7);
    EXPECT_TRUE(p.contiguous());
    EXPECT_EQ(p.offset, 7);
    EXPECT_EQ(p.count(), 24);
}

// Every byte a PitchedCopy moves, as (dst byte, src byte) pairs, against the
// element-by-element definition of the region copy.
std::vector<std::pair<std::size_t, std::size_t>> bytes_of(const PitchedCopy& c) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t p = 0; p < c.planes; ++p)
        for (std::size_t r = 0; r < c.rows; ++r)
            for (std::size_t b = 0; b < c.row_bytes; ++b)
                out.emplace_back(c.dst_offset + p * c.dst_plane + r * c.dst_pitch + b,
                                 c.src_offset + p * c.src_plane + r * c.src_pitch + b);
    return out;
}
std::vector<std::pair<std::size_t, std::size_t>> bytes_of(const StridedRegion& d, const StridedRegion& s, std::size_t e) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (index_t i = 0; i < s.extent[0]; ++i)
        for (index_t j = 0; j < s.extent[1]; ++j)
            for (index_t k = 0; k < s.extent[2]; ++k)
                for (std::size_t b = 0; b < e; ++b)
                    out.emplace_back((d.offset + i * d.stride[0] + j * d.stride[1] + k * d.stride[2]) * e + b,
                                     (s.offset + i * s.stride[0] + j * s.stride[1] + k * s.stride[2]) * e + b);
    return out;
}

TEST(PitchedCopy, MovesExactlyTheRegionsBytes) {
    const Layout big{{{0, 0, 0}, {4, 6, 5}}, order_xyz};
    const Layout zxy{{{0, 0, 0}, {4, 6, 5}}, order_zxy};
    int pitched = 0;
    for (const Box3 sub : {Box3{{1, 0, 0}, {3, 6, 5}}, Box3{{0, 2, 0}, {4, 5, 5}}, Box3{{1, 2, 1}, {3, 5, 4}},
                           Box3{{2, 3, 0}, {3, 4, 5}}, Box3{{0, 0, 2}, {1, 1, 3}}})
        for (const Layout& from : {big, zxy}) {
            const StridedRegion s = region_of(from, sub);
            const StridedRegion d = packed_region(from, sub, 3);
            for (auto [dst, src] : {std::pair{d, s}, std::pair{s, d}}) {
                const auto c = pitched_copy(dst, src, 16, 0);
                if (!c) continue;
                EXPECT_EQ(bytes_of(*c), bytes_of(dst, src, 16)) << sub.str();
                ++pitched;
            }
        }
    EXPECT_GE(pitched, 16);
}

TEST(PitchedCopy, MergesDenseDimensionsAndRefusesStridedOrShortRows) {
    const Layout l{{{0, 0, 0}, {8, 6, 5}}, order_xyz};  // strides x 30, y 5, z 1
    // x-planes 2..3, rows y 1..4 of whole z: two planes of 3 rows, or one row per plane
    // once y is whole: here y is partial, so rows of 5 elements, pitch 5, merged into 15.
    auto c = pitched_copy(packed_region(l, Box3{{2, 1, 0}, {4, 4, 5}}, 0), region_of(l, Box3{{2, 1, 0}, {4, 4, 5}}), 8, 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->row_bytes, 15u * 8);  // y and z merged: 3 rows of 5 are dense on both sides
    EXPECT_EQ(c->rows, 2u);            // one per x-plane
    EXPECT_EQ(c->planes, 1u);
    EXPECT_EQ(c->src_pitch, 30u * 8);
    EXPECT_EQ(c->dst_pitch, 15u * 8);
    // Whole slabs are one row.
    c = pitched_copy(packed_region(l, Box3{{2, 0, 0}, {4, 6, 5}}, 0), region_of(l, Box3{{2, 0, 0}, {4, 6, 5}}), 8, 1 << 20);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->rows * c->planes, 1u);
    EXPECT_EQ(c->row_bytes, 60u * 8);
    // A sub-box in all three: planes of rows.
    c = pitched_copy(packed_region(l, Box3{{1, 1, 1}, {3, 4, 4}}, 0), region_of(l, Box3{{1, 1, 1}, {3, 4, 4}}), 8, 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->planes, 2u);
    EXPECT_EQ(c->rows, 3u);
    EXPECT_EQ(c->row_bytes, 3u * 8);
    // Rows shorter than the minimum, and a strided fastest dimension, are refused.
    EXPECT_FALSE(pitched_copy(packed_region(l, Box3{{1, 1, 1}, {3, 4, 4}}, 0), region_of(l, Box3{{1, 1, 1}, {3, 4, 4}}), 8, 25));
    const StridedRegion dense{{2, 6, 5}, {30, 5, 1}, 0}, transposed{{2, 6, 5}, {30, 1, 6}, 0};
    EXPECT_FALSE(pitched_copy(dense, transposed, 8, 0));
    EXPECT_FALSE(pitched_copy(transposed, dense, 8, 0));
    EXPECT_THROW(pitched_copy(dense, StridedRegion{{2, 5, 6}, {30, 6, 1}, 0}, 8, 0), std::logic_error);
}

}  // namespace
}  // namespace fftune
