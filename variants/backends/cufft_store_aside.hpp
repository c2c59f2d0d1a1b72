// What a cuFFT store callback needs to put part of an FFT's output into
// another array (FftDescriptor::StoreAside): the self block of the reshape
// after the stage goes straight to its place in the reshape's destination.
// Plain data, shared by the host code and the LTO callback (cufft_store_aside.cu).
#pragma once

#ifdef __CUDACC__
#define FFTUNE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FFTUNE_HOST_DEVICE inline
#endif

struct FftuneStoreAside {
    void* target;              // the other array
    unsigned e1, e2;           // extents of the output's middle and fastest axes (its memory order)
    double inv_e1, inv_e2;     // 1.0 / e1, 1.0 / e2: divisions as multiplications
    unsigned lo[3], hi[3];     // the block stored aside, in output coordinates (memory order, from 0)
    long long stride[3];       // its element offsets in `target` per coordinate step
    long long offset;          // and of coordinate (0, 0, 0)
};

// n / d for n < 2^32: n * (1 / d) in double is within one of the quotient
// (relative error below 2^-52), then corrected by the remainder. Two integer
// divisions per element made the callback cost up to 1.6x more than a plain
// store callback (results/h100x1-2026-11-26-kept-block/probe3).
FFTUNE_HOST_DEVICE unsigned fftune_divide(unsigned n, unsigned d, double inv_d) {
    unsigned q = static_cast<unsigned>(static_cast<double>(n) * inv_d);
    const long long r = static_cast<long long>(n) - static_cast<long long>(q) * d;
    if (r < 0) --q;
    else if (r >= d) ++q;
    return q;
}
