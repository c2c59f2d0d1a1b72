// Does a batched 2D FFT over the yz planes of a slab run faster in small
// batches of planes whose intermediate stays in L2 between cuFFT's passes?
// One rank's slab of slab_2d1d at n^3 over P ranks: n/P planes of n x n,
// forward r2c (real n x n -> n x (n/2+1)) and inverse c2r, out of place.
// Each batch size b runs the slab as n/P / b cuFFT calls, queued plainly and
// captured once into a CUDA graph. Prints one JSON line per (direction, b).
// Expected: two passes over HBM instead of four once b planes fit L2 (50 MB
// on an H100: a 1024^2 double plane is 8 MiB in and 8 MiB out).
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); std::exit(1); } } while (0)
#define CF(x) do { cufftResult rc_ = (x); if (rc_ != CUFFT_SUCCESS) { std::fprintf(stderr, "%s:%d cufft %d\n", __FILE__, __LINE__, (int)rc_); std::exit(1); } } while (0)

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 1024;
    const long planes = argc > 2 ? std::atol(argv[2]) : 256;
    const bool single = argc > 3 && argv[3][0] == 's';
    const int reps = 15;
    const long real_plane = n * n, cplx_plane = n * (n / 2 + 1);
    const size_t rb = single ? 4 : 8, cb = 2 * rb;
    void *re, *cx;
    CK(cudaMalloc(&re, planes * real_plane * rb));
    CK(cudaMalloc(&cx, planes * cplx_plane * cb));
    CK(cudaMemset(re, 0, planes * real_plane * rb));
    CK(cudaMemset(cx, 0, planes * cplx_plane * cb));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t a, z;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&z));
    int dims[2] = {(int)n, (int)n};
    const double bytes = double(planes) * (real_plane * rb + cplx_plane * cb);  // one read + one write
    for (int dir = 0; dir < 2; ++dir) {
        for (long b : {planes, 64L, 32L, 16L, 8L, 4L, 2L, 1L}) {
            if (b > planes || planes % b) continue;
            cufftHandle p;
            CF(cufftCreate(&p));
            size_t ws = 0;
            const cufftType t = dir == 0 ? (single ? CUFFT_R2C : CUFFT_D2Z) : (single ? CUFFT_C2R : CUFFT_Z2D);
            if (dir == 0)
                CF(cufftMakePlanMany(p, 2, dims, nullptr, 1, real_plane, nullptr, 1, cplx_plane, t, (int)b, &ws));
            else
                CF(cufftMakePlanMany(p, 2, dims, nullptr, 1, cplx_plane, nullptr, 1, real_plane, t, (int)b, &ws));
            CF(cufftSetStream(p, s));
            auto run = [&] {
                for (long k = 0; k < planes; k += b) {
                    char* r = (char*)re + k * real_plane * rb;
                    char* c = (char*)cx + k * cplx_plane * cb;
                    if (t == CUFFT_D2Z) CF(cufftExecD2Z(p, (double*)r, (cufftDoubleComplex*)c));
                    if (t == CUFFT_R2C) CF(cufftExecR2C(p, (float*)r, (cufftComplex*)c));
                    if (t == CUFFT_Z2D) CF(cufftExecZ2D(p, (cufftDoubleComplex*)c, (double*)r));
                    if (t == CUFFT_C2R) CF(cufftExecC2R(p, (cufftComplex*)c, (float*)r));
                }
            };
            cudaGraph_t g;
            cudaGraphExec_t ge;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            run();
            CK(cudaStreamEndCapture(s, &g));
            CK(cudaGraphInstantiate(&ge, g, 0));
            for (int graph = 0; graph < 2; ++graph) {
                std::vector<float> ms;
                for (int i = 0; i < reps + 2; ++i) {
                    CK(cudaEventRecord(a, s));
                    if (graph) CK(cudaGraphLaunch(ge, s)); else run();
                    CK(cudaEventRecord(z, s));
                    CK(cudaEventSynchronize(z));
                    float m = 0;
                    CK(cudaEventElapsedTime(&m, a, z));
                    if (i >= 2) ms.push_back(m);
                }
                std::sort(ms.begin(), ms.end());
                const double med = ms[ms.size() / 2];
                std::printf("{\"n\":%ld,\"planes\":%ld,\"precision\":\"%s\",\"direction\":\"%s\",\"batch\":%ld,"
                            "\"graph\":%s,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,\"GBps_2pass\":%.1f}\n",
                            n, planes, single ? "single" : "double", dir ? "inverse" : "forward", b,
                            graph ? "true" : "false", med, ms.front(), ms.back(), bytes / med / 1e6);
            }
            CK(cudaGraphExecDestroy(ge));
            CK(cudaGraphDestroy(g));
            CF(cufftDestroy(p));
        }
    }
    // Device copy rate for the floor: read + write of the complex slab.
    {
        std::vector<float> ms;
        for (int i = 0; i < reps + 2; ++i) {
            CK(cudaEventRecord(a, s));
            CK(cudaMemcpyAsync(re, cx, std::min(planes * real_plane * rb, planes * cplx_plane * cb), cudaMemcpyDeviceToDevice, s));
            CK(cudaEventRecord(z, s));
            CK(cudaEventSynchronize(z));
            float m = 0;
            CK(cudaEventElapsedTime(&m, a, z));
            if (i >= 2) ms.push_back(m);
        }
        std::sort(ms.begin(), ms.end());
        const double by = 2.0 * std::min(planes * real_plane * rb, planes * cplx_plane * cb);
        std::printf("{\"copy_GBps\":%.1f,\"bytes\":%.0f}\n", by / ms[ms.size() / 2] / 1e6, by);
    }
    return 0;
}
