// Probe (issue 29): does a cuFFT LTO store callback that writes the kept block
// into the next layout cost less than the copy it saves? slab_2d1d inverse,
// rank 0 of 2: fft.x (Z2Z along x on the y-slab Nx x Ny/2 x Nzc), then the kept
// block (x < Nx/2) into the x-slab (Nx/2 x Ny x Nzc). Times by CUDA events,
// median of 20. Usage: probe FATBIN N
#include <cuda_runtime.h>
#include <cufftXt.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

struct KeptInfo {
    double2* kept_dst;
    unsigned plane;
    unsigned kept_x;
    unsigned long long dst_plane;
    unsigned long long dst_offset;
};
#define CK(x) do { auto e = (x); if (e != 0) { std::printf("%s:%d %s -> %d\n", __FILE__, __LINE__, #x, int(e)); std::exit(1); } } while (0)

__global__ void fill(double2* a, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        a[i] = make_double2(std::sin(0.001 * i), std::cos(0.0007 * i));
}

int main(int argc, char** argv) {
    std::ifstream f(argv[1], std::ios::binary);
    std::vector<char> fatbin((std::istreambuf_iterator<char>(f)), {});
    const long long N = std::atoll(argv[2]), nzc = N / 2 + 1, my = N / 2, mx = N / 2;
    const size_t elems = size_t(N) * my * nzc;  // both slabs hold this many
    double2 *in, *out, *xslab, *ref;
    CK(cudaMalloc(&in, elems * 16)); CK(cudaMalloc(&out, elems * 16));
    CK(cudaMalloc(&xslab, elems * 16)); CK(cudaMalloc(&ref, elems * 16));
    fill<<<1024, 256>>>(in, elems);
    CK(cudaMemset(xslab, 0, elems * 16)); CK(cudaMemset(ref, 0, elems * 16));
    long long n[1] = {N}, emb[1] = {N};
    const long long stride = my * nzc, batch = my * nzc;
    auto make = [&](bool cb, cufftHandle& h, KeptInfo** info_dev) {
        CK(cufftCreate(&h));
        if (cb) {
            KeptInfo host{xslab, unsigned(my * nzc), unsigned(mx), (unsigned long long)(N * nzc), 0ull};
            CK(cudaMalloc(info_dev, sizeof(KeptInfo)));
            CK(cudaMemcpy(*info_dev, &host, sizeof host, cudaMemcpyHostToDevice));
            CK(cufftXtSetJITCallback(h, "store_kept", fatbin.data(), fatbin.size(), CUFFT_CB_ST_COMPLEX_DOUBLE, (void**)info_dev));
        }
        size_t work = 0;
        CK(cufftXtMakePlanMany(h, 1, n, emb, stride, 1, CUDA_C_64F, emb, stride, 1, CUDA_C_64F, batch, &work, CUDA_C_64F));
    };
    cufftHandle plain, with_cb;
    KeptInfo* info = nullptr;
    cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
    make(false, plain, nullptr);
    cudaEventRecord(t0); make(true, with_cb, &info); cudaEventRecord(t1); cudaEventSynchronize(t1);
    auto time = [&](auto&& body) {
        std::vector<float> ms;
        for (int i = 0; i < 23; ++i) {
            cudaEventRecord(t0); body(); cudaEventRecord(t1); cudaEventSynchronize(t1);
            float m; cudaEventElapsedTime(&m, t0, t1); if (i >= 3) ms.push_back(m);
        }
        std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
    };
    auto copy_kept = [&](double2* src, double2* dst) {  // rows x < mx: my*nzc contiguous each
        CK(cudaMemcpy2DAsync(dst, N * nzc * 16, src, my * nzc * 16, my * nzc * 16, mx, cudaMemcpyDeviceToDevice));
    };
    const float fft = time([&] { CK(cufftExecZ2Z(plain, (cufftDoubleComplex*)in, (cufftDoubleComplex*)out, CUFFT_INVERSE)); });
    const float copy = time([&] { copy_kept(out, ref); });
    const float cb = time([&] { CK(cufftExecZ2Z(with_cb, (cufftDoubleComplex*)in, (cufftDoubleComplex*)out, CUFFT_INVERSE)); });
    CK(cudaDeviceSynchronize());
    // Check: the callback's kept block equals the plain FFT's, copied.
    CK(cufftExecZ2Z(plain, (cufftDoubleComplex*)in, (cufftDoubleComplex*)ref, CUFFT_INVERSE));
    std::vector<double2> a(elems), b(elems);
    double2* ref2; CK(cudaMalloc(&ref2, elems * 16)); CK(cudaMemset(ref2, 0, elems * 16));
    copy_kept(ref, ref2); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(a.data(), xslab, elems * 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), ref2, elems * 16, cudaMemcpyDeviceToHost));
    double err = 0;
    for (size_t i = 0; i < elems; ++i) err = std::max(err, std::abs(a[i].x - b[i].x) + std::abs(a[i].y - b[i].y));
    const double gb = 2.0 * elems / 2 * 16 / 1e9;
    std::printf("{\"N\": %lld, \"fft_ms\": %.4f, \"kept_copy_ms\": %.4f, \"fft_plus_copy_ms\": %.4f, \"fft_with_store_callback_ms\": %.4f, "
                "\"callback_over_fft_plus_copy\": %.4f, \"kept_copy_GBps\": %.1f, \"max_abs_diff\": %.3g}\n",
                N, fft, copy, fft + copy, cb, cb / (fft + copy), gb / copy * 1e3, err);
    return 0;
}
