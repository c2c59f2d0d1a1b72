// The octree's pruned local transform: pruned_transform.hpp.
#include "families/convolution/pruned_transform.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace fftune::convolution {

using Size3 = std::array<index_t, 3>;

void PrunedTransform::Pass::run(const void* in, void* out) const {
    if (!plan) return;
    plan->execute(const_cast<char*>(static_cast<const char*>(in)) + in_at * index_t(in_elem),
                  static_cast<char*>(out) + out_at * index_t(out_elem));
}

std::vector<PrunedTransform::Pass> PrunedTransform::make_passes(Backend& backend, const Layout& real,
                                                                const Layout& spectrum, const Size3& n, index_t x0,
                                                                index_t x1) {
    const index_t mx = 2 * n[0], my = 2 * n[1], mz = 2 * n[2], kz = n[2] + 1;
    if (n[0] < 1 || n[1] < 1 || n[2] < 1)
        throw std::invalid_argument(fmt::format("pruned transform: the grid {} needs every extent >= 1", size_string(n)));
    if (real.box != Box3{{0, 0, 0}, {mx, my, mz}} || spectrum.box != Box3{{0, 0, 0}, {mx, my, kz}})
        throw std::invalid_argument(fmt::format(
            "pruned transform of the grid {}: the arrays must be the padded grid {} and its r2c spectrum {}, not {} and {}",
            size_string(n), Box3{{0, 0, 0}, {mx, my, mz}}.str(), Box3{{0, 0, 0}, {mx, my, kz}}.str(), real.box.str(),
            spectrum.box.str()));
    if (x0 < 0 || x0 > x1 || x1 > n[0])
        throw std::invalid_argument(
            fmt::format("pruned transform: the own x-planes [{}, {}) must lie in [0, {})", x0, x1, n[0]));
    // A batched 1D FFT along `axis` from `in` to `out` over the rows whose
    // other two coordinates lie in `rows` (its range along `axis` ignored).
    auto pass = [&](FftKind kind, int axis, const Layout& in, const Layout& out, Box3 rows) {
        Pass p;
        rows.lo[axis] = 0, rows.hi[axis] = 1;
        if (rows.empty()) return p;
        const bool halved = kind == FftKind::r2c || kind == FftKind::c2r;
        const index_t len = halved ? mz : in.box.extent(axis);
        const auto si = in.strides(), so = out.strides();
        FftDescriptor d;
        d.precision = Precision::double_;
        d.kind = kind;
        d.dims = {{len, si[axis], so[axis]}};
        std::vector<int> batch;
        for (int b = 0; b < 3; ++b)
            if (b != axis) batch.push_back(b);
        // Slowest first, as the layout stores them (the cuda backend merges and batches in that order).
        std::sort(batch.begin(), batch.end(), [&](int a, int b) { return si[a] > si[b]; });
        for (int b : batch) d.batch.push_back({rows.extent(b), si[b], so[b]});
        p.in_at = in.offset_of(rows.lo), p.out_at = out.offset_of(rows.lo);
        d.in_elements = in.box.count() - p.in_at;
        d.out_elements = out.box.count() - p.out_at;
        p.in_elem = kind == FftKind::r2c ? sizeof(double) : 2 * sizeof(double);
        p.out_elem = kind == FftKind::c2r ? sizeof(double) : 2 * sizeof(double);
        const auto count = std::size_t(rows.count());
        const auto in_n = std::size_t(kind == FftKind::c2r ? kz : len), out_n = std::size_t(kind == FftKind::r2c ? kz : len);
        p.device_bytes = count * (in_n * p.in_elem + out_n * p.out_elem);
        p.work = double(count) * double(len) * (halved ? 0.5 : 1.0);
        p.plan = backend.make_fft(d);
        return p;
    };
    using K = FftKind;
    std::vector<Pass> p(steps);
    p[fwd_z] = pass(K::r2c, axis_z, real, spectrum, {{x0, 0, 0}, {x1, n[1], 1}});
    p[fwd_y] = pass(K::c2c_forward, axis_y, spectrum, spectrum, {{x0, 0, 0}, {x1, 1, kz}});
    p[fwd_x] = pass(K::c2c_forward, axis_x, spectrum, spectrum, {{0, 0, 0}, {1, my, kz}});
    p[inv_x] = pass(K::c2c_backward, axis_x, spectrum, spectrum, {{0, 0, 0}, {1, my, kz}});
    p[inv_y] = pass(K::c2c_backward, axis_y, spectrum, spectrum, {{0, 0, 0}, {n[0], 1, kz}});
    p[inv_z] = pass(K::c2r, axis_z, spectrum, real, {{0, 0, 0}, {n[0], n[1], 1}});
    return p;
}

PrunedTransform::PrunedTransform(Backend& backend, const Layout& real, const Layout& spectrum, const Size3& n,
                                 index_t x0, index_t x1)
    : backend_(&backend), real_(real), spectrum_(spectrum), n_(n), own_{{x0, 0, 0}, {x1, n[1], n[2]}},
      passes_(make_passes(backend, real, spectrum, n, x0, x1)) {
    const index_t mx = 2 * n[0], my = 2 * n[1], kz = n[2] + 1;
    for (const Box3& b : {Box3{{0, 0, 0}, {x0, my, kz}}, Box3{{x1, 0, 0}, {mx, my, kz}},
                          Box3{{x0, n[1], 0}, {x1, my, kz}}})
        if (!b.empty()) zeroed_.push_back(b);
    // One work area for every pass (they run one after another on one queue), as Plan does.
    std::size_t area = 0;
    for (const Pass& p : passes_)
        if (p.plan) area = std::max(area, p.plan->work_bytes());
    if (area > 0) {
        area_ = Buffer(backend, area);
        for (const Pass& p : passes_)
            if (p.plan && p.plan->work_bytes() > 0) p.plan->set_work_area(area_.data());
    }
    zero_ = Buffer(backend, 2 * sizeof(double));
    backend.zero(zero_.data(), zero_.bytes());
}

std::size_t PrunedTransform::work_bytes(Backend& backend, const Layout& real, const Layout& spectrum, const Size3& n,
                                        index_t x0, index_t x1) {
    std::size_t area = 0;
    for (const Pass& p : make_passes(backend, real, spectrum, n, x0, x1))
        if (p.plan) area = std::max(area, p.plan->work_bytes());
    return area;
}

void PrunedTransform::zero_box(void* data, const Layout& layout, const Box3& box, std::size_t elem_bytes) {
    const StridedRegion r = region_of(layout, box);
    if (r.count() == 0) return;
    if (r.contiguous()) return backend_->zero(static_cast<char*>(data) + r.offset * index_t(elem_bytes),
                                              std::size_t(r.count()) * elem_bytes);
    backend_->copy_region(data, r, zero_.data(), StridedRegion{r.extent, {0, 0, 0}, 0}, elem_bytes);
}

void PrunedTransform::forward(const void* in, void* spectrum) {
    for (const Box3& b : zeroed_) zero_box(spectrum, spectrum_, b, 2 * sizeof(double));
    passes_[fwd_z].run(in, spectrum);
    passes_[fwd_y].run(spectrum, spectrum);
    passes_[fwd_x].run(spectrum, spectrum);
}

void PrunedTransform::inverse(void* spectrum, void* in) {
    passes_[inv_x].run(spectrum, spectrum);
    passes_[inv_y].run(spectrum, spectrum);
    passes_[inv_z].run(spectrum, in);
}

void PrunedTransform::restore(void* in, const void* packed) {
    if (own_.empty()) return;
    zero_box(in, real_, {{own_.lo[0], 0, n_[2]}, {own_.hi[0], n_[1], 2 * n_[2]}}, sizeof(double));
    backend_->copy_region(in, region_of(real_, own_), packed, packed_region(real_, own_, 0), sizeof(double));
}

std::size_t PrunedTransform::forward_device_bytes() const {
    std::size_t b = 0;
    for (const Box3& z : zeroed_) b += std::size_t(z.count()) * 2 * sizeof(double);
    for (int s : {fwd_z, fwd_y, fwd_x}) b += passes_[std::size_t(s)].device_bytes;
    return b;
}
std::size_t PrunedTransform::inverse_device_bytes() const {
    std::size_t b = 0;
    for (int s : {inv_x, inv_y, inv_z}) b += passes_[std::size_t(s)].device_bytes;
    return b;
}

// The full transform's work per direction: z on Mx My rows (halved), y on
// Mx kz rows, x on My kz rows.
double PrunedTransform::forward_work_fraction() const {
    const double mx = 2.0 * n_[0], my = 2.0 * n_[1], mz = 2.0 * n_[2], kz = n_[2] + 1.0;
    return (passes_[fwd_z].work + passes_[fwd_y].work + passes_[fwd_x].work) / (mx * my * mz * 0.5 + 2 * mx * my * kz);
}
double PrunedTransform::inverse_work_fraction() const {
    const double mx = 2.0 * n_[0], my = 2.0 * n_[1], mz = 2.0 * n_[2], kz = n_[2] + 1.0;
    return (passes_[inv_x].work + passes_[inv_y].work + passes_[inv_z].work) / (mx * my * mz * 0.5 + 2 * mx * my * kz);
}

}  // namespace fftune::convolution
