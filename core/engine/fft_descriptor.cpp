#include "core/engine/fft_descriptor.hpp"

#include <algorithm>
#include <stdexcept>

namespace fftune {

std::optional<FftDescriptor> fft_descriptor(const Layout& in, const Layout& out,
                                            const std::vector<int>& axes, FftKind kind,
                                            Precision precision, index_t nz_real) {
    if (in.box.empty() || out.box.empty()) return std::nullopt;
    FftDescriptor d;
    d.precision = precision;
    d.kind = kind;
    const auto si = in.strides(), so = out.strides();
    const bool halved = kind == FftKind::r2c || kind == FftKind::c2r;
    for (int a : axes) {
        const index_t n = (halved && a == axis_z) ? nz_real : std::max(in.box.extent(a), out.box.extent(a));
        d.dims.push_back({n, si[a], so[a]});
    }
    for (int b = 0; b < 3; ++b) {
        if (std::find(axes.begin(), axes.end(), b) != axes.end()) continue;
        if (in.box.extent(b) != out.box.extent(b))
            throw std::logic_error("FFT stage changes the extent of a batch axis");
        d.batch.push_back({in.box.extent(b), si[b], so[b]});
    }
    d.in_elements = in.box.count();
    d.out_elements = out.box.count();
    return d;
}

std::optional<FftDescriptor> fft_descriptor_of_part(const Layout& in, const Layout& out, const Box3& in_part,
                                                    const Box3& out_part, const std::vector<int>& axes,
                                                    FftKind kind, Precision precision, index_t nz_real) {
    if (in_part.empty() || out_part.empty()) return std::nullopt;
    for (int a : axes)
        if (in_part.extent(a) != in.box.extent(a) || out_part.extent(a) != out.box.extent(a))
            throw std::logic_error("an FFT stage is parted along an axis it transforms");
    auto d = fft_descriptor(in, out, axes, kind, precision, nz_real);
    if (!d) return std::nullopt;
    // Batch dims follow the untransformed axes in index order (fft_descriptor).
    std::size_t k = 0;
    for (int b = 0; b < 3; ++b) {
        if (std::find(axes.begin(), axes.end(), b) != axes.end()) continue;
        if (in_part.extent(b) != out_part.extent(b))
            throw std::logic_error("FFT stage parts differ in the extent of a batch axis");
        d->batch[k++].n = in_part.extent(b);
    }
    auto span = [](const Layout& l, const Box3& part) {
        std::array<index_t, 3> last{};
        for (int a = 0; a < 3; ++a) last[a] = part.hi[a] - 1;
        return l.offset_of(last) - l.offset_of(part.lo) + 1;
    };
    d->in_elements = span(in, in_part);
    d->out_elements = span(out, out_part);
    return d;
}

bool same_fft_plan(const FftDescriptor& a, const FftDescriptor& b) {
    auto same = [](const std::vector<FftDim>& x, const std::vector<FftDim>& y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const FftDim& u, const FftDim& v) {
            return u.n == v.n && u.in_stride == v.in_stride && u.out_stride == v.out_stride;
        });
    };
    return a.precision == b.precision && a.kind == b.kind && same(a.dims, b.dims) && same(a.batch, b.batch) &&
           a.in_elements == b.in_elements && a.out_elements == b.out_elements && a.queue == b.queue &&
           !a.store_aside && !b.store_aside;
}

}  // namespace fftune
