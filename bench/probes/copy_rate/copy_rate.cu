// Host<->device copy rates, pageable (malloc) against pinned (cudaHostRegister / cudaMallocHost), 8 GiB.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <omp.h>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }
int main() {
    const size_t bytes = size_t(8) << 30;
    void* d; cudaMalloc(&d, bytes);
    char* h = (char*)malloc(bytes);
    auto t = clk::now();
    #pragma omp parallel for
    for (long i = 0; i < (long)(bytes >> 12); ++i) h[i << 12] = 1;  // first touch
    printf("first touch (omp %d threads): %.0f ms\n", omp_get_max_threads(), ms(t));
    for (int r = 0; r < 2; ++r) {
        t = clk::now(); cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice); printf("pageable H2D: %.0f ms (%.1f GB/s)\n", ms(t), bytes / ms(t) / 1e6);
        t = clk::now(); cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost); printf("pageable D2H: %.0f ms (%.1f GB/s)\n", ms(t), bytes / ms(t) / 1e6);
    }
    t = clk::now(); cudaError_t e = cudaHostRegister(h, bytes, cudaHostRegisterDefault); printf("cudaHostRegister 8 GiB: %.0f ms (%s)\n", ms(t), cudaGetErrorString(e));
    for (int r = 0; r < 2; ++r) {
        t = clk::now(); cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice); printf("registered H2D: %.0f ms (%.1f GB/s)\n", ms(t), bytes / ms(t) / 1e6);
        t = clk::now(); cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost); printf("registered D2H: %.0f ms (%.1f GB/s)\n", ms(t), bytes / ms(t) / 1e6);
    }
    t = clk::now(); cudaHostUnregister(h); printf("cudaHostUnregister: %.0f ms\n", ms(t));
    void* p; t = clk::now(); e = cudaMallocHost(&p, bytes); printf("cudaMallocHost 8 GiB: %.0f ms (%s)\n", ms(t), cudaGetErrorString(e));
    t = clk::now(); cudaMemcpy(d, p, bytes, cudaMemcpyHostToDevice); printf("mallochost H2D: %.0f ms (%.1f GB/s)\n", ms(t), bytes / ms(t) / 1e6);
    t = clk::now(); cudaFreeHost(p); printf("cudaFreeHost: %.0f ms\n", ms(t));
    return 0;
}
