// Does making a point's cuFFT plans on several host threads at once cut the
// host time of its set-up? fft3d's first slab point at 256^3 on one GPU makes
// three new plans (2D r2c and c2r over yz, 1D c2c over x), 0.4-0.6 ms each
// even after a tiny-plan warm-up (results/h200x1-2026-11-29-warm-up). Per
// precision, after that warm-up: the three plans of one size made one after
// another, or one per thread (std::thread, each its own handle), for sizes
// N, N-16, N-32 (new shapes each time). Usage: probe seq|par [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <cufft.h>

static double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define CK(x) do { auto e = (x); if (e != 0) { std::printf("error %d at %s\n", (int)e, #x); std::exit(1); } } while (0)

struct Spec { int rank; long long n[3]; long long batch, istride, idist, ostride, odist; cufftType type; };

static cufftHandle make(const Spec& s) {
    cufftHandle p;
    size_t ws = 0;
    CK(cufftCreate(&p));
    CK(cufftSetAutoAllocation(p, 0));
    CK(cufftMakePlanMany64(p, s.rank, (long long*)s.n, nullptr, s.istride, s.idist, nullptr, s.ostride, s.odist, s.type,
                           s.batch, &ws));
    return p;
}

// The slab's plans for an n^3 grid at one rank: 2D r2c / c2r over (y, z) batched over x, 1D c2c over x.
static std::vector<Spec> slab(long long n, bool dbl) {
    const long long h = n / 2 + 1;
    return {{2, {n, n, 0}, n, 1, n * n, 1, n * h, dbl ? CUFFT_D2Z : CUFFT_R2C},
            {2, {n, n, 0}, n, 1, n * h, 1, n * n, dbl ? CUFFT_Z2D : CUFFT_C2R},
            {1, {n, 0, 0}, n * h, n * h, 1, n * h, 1, dbl ? CUFFT_Z2Z : CUFFT_C2C}};
}

int main(int argc, char** argv) {
    const bool par = argc > 1 && std::strcmp(argv[1], "par") == 0;
    const long long n0 = argc > 2 ? std::atoll(argv[2]) : 256;
    CK(cudaFree(nullptr));
    for (bool dbl : {false, true})  // the job's warm-up: tiny plans of every type
        for (auto& s : slab(8, dbl)) CK(cufftDestroy(make(s)));
    for (bool dbl : {false, true})
        for (long long n : {n0, n0 - 16, n0 - 32}) {
            const auto specs = slab(n, dbl);
            std::vector<cufftHandle> plans(specs.size());
            const double t0 = now_ms();
            if (par) {
                std::vector<std::thread> th;
                for (std::size_t k = 0; k < specs.size(); ++k) th.emplace_back([&, k] { plans[k] = make(specs[k]); });
                for (auto& t : th) t.join();
            } else {
                for (std::size_t k = 0; k < specs.size(); ++k) plans[k] = make(specs[k]);
            }
            const double t1 = now_ms();
            std::printf("%s %s n=%lld: 3 plans %.3f ms\n", par ? "par" : "seq", dbl ? "double" : "single", n, t1 - t0);
            for (auto p : plans) CK(cufftDestroy(p));
        }
    return 0;
}
