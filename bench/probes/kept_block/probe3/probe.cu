// Probe (issue 29): how much slower are cuFFT's kernels with any store callback?
// The engine's store-aside callback made 1024^3 stages 1.8-4.5x slower
// (gpu_kept_block_shared, 336e923). Here, per stage shape of that run (rank 0 of
// 2), the plan without a callback, with one that only stores (out[offset] = v),
// and with the engine's store-aside callback (variants/backends/cufft_store_aside.cu,
// the block = half the output, its target a second array). CUDA events, medians of 20.
// Usage: probe PLAIN_FATBIN ENGINE_FATBIN
#include <cuda_runtime.h>
#include <cufftXt.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "variants/backends/cufft_store_aside.hpp"

std::vector<char> slurp(const char* p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}
#define CK(x) do { auto e_ = (x); if (e_ != 0) { std::printf("%s -> %d\n", #x, int(e_)); return -1.0f; } } while (0)

struct Shape {
    const char* name;
    bool single, real;       // R2C/D2Z along the fastest axis, else C2C/Z2Z
    long long n, stride, dist, batch;
    long long out_stride, out_dist;
    long long out_elems;     // output array (complex elements)
    unsigned e1, e2;         // output extents of the middle and fastest axes (memory order)
};

std::vector<char> plain_bin, engine_bin;
void* in_buf; void* out_buf; void* target_buf;

// which: 0 none, 1 plain store, 2 store aside (the first half of the slowest axis)
float run(const Shape& s, int which) {
    cufftHandle h;
    CK(cufftCreate(&h));
    FftuneStoreAside info{};
    info.target = target_buf;
    info.e1 = s.e1, info.e2 = s.e2;
    const unsigned e0 = static_cast<unsigned>(s.out_elems / (static_cast<long long>(s.e1) * s.e2));
    info.hi[0] = e0 / 2, info.hi[1] = s.e1, info.hi[2] = s.e2;
    info.stride[0] = static_cast<long long>(s.e1) * s.e2, info.stride[1] = s.e2, info.stride[2] = 1;
    FftuneStoreAside* dev = nullptr;
    cudaMalloc(&dev, sizeof info);
    cudaMemcpy(dev, &info, sizeof info, cudaMemcpyHostToDevice);
    if (which) {
        const auto& bin = which == 1 ? plain_bin : engine_bin;
        const char* name = which == 1 ? (s.single ? "store_plain_c" : "store_plain_z")
                                      : (s.single ? "fftune_store_aside_c" : "fftune_store_aside_z");
        CK(cufftXtSetJITCallback(h, name, bin.data(), bin.size(), s.single ? CUFFT_CB_ST_COMPLEX : CUFFT_CB_ST_COMPLEX_DOUBLE,
                                 (void**)&dev));
    }
    long long n[1] = {s.n}, ie[1] = {s.real ? s.n : s.n}, oe[1] = {s.real ? s.n / 2 + 1 : s.n};
    const cudaDataType it = s.real ? (s.single ? CUDA_R_32F : CUDA_R_64F) : (s.single ? CUDA_C_32F : CUDA_C_64F);
    const cudaDataType ot = s.single ? CUDA_C_32F : CUDA_C_64F;
    size_t work = 0;
    CK(cufftXtMakePlanMany(h, 1, n, ie, s.stride, s.dist, it, oe, s.out_stride, s.out_dist, ot, s.batch, &work, ot));
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<float> ms;
    for (int i = 0; i < 23; ++i) {
        cudaEventRecord(a);
        CK(cufftXtExec(h, in_buf, out_buf, CUFFT_FORWARD));
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float m;
        cudaEventElapsedTime(&m, a, b);
        if (i >= 3) ms.push_back(m);
    }
    cufftDestroy(h);
    cudaFree(dev);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

int main(int, char** argv) {
    plain_bin = slurp(argv[1]), engine_bin = slurp(argv[2]);
    const size_t bytes = size_t(1024) * 512 * 513 * 16 + (1 << 20);
    cudaMalloc(&in_buf, bytes), cudaMalloc(&out_buf, bytes), cudaMalloc(&target_buf, bytes);
    cudaMemset(in_buf, 0, bytes);
    std::vector<Shape> shapes;
    for (long long N : {512LL, 1024LL})
        for (bool single : {false, true}) {
            const long long h = N / 2, zc = N / 2 + 1;
            // slab_2d1d inverse x FFT on the y-slab N x N/2 x zc: strided, batch (y, z) merged.
            shapes.push_back({"x c2c (slab_2d1d inverse)", single, false, N, h * zc, 1, h * zc, h * zc, 1, N * h * zc,
                              static_cast<unsigned>(h), static_cast<unsigned>(zc)});
            // slab_1d2d forward z FFT on the x-slab N/2 x N x N: contiguous r2c, batch (x, y) merged.
            shapes.push_back({"z r2c (slab_1d2d forward)", single, true, N, 1, N, h * N, 1, zc, h * N * zc,
                              static_cast<unsigned>(N), static_cast<unsigned>(zc)});
        }
    for (const Shape& s : shapes) {
        const float none = run(s, 0), plain = run(s, 1), aside = run(s, 2);
        std::printf("{\"N\": %lld, \"precision\": \"%s\", \"stage\": \"%s\", \"no_callback_ms\": %.4f, "
                    "\"plain_store_ms\": %.4f, \"store_aside_ms\": %.4f, \"plain/none\": %.3f, \"aside/none\": %.3f}\n",
                    s.n, s.single ? "single" : "double", s.name, none, plain, aside, plain / none, aside / none);
    }
    return 0;
}
