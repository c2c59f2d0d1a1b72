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


}  // namespace fftune
