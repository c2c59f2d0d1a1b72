// cufftXt: one process spreads a whole 3D real transform over every GPU it
// sees (the cuda backend's MultiDeviceFft, used by reference_cufftxt).
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "core/platform/backend.hpp"

namespace fftune {

// Why cufftXt cannot spread an n-point transform over this process's GPUs
// (fewer than 2, more than 16, mixed architectures), or nothing. cuFFT may
// still refuse the size when the plan is made.
std::optional<std::string> cufftxt_unavailable(const std::array<index_t, 3>& n, Precision precision);

// A cufftXt transform over every visible GPU, run on `stream` (a stream of
// `stream_device`, which must be one of them). `backend` (the cuda backend
// owning the stream) copies between the caller's buffers and pinned host
// memory. Throws Unsupported when cuFFT refuses the plan.
std::unique_ptr<MultiDeviceFft> make_cufftxt(const std::array<index_t, 3>& n, Precision precision, Backend& backend,
                                             cudaStream_t stream, int stream_device);

}  // namespace fftune
