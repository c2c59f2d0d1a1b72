// What a cuFFT store callback needs to put part of an FFT's output into
// another array (FftDescriptor::StoreAside): the self block of the reshape
// after the stage goes straight to its place in the reshape's destination.
// Plain data, shared by the host code and the LTO callback (cufft_store_aside.cu).
#pragma once

struct FftuneStoreAside {
    void* base;                // the stage's output array: a looped call's output starts inside it
    void* target;              // the other array
    unsigned e1, e2;           // extents of the output's middle and fastest axes (its memory order)
    unsigned lo[3], hi[3];     // the block stored aside, in output coordinates (memory order, from 0)
    long long stride[3];       // its element offsets in `target` per coordinate step
    long long offset;          // and of coordinate (0, 0, 0)
};
