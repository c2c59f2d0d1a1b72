// Probe (issue 29): which cuFFT planning calls accept the engine's LTO store
// callback (variants/backends/cufft_store_aside.cu)? cufftMakePlanMany64 gave
// CUFFT_INTERNAL_ERROR (5) in the engine (2e23320 job) where the first probe's
// cufftXtMakePlanMany had worked. Each line: one variant, its cufftResult.
// Usage: plan_variants ENGINE_FATBIN PROBE_FATBIN
#include <cuda_runtime.h>
#include <cufftXt.h>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "variants/backends/cufft_store_aside.hpp"

std::vector<char> slurp(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

int main(int, char** argv) {
    const auto engine = slurp(argv[1]), probe = slurp(argv[2]);
    FftuneStoreAside host{};
    host.e1 = 64, host.e2 = 33, host.hi[0] = 32, host.hi[1] = 64, host.hi[2] = 33, host.stride[0] = 64 * 33,
    host.stride[1] = 33, host.stride[2] = 1;
    FftuneStoreAside* info = nullptr;
    cudaMalloc(&info, sizeof host);
    cudaMemcpy(info, &host, sizeof host, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    long long n[1] = {64}, emb[1] = {64};
    for (int api = 0; api < 2; ++api)
        for (int setup = 0; setup < 2; ++setup)
            for (int which = 0; which < 3; ++which) {
                cufftHandle h;
                cufftCreate(&h);
                if (setup) {
                    cufftSetStream(h, s);
                    cufftSetAutoAllocation(h, 0);
                }
                const char* name = which == 0 ? "fftune_store_aside_z" : which == 1 ? "fftune_store_aside_c" : "store_kept";
                const auto& bin = which == 2 ? probe : engine;
                const bool single = which == 1;
                const cufftResult cb = cufftXtSetJITCallback(h, name, bin.data(), bin.size(),
                                                             single ? CUFFT_CB_ST_COMPLEX : CUFFT_CB_ST_COMPLEX_DOUBLE,
                                                             (void**)&info);
                size_t work = 0;
                cufftResult plan;
                if (api == 0)
                    plan = cufftMakePlanMany64(h, 1, n, emb, 64 * 33, 1, emb, 64 * 33, 1, single ? CUFFT_C2C : CUFFT_Z2Z,
                                               64 * 33, &work);
                else
                    plan = cufftXtMakePlanMany(h, 1, n, emb, 64 * 33, 1, single ? CUDA_C_32F : CUDA_C_64F, emb, 64 * 33, 1,
                                               single ? CUDA_C_32F : CUDA_C_64F, 64 * 33, &work,
                                               single ? CUDA_C_32F : CUDA_C_64F);
                std::printf("%-20s %-12s setstream+noauto=%d callback=%s: SetJITCallback %d, plan %d\n",
                            api == 0 ? "cufftMakePlanMany64" : "cufftXtMakePlanMany", "", setup, name, int(cb), int(plan));
                cufftDestroy(h);
            }
    return 0;
}
