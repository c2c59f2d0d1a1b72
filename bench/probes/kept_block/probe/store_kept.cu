// LTO store callback: elements of the kept x-range go straight to their place
// in the next layout (the x-slab), the rest to the FFT's own output.
#include <cufftXt.h>

struct KeptInfo {
    double2* kept_dst;        // x-slab array (Mx x Ny x Nzc)
    unsigned plane;           // My * Nzc: elements per x in the FFT's output (y-slab)
    unsigned kept_x;          // x below this is kept (rank 0)
    unsigned long long dst_plane;   // Ny * Nzc
    unsigned long long dst_offset;  // y0 * Nzc
};

__device__ void store_kept(void* out, unsigned long long offset, cufftDoubleComplex element, void* info, void*) {
    const KeptInfo* k = static_cast<const KeptInfo*>(info);
    const unsigned o = static_cast<unsigned>(offset);
    const unsigned x = o / k->plane;
    if (x < k->kept_x)
        k->kept_dst[x * k->dst_plane + k->dst_offset + (o - x * k->plane)] = element;
    else
        static_cast<cufftDoubleComplex*>(out)[offset] = element;
}
