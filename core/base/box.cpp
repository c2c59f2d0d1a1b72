#include "core/base/box.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace fftune {

char axis_name(int axis) { return "xyz"[axis]; }

std::string size_string(const std::array<index_t, 3>& n) { return fmt::format("{}x{}x{}", n[0], n[1], n[2]); }

index_t Box3::count() const {
    index_t n = 1;
    for (int a = 0; a < 3; ++a) n *= std::max<index_t>(0, hi[a] - lo[a]);
    return n;
}

std::string Box3::str() const {
    return fmt::format("[{}:{}, {}:{}, {}:{}]", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
}

Box3 intersect(const Box3& a, const Box3& b) {
    Box3 r;
    for (int d = 0; d < 3; ++d) {
        r.lo[d] = std::max(a.lo[d], b.lo[d]);
        r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
    }
    return r;
}

std::vector<Box3> subtract(const Box3& a, const Box3& b) {
    const Box3 cut = intersect(a, b);
    if (cut.empty()) return a.empty() ? std::vector<Box3>{} : std::vector<Box3>{a};
    std::vector<Box3> out;
    Box3 rest = a;  // shrinks to `cut` axis by axis
    for (int axis = 0; axis < 3; ++axis) {
        Box3 below = rest, above = rest;
        below.hi[axis] = cut.lo[axis];
        above.lo[axis] = cut.hi[axis];
        for (const Box3& piece : {below, above})
            if (!piece.empty()) out.push_back(piece);
        rest.lo[axis] = cut.lo[axis];
        rest.hi[axis] = cut.hi[axis];
    }
    return out;
}

index_t split_lo(index_t n, int p, int i) {
    if (p <= 0 || i < 0 || i > p) throw std::invalid_argument("split_lo: part index out of range");
    const index_t base = n / p, rem = n % p;
    return i * base + std::min<index_t>(i, rem);
}

index_t tapered_lo(index_t n, int p, int i, bool smallest_first) {
    if (p <= 0 || i < 0 || i > p) throw std::invalid_argument("tapered_lo: part index out of range");
    if (!smallest_first) return n - tapered_lo(n, p, p - i, true);
    if (n < p) return split_lo(n, p, i);
    const double rho = std::min(1.25, std::pow(4.0, 1.0 / std::max(p - 1, 1)));
    const double share = (std::pow(rho, i) - 1) / (std::pow(rho, p) - 1);  // of the sizes' sum, parts 0..i-1
    return i + std::llround(double(n - p) * share);                         // one item each, the rest by share
}

Box3 slice_of(const Box3& box, int axis, int parts, int i, index_t granule, bool tapered, bool smallest_first) {
    if (i < 0 || i >= parts) throw std::invalid_argument("slice_of: slice index out of range");
    if (granule < 1) throw std::invalid_argument("slice_of: granule must be at least one plane");
    Box3 r = box;
    const index_t n = std::max<index_t>(box.hi[axis] - box.lo[axis], 0);
    const index_t units = (n + granule - 1) / granule;
    auto start = [&](int k) { return tapered ? tapered_lo(units, parts, k, smallest_first) : split_lo(units, parts, k); };
    r.lo[axis] = box.lo[axis] + std::min(n, granule * start(i));
    r.hi[axis] = box.lo[axis] + std::min(n, granule * start(i + 1));
    return r;
}

std::string order_name(const AxisOrder& order) {
    return {axis_name(order[0]), axis_name(order[1]), axis_name(order[2])};
}

std::array<index_t, 3> Layout::strides() const {
    std::array<index_t, 3> s{};
    index_t running = 1;
    for (int k = 2; k >= 0; --k) {
        s[order[k]] = running;
        running *= box.extent(order[k]);
    }
    return s;
}

index_t Layout::offset_of(const std::array<index_t, 3>& g) const {
    const auto s = strides();
    index_t off = 0;
    for (int a = 0; a < 3; ++a) off += (g[a] - box.lo[a]) * s[a];
    return off;
}

bool StridedRegion::contiguous() const {
    // Walk from the fastest dimension: each must be dense over the one inside it.
    index_t dense = 1;
    for (int k = 2; k >= 0; --k) {
        if (extent[k] == 0) return true;
        if (extent[k] != 1 && stride[k] != dense) return false;
        dense *= extent[k];
    }
    return true;
}

StridedRegion region_of(const Layout& layout, const Box3& sub) {
    if (!sub.empty() && intersect(layout.box, sub) != sub)
        throw std::logic_error("region_of: " + sub.str() + " is not inside " + layout.box.str());
    StridedRegion r;
    const auto s = layout.strides();
    for (int k = 0; k < 3; ++k) {
        r.extent[k] = sub.extent(layout.order[k]);
        r.stride[k] = s[layout.order[k]];
    }
    r.offset = sub.empty() ? 0 : layout.offset_of(sub.lo);
    return r;
}

StridedRegion packed_region(const Layout& layout, const Box3& sub, index_t offset) {
    StridedRegion r;
    for (int k = 0; k < 3; ++k) r.extent[k] = sub.extent(layout.order[k]);
    r.stride = {r.extent[1] * r.extent[2], r.extent[2], 1};
    r.offset = offset;
    return r;
}

std::optional<PitchedCopy> pitched_copy(const StridedRegion& d, const StridedRegion& s, std::size_t elem_bytes,
                                        std::size_t min_row_bytes) {
    if (d.extent != s.extent) throw std::logic_error("pitched_copy: extents differ");
    if (s.count() == 0) return std::nullopt;
    // (extent, dst stride, src stride) from fast to slow, extent-1 dimensions dropped.
    struct Dim {
        index_t n, ds, ss;
    };
    std::vector<Dim> dims;
    for (int k = 2; k >= 0; --k)
        if (s.extent[k] != 1) dims.push_back({s.extent[k], d.stride[k], s.stride[k]});
    if (dims.empty()) dims.push_back({1, 1, 1});
    if (dims[0].ds != 1 || dims[0].ss != 1) return std::nullopt;
    // A dimension whose strides are the one inside it times its extent, on both
    // sides, continues it: a longer row, or more rows of the same pitch.
    std::vector<Dim> merged{dims[0]};
    for (std::size_t i = 1; i < dims.size(); ++i) {
        Dim& in = merged.back();
        if (dims[i].ds == in.n * in.ds && dims[i].ss == in.n * in.ss)
            in.n *= dims[i].n;
        else
            merged.push_back(dims[i]);
    }
    PitchedCopy c;
    c.row_bytes = static_cast<std::size_t>(merged[0].n) * elem_bytes;
    c.dst_offset = static_cast<std::size_t>(d.offset) * elem_bytes;
    c.src_offset = static_cast<std::size_t>(s.offset) * elem_bytes;
    if (merged.size() >= 2) {
        c.rows = static_cast<std::size_t>(merged[1].n);
        c.dst_pitch = static_cast<std::size_t>(merged[1].ds) * elem_bytes;
        c.src_pitch = static_cast<std::size_t>(merged[1].ss) * elem_bytes;
    }
    if (merged.size() == 3) {
        c.planes = static_cast<std::size_t>(merged[2].n);
        c.dst_plane = static_cast<std::size_t>(merged[2].ds) * elem_bytes;
        c.src_plane = static_cast<std::size_t>(merged[2].ss) * elem_bytes;
    }
    if (c.rows * c.planes > 1 && c.row_bytes < min_row_bytes) return std::nullopt;
    return c;
}

}  // namespace fftune
