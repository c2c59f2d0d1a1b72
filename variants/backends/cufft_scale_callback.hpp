// A cuFFT store callback that multiplies each output element by a real factor
// of the same offset: out[i] = fft(in)[i] * factor[i] (FftDescriptor::scale_output).
// Compiled once per process and precision by NVRTC to LTO-IR and linked into
// the plan's kernels by cuFFT (JIT LTO callbacks, cuFFT 11.5+), so a solver's
// kernel multiply costs one extra real read instead of a pass over the spectrum.
#pragma once

#include <cufft.h>

#include "core/base/names.hpp"

namespace fftune {

// Attaches the callback to `plan`: after cufftCreate, before cufftMakePlan*.
// `factor` is device memory, read at the output's offsets. Throws Unsupported
// when NVRTC or cuFFT refuses (the message says which and why).
void attach_scale_callback(cufftHandle plan, Precision precision, const void* factor);

}  // namespace fftune
