// Store callbacks that only store (out[offset] = v) against no callback.
#include <cufftXt.h>

__device__ void store_plain_z(void* out, unsigned long long offset, cufftDoubleComplex v, void*, void*) {
    static_cast<cufftDoubleComplex*>(out)[offset] = v;
}
__device__ void store_plain_c(void* out, unsigned long long offset, cufftComplex v, void*, void*) {
    static_cast<cufftComplex*>(out)[offset] = v;
}
