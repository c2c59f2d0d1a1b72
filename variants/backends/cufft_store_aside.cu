// cuFFT LTO store callbacks (compiled to LTO-IR, handed to cufftXtSetJITCallback
// by the cuda backend by name): output element `offset` of the call (whose
// output starts `out - base` elements into the stage's output array, < 2^32
// elements) is decoded into its coordinates; those inside the block go to
// `target`, the rest to the output.
#include <cufftXt.h>

#include "variants/backends/cufft_store_aside.hpp"

template <class T>
__device__ __forceinline__ void store_aside(void* out, unsigned long long offset, T v, void* info) {
    const FftuneStoreAside& s = *static_cast<const FftuneStoreAside*>(info);
    const unsigned o = static_cast<unsigned>(static_cast<T*>(out) - static_cast<T*>(s.base) + offset);
    const unsigned rest = o / s.e2, c2 = o - rest * s.e2, c0 = rest / s.e1, c1 = rest - c0 * s.e1;
    if (c0 >= s.lo[0] && c0 < s.hi[0] && c1 >= s.lo[1] && c1 < s.hi[1] && c2 >= s.lo[2] && c2 < s.hi[2])
        static_cast<T*>(s.target)[s.offset + c0 * s.stride[0] + c1 * s.stride[1] + c2 * s.stride[2]] = v;
    else
        static_cast<T*>(out)[offset] = v;
}

// C++ linkage: cuFFT looks the name up as a C++ function of the callback's
// signature (with extern "C" planning failed, CUFFT_INTERNAL_ERROR: probe2).
__device__ void fftune_store_aside_c(void* out, unsigned long long offset, cufftComplex v, void* info, void*) {
    store_aside(out, offset, v, info);
}
__device__ void fftune_store_aside_z(void* out, unsigned long long offset, cufftDoubleComplex v, void* info, void*) {
    store_aside(out, offset, v, info);
}
