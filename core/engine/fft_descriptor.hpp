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

// The same FFT over parts of both arrays, boxes `in_part` and `out_part`
// (inside the layouts' boxes, equal in the transformed axes' extents): the
// whole arrays' strides, so a part along any untransformed axis is one plan.
// Offsets: Layout::offset_of at the part's first index; element counts: the
// span the part touches from there. Nothing when a part is empty. Throws
// std::logic_error when a part cuts a transformed axis.
std::optional<FftDescriptor> fft_descriptor_of_part(const Layout& in, const Layout& out, const Box3& in_part,
                                                    const Box3& out_part, const std::vector<int>& axes,
                                                    FftKind kind, Precision precision, index_t nz_real);

// Whether one plan made for `a` computes `b` too: the same transform, batch
// and strides, queue and array sizes, and neither stores a block aside (a
// plan's store-aside target is its own). Equal overlap slices share a plan.
bool same_fft_plan(const FftDescriptor& a, const FftDescriptor& b);

}  // namespace fftune
