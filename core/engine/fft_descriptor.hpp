// The guru descriptor of one FFT stage of a plan (thesis Tables 4.1-4.3):
// transformed axes get their length and the in/out strides of the two
// layouts, the remaining axes become batch dimensions.
#pragma once

#include <optional>
#include <vector>

#include "core/platform/backend.hpp"

namespace fftune {

// Batched FFT that turns `in` into `out` along `axes` (slowest first). For r2c and
// c2r the halved axis is z and `nz_real` its real length. Nothing when either box
// is empty (no work on this rank). Throws std::logic_error when a batch axis
// changes extent (a bug in the decomposition).
std::optional<FftDescriptor> fft_descriptor(const Layout& in, const Layout& out,
                                            const std::vector<int>& axes, FftKind kind,
                                            Precision precision, index_t nz_real);

// The same FFT over the part of both arrays whose index along batch axis
// `axis` lies in [lo, lo + extent): the whole arrays' strides, so a slice
// along any untransformed axis is one plan (not only along the slowest,
// where the part is contiguous). Offsets: Layout::offset_of at the part's
// first index. Nothing when the part is empty. Throws std::logic_error when
// `axis` is transformed.
std::optional<FftDescriptor> fft_descriptor_of_slice(const Layout& in, const Layout& out, int axis, index_t lo,
                                                     index_t extent, const std::vector<int>& axes, FftKind kind,
                                                     Precision precision, index_t nz_real);

}  // namespace fftune
