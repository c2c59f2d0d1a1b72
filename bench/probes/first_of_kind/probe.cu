// Which part of a process's first cuFFT plans and transforms is a one-time
// cost? For fft3d's one-rank shapes (slab: 2D r2c over yz + 1D c2c over x;
// pencil: 1D r2c over z + 1D c2c over y and x; at one rank both are one 3D
// r2c, whose first inverse in a job costs 2-3 ms), per precision in turn: host
// time of plan making and of the first and second forward / inverse
// (launch + sync: the fixed cost is host time, the transform itself is
// ~0.1 ms). Run under CUDA_MODULE_LOADING=LAZY (default) and EAGER, with and
// without a warm-up of tiny plans (N=8) of every type first.
// Usage: probe N [warm]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <cufft.h>

static double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define CK(x) do { auto e = (x); if (e != 0) { std::printf("error %d at %s\n", (int)e, #x); std::exit(1); } } while (0)

struct Shape { const char* name; int rank; long long n[3]; long long batch, idist, odist, istride; cufftType fwd, inv; };

static void one(const Shape& s, void* a, void* b, void* work, bool print) {
    cufftHandle pf, pi;
    size_t ws = 0;
    double t0 = now_ms();
    CK(cufftCreate(&pf)); CK(cufftSetAutoAllocation(pf, 0));
    CK(cufftMakePlanMany64(pf, s.rank, (long long*)s.n, nullptr, s.istride, s.idist, nullptr, s.istride, s.odist, s.fwd, s.batch, &ws));
    CK(cufftSetWorkArea(pf, work));
    double t1 = now_ms();
    CK(cufftCreate(&pi)); CK(cufftSetAutoAllocation(pi, 0));
    CK(cufftMakePlanMany64(pi, s.rank, (long long*)s.n, nullptr, s.istride, s.odist, nullptr, s.istride, s.idist, s.inv, s.batch, &ws));
    CK(cufftSetWorkArea(pi, work));
    double t2 = now_ms();
    auto exec = [&](cufftHandle p, cufftType t, bool fwd) {
        switch (t) {
            case CUFFT_D2Z: CK(cufftExecD2Z(p, (cufftDoubleReal*)a, (cufftDoubleComplex*)b)); break;
            case CUFFT_Z2D: CK(cufftExecZ2D(p, (cufftDoubleComplex*)b, (cufftDoubleReal*)a)); break;
            case CUFFT_R2C: CK(cufftExecR2C(p, (cufftReal*)a, (cufftComplex*)b)); break;
            case CUFFT_C2R: CK(cufftExecC2R(p, (cufftComplex*)b, (cufftReal*)a)); break;
            case CUFFT_Z2Z: CK(cufftExecZ2Z(p, (cufftDoubleComplex*)a, (cufftDoubleComplex*)b, fwd ? CUFFT_FORWARD : CUFFT_INVERSE)); break;
            case CUFFT_C2C: CK(cufftExecC2C(p, (cufftComplex*)a, (cufftComplex*)b, fwd ? CUFFT_FORWARD : CUFFT_INVERSE)); break;
            default: break;
        }
        CK(cudaDeviceSynchronize());
    };
    double e[5]; e[0] = now_ms();
    exec(pf, s.fwd, true); e[1] = now_ms();
    exec(pf, s.fwd, true); e[2] = now_ms();
    exec(pi, s.inv, false); e[3] = now_ms();
    exec(pi, s.inv, false); e[4] = now_ms();
    if (print)
        std::printf("%-22s plan_fwd %6.2f plan_inv %6.2f | fwd1 %6.2f fwd2 %6.2f inv1 %6.2f inv2 %6.2f ms\n", s.name, t1 - t0, t2 - t1,
                    e[1] - e[0], e[2] - e[1], e[3] - e[2], e[4] - e[3]);
    CK(cufftDestroy(pf)); CK(cufftDestroy(pi));
}

int main(int argc, char** argv) {
    const long long N = argc > 1 ? std::atoll(argv[1]) : 256;
    const bool warm = argc > 2 && std::strcmp(argv[2], "warm") == 0;
    const char* ml = std::getenv("CUDA_MODULE_LOADING");
    double t0 = now_ms();
    CK(cudaFree(0));
    double t1 = now_ms();
    std::printf("N=%lld CUDA_MODULE_LOADING=%s warm=%d context %.2f ms\n", N, ml ? ml : "(unset)", warm, t1 - t0);
    const size_t bytes = size_t(N) * N * (N / 2 + 1) * 2 * 8 + (1 << 20);
    void *a, *b, *work;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&work, bytes));
    const long long h = N / 2 + 1;
    for (int pass = 0; pass < 2; ++pass) {
        const bool dbl = pass == 0;
        const cufftType r2c = dbl ? CUFFT_D2Z : CUFFT_R2C, c2r = dbl ? CUFFT_Z2D : CUFFT_C2R, c2c = dbl ? CUFFT_Z2Z : CUFFT_C2C;
        if (warm) {
            double w0 = now_ms();
            const long long n = 8;
            Shape t[] = {{"tiny 2d r2c", 2, {n, n}, 4, n * n, n * (n / 2 + 1), 1, r2c, c2r},
                         {"tiny 1d r2c", 1, {n, 0}, 4, n, n / 2 + 1, 1, r2c, c2r},
                         {"tiny 1d c2c", 1, {n, 0}, 4, n, n, 1, c2c, c2c},
                         {"tiny 3d r2c", 3, {n, n, n}, 4, n * n * n, n * n * (n / 2 + 1), 1, r2c, c2r}};
            for (auto& s : t) one(s, a, b, work, false);
            std::printf("%s warm-up %.2f ms\n", dbl ? "double" : "single", now_ms() - w0);
        }
        Shape shapes[] = {
            {"slab yz 2d r2c", 2, {N, N}, N, N * N, N * h, 1, r2c, c2r},
            {"slab x 1d c2c", 1, {N, 0}, N * h, 1, 1, N * h, c2c, c2c},
            {"pencil z 1d r2c", 1, {N, 0}, N * N, N, h, 1, r2c, c2r},
            {"pencil y 1d c2c", 1, {N, 0}, N * h, N, N, 1, c2c, c2c},
            {"slab yz again", 2, {N, N}, N, N * N, N * h, 1, r2c, c2r},
            {"one rank 3d r2c", 3, {N, N, N}, 1, N * N * N, N * N * h, 1, r2c, c2r},
            {"one rank 3d again", 3, {N, N, N}, 1, N * N * N, N * N * h, 1, r2c, c2r},
        };
        std::printf("-- %s\n", dbl ? "double" : "single");
        for (auto& s : shapes) one(s, a, b, work, true);
    }
    std::printf("process %.2f ms after context\n", now_ms() - t1);
    return 0;
}
