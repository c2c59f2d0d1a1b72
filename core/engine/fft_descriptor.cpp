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
