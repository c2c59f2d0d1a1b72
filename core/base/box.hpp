// Boxes in the global index space and the memory layouts that store them.
// All index arithmetic is 64-bit: 2048^3 elements exceed 2^31.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

namespace fftune {

using index_t = std::int64_t;

// Axis numbers used everywhere: 0 = x, 1 = y, 2 = z.
inline constexpr int axis_x = 0;
inline constexpr int axis_y = 1;
inline constexpr int axis_z = 2;
char axis_name(int axis);

// "64x64x128"
std::string size_string(const std::array<index_t, 3>& n);

// Half-open box [lo, hi) per axis in global (x, y, z) coordinates.
struct Box3 {
    std::array<index_t, 3> lo{0, 0, 0};
    std::array<index_t, 3> hi{0, 0, 0};

    index_t extent(int axis) const { return hi[axis] - lo[axis]; }
    index_t count() const;  // number of elements; 0 for an empty box
    bool empty() const { return count() == 0; }
    bool contains(const std::array<index_t, 3>& p) const {
        return lo[0] <= p[0] && p[0] < hi[0] && lo[1] <= p[1] && p[1] < hi[1] && lo[2] <= p[2] && p[2] < hi[2];
    }
    bool operator==(const Box3&) const = default;
    std::string str() const;
};

Box3 intersect(const Box3& a, const Box3& b);
// The part of `a` outside `b` as at most 6 disjoint non-empty boxes (slabs
// along x below and above b, then along y, then z within the rest).
std::vector<Box3> subtract(const Box3& a, const Box3& b);

// Balanced split of n items over p parts: the first n % p parts get one extra.
// Parts past n are empty when p > n.
index_t split_lo(index_t n, int p, int i);
inline index_t split_hi(index_t n, int p, int i) { return split_lo(n, p, i + 1); }

// Start of part i of n items over p parts whose sizes grow geometrically,
// size_k ∝ ρ^k with ρ = min(1.25, 4^(1/(p-1))) (the largest at most 4 times
// the smallest), each part at least one item where n >= p (balanced where
// n < p). smallest_first = false mirrors it: the last part is the smallest.
index_t tapered_lo(index_t n, int p, int i, bool smallest_first = true);

// Slice i of `parts` slices of `box` along `axis` whose boundaries fall on
// multiples of `granule` planes: balanced (split_lo over the granules), or
// tapered (tapered_lo) from the smallest first or last.
Box3 slice_of(const Box3& box, int axis, int parts, int i, index_t granule = 1, bool tapered = false,
              bool smallest_first = true);

// Memory order: order[0] is the slowest axis, order[2] the contiguous one.
// xyz = contiguous in z (thesis 4.1 i), zxy = contiguous in y (ii), yzx = contiguous in x (iii).
using AxisOrder = std::array<int, 3>;
inline constexpr AxisOrder order_xyz{axis_x, axis_y, axis_z};
inline constexpr AxisOrder order_zxy{axis_z, axis_x, axis_y};
inline constexpr AxisOrder order_yzx{axis_y, axis_z, axis_x};
std::string order_name(const AxisOrder& order);

// A local array: the box a rank owns, stored densely in the given axis order.
struct Layout {
    Box3 box;
    AxisOrder order = order_xyz;

    // Element stride of each global axis (x, y, z) in this array.
    std::array<index_t, 3> strides() const;
    index_t offset_of(const std::array<index_t, 3>& global_index) const;
    bool operator==(const Layout&) const = default;
};

// A sub-box of a layout as a 3D strided region, dimensions listed slowest first
// in the layout's memory order. This is what pack/unpack kernels, cudaMemcpy3D and
// MPI_Type_create_subarray consume.
struct StridedRegion {
    std::array<index_t, 3> extent{0, 0, 0};  // elements per dimension, slow -> fast
    std::array<index_t, 3> stride{0, 0, 0};  // element strides, slow -> fast
    index_t offset = 0;                      // first element, in elements
    index_t count() const { return extent[0] * extent[1] * extent[2]; }
    // True when the region occupies [offset, offset + count) without gaps.
    bool contiguous() const;
};

// The region of `layout` covering `sub` (which must lie inside layout.box).
StridedRegion region_of(const Layout& layout, const Box3& sub);
// The same elements packed densely in the layout's axis order, starting at `offset`.
StridedRegion packed_region(const Layout& layout, const Box3& sub, index_t offset);

// A copy dst[d] = src[s] of equal extents as at most `planes` x `rows` rows of
// `row_bytes` contiguous bytes on both sides, all in bytes: the shape a copy
// engine takes (cudaMemcpy2D per plane). Dimensions of extent 1 are dropped
// and dimensions dense over the one inside them on both sides merged.
struct PitchedCopy {
    std::size_t row_bytes = 0;
    std::size_t rows = 1, planes = 1;
    std::size_t dst_offset = 0, dst_pitch = 0, dst_plane = 0;  // pitch: between rows; plane: between planes
    std::size_t src_offset = 0, src_pitch = 0, src_plane = 0;
};
// Nothing when the fastest moving dimension is strided on either side, or a
// row of a copy of several rows is shorter than `min_row_bytes` (a copy engine
// moves short rows slowly; a kernel does better).
std::optional<PitchedCopy> pitched_copy(const StridedRegion& d, const StridedRegion& s, std::size_t elem_bytes,
                                        std::size_t min_row_bytes);

}  // namespace fftune
