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

std::optional<FftDescriptor> fft_descriptor_of_slice(const Layout& in, const Layout& out, int axis, index_t lo,
                                                     index_t extent, const std::vector<int>& axes, FftKind kind,
                                                     Precision precision, index_t nz_real) {
    if (std::find(axes.begin(), axes.end(), axis) != axes.end())
        throw std::logic_error("an FFT stage is sliced along an axis it transforms");
    auto d = fft_descriptor(in, out, axes, kind, precision, nz_real);
    if (!d || extent <= 0) return std::nullopt;
    // Batch dims follow the untransformed axes in index order (fft_descriptor).
    std::size_t k = 0;
    for (int b = 0; b < axis; ++b) k += std::find(axes.begin(), axes.end(), b) == axes.end();
    d->batch[k].n = extent;
    auto first = [&](const Layout& l) {
        auto at = l.box.lo;
        at[axis] = lo;
        return l.offset_of(at);
    };
    d->in_elements -= first(in);
    d->out_elements -= first(out);
    return d;
}

}  // namespace fftune
