// Can slab_2d1d's forward start its x-FFT before its exchange has ended?
// One process drives P GPUs (peer access on), each holding one rank of the
// engine's best 1024^3 plan (slab_2d1d, default layout, cuda_ipc_push,
// overlap K, tapered): yz r2c FFT of x-slice k on the FFT stream, then the
// slice's blocks copied by copy engines (cudaMemcpy2DAsync) into the peers'
// receive arrays [x][y/P][z] in rounds (cuda_ipc_push_rounds: in round r GPU
// d writes to d + r mod P; the GPUs meet through events between rounds), the
// self block on a stream of its own, then the x-FFT.
//
// Split S: each destination's block of a slice moves in S parts along y (the
// axis the x-FFT does not transform), and the x-FFT runs in S parts, part j
// as soon as every source has delivered part j of every slice. The rounds
// move item (slice k, part j) in the order of k + L*j (L: lag), so part 0 of
// late slices overtakes part 1 of early ones and part 0 is complete before
// the exchange ends. S = 1 is the engine's schedule today.
//
// Timed: per GPU, CUDA events from a common start (every FFT stream waits on
// one event of GPU 0 behind a spin kernel) to its last x-FFT part; each
// iteration's time is the max over GPUs. Prints one JSON line per schedule.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); std::exit(1); } } while (0)
#define CF(x) do { cufftResult rc_ = (x); if (rc_ != CUFFT_SUCCESS) { std::fprintf(stderr, "%s:%d cufft %d\n", __FILE__, __LINE__, (int)rc_); std::exit(1); } } while (0)

__global__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

// The engine's split (core/base/box.cpp): even, or tapered smallest first.
static long split_lo(long n, int p, int i) { return i * (n / p) + std::min<long>(i, n % p); }
static long tapered_lo(long n, int p, int i) {
    if (n < p) return split_lo(n, p, i);
    const double rho = std::min(1.25, std::pow(4.0, 1.0 / std::max(p - 1, 1)));
    const double share = (std::pow(rho, i) - 1) / (std::pow(rho, p) - 1);
    return i + std::llround(double(n - p) * share);
}

struct Gpu {
    void *in = nullptr, *mid = nullptr, *recv = nullptr;
    cudaStream_t fs{};
    std::vector<cudaStream_t> cs;  // [0] the rounds, [1] the self block
    std::vector<cudaEvent_t> slice_done;
    std::vector<cudaEvent_t> part_done;  // [stream * S + j], after part j's last copy on cs[stream]
    cudaEvent_t start{}, end{};
    std::map<long, cufftHandle> yz;  // by planes
    std::map<long, cufftHandle> x;   // by rows of a part
};

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 1024;
    const bool single = argc > 2 && argv[2][0] == 's';
    const int reps = argc > 3 ? std::atoi(argv[3]) : 15;
    int P = 0;
    CK(cudaGetDeviceCount(&P));
    if (argc > 4) P = std::min(P, std::atoi(argv[4]));
    const long X = n / P, Y = n / P, Z = n / 2 + 1;
    const size_t rb = single ? 4 : 8, cb = 2 * rb;
    const size_t plane_in = n * n * rb, plane_mid = n * Z * cb, plane_recv = Y * Z * cb;

    std::vector<Gpu> g(P);
    for (int d = 0; d < P; ++d) {
        CK(cudaSetDevice(d));
        for (int e = 0; e < P; ++e)
            if (e != d) CK(cudaDeviceEnablePeerAccess(e, 0));
        CK(cudaMalloc(&g[d].in, X * plane_in));
        CK(cudaMalloc(&g[d].mid, X * plane_mid));
        CK(cudaMalloc(&g[d].recv, n * plane_recv));
        CK(cudaMemset(g[d].in, 0, X * plane_in));
        CK(cudaMemset(g[d].mid, 0, X * plane_mid));
        CK(cudaMemset(g[d].recv, 0, n * plane_recv));
        CK(cudaStreamCreateWithFlags(&g[d].fs, cudaStreamNonBlocking));
        g[d].cs.resize(2);
        for (auto& s : g[d].cs) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(cudaEventCreate(&g[d].start));
        CK(cudaEventCreate(&g[d].end));
    }
    auto yz_plan = [&](int d, long planes) {
        auto it = g[d].yz.find(planes);
        if (it != g[d].yz.end()) return it->second;
        CK(cudaSetDevice(d));
        cufftHandle p;
        size_t ws;
        int dims[2] = {(int)n, (int)n};
        CF(cufftCreate(&p));
        CF(cufftMakePlanMany(p, 2, dims, nullptr, 1, n * n, nullptr, 1, n * Z, single ? CUFFT_R2C : CUFFT_D2Z,
                             (int)planes, &ws));
        CF(cufftSetStream(p, g[d].fs));
        return g[d].yz[planes] = p;
    };
    // x-FFT over rows [r0, r0 + rows) of every x-plane of the receive array, in place.
    auto x_plan = [&](int d, long rows) {
        auto it = g[d].x.find(rows);
        if (it != g[d].x.end()) return it->second;
        CK(cudaSetDevice(d));
        cufftHandle p;
        size_t ws;
        int dims[1] = {(int)n}, emb[1] = {(int)n};
        CF(cufftCreate(&p));
        CF(cufftMakePlanMany(p, 1, dims, emb, (int)(Y * Z), 1, emb, (int)(Y * Z), 1, single ? CUFFT_C2C : CUFFT_Z2Z,
                             (int)(rows * Z), &ws));
        CF(cufftSetStream(p, g[d].fs));
        return g[d].x[rows] = p;
    };
    auto exec_yz = [&](cufftHandle p, void* a, void* b) {
        if (single) CF(cufftExecR2C(p, (float*)a, (cufftComplex*)b));
        else CF(cufftExecD2Z(p, (double*)a, (cufftDoubleComplex*)b));
    };
    auto exec_x = [&](cufftHandle p, void* a) {
        if (single) CF(cufftExecC2C(p, (cufftComplex*)a, (cufftComplex*)a, CUFFT_FORWARD));
        else CF(cufftExecZ2Z(p, (cufftDoubleComplex*)a, (cufftDoubleComplex*)a, CUFFT_FORWARD));
    };

    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    cudaEvent_t go;
    CK(cudaSetDevice(0));
    CK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));

    // One forward with K slices (tapered or even), S parts, lag L. Returns ms per iteration.
    auto run = [&](int K, bool tapered, int S, int L, bool copies, bool ffts) {
        for (int d = 0; d < P; ++d) {
            CK(cudaSetDevice(d));
            for (auto& e : g[d].slice_done) CK(cudaEventDestroy(e));
            for (auto& e : g[d].part_done) CK(cudaEventDestroy(e));
            g[d].slice_done.assign(K, {});
            g[d].part_done.assign(2 * S, {});  // [stream * S + j]: stream 0 the rounds, 1 the self copy
            for (auto& e : g[d].slice_done) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            for (auto& e : g[d].part_done) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        }
        std::vector<long> lo(K + 1);
        for (int k = 0; k <= K; ++k) lo[k] = tapered ? tapered_lo(X, K, k) : split_lo(X, K, k);
        std::vector<long> ylo(S + 1);
        for (int j = 0; j <= S; ++j) ylo[j] = split_lo(Y, S, j);
        std::vector<std::pair<int, int>> order;  // (k, j), by k + L*j, then j
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < S; ++j) order.emplace_back(k, j);
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
            return std::make_tuple(a.first + L * a.second, a.second) < std::make_tuple(b.first + L * b.second, b.second);
        });
        for (int d = 0; d < P; ++d) {
            for (int k = 0; k < K; ++k) yz_plan(d, lo[k + 1] - lo[k]);
            for (int j = 0; j < S; ++j) x_plan(d, ylo[j + 1] - ylo[j]);
        }
        std::vector<cudaEvent_t> rounds(order.size() * (P - 1) * P);
        for (std::size_t i = 0; i < rounds.size(); ++i) {
            CK(cudaSetDevice(int(i % P)));
            CK(cudaEventCreateWithFlags(&rounds[i], cudaEventDisableTiming));
        }
        std::vector<float> times;
        for (int it = 0; it < reps + 3; ++it) {
            for (int d = 0; d < P; ++d) {
                CK(cudaSetDevice(d));
                CK(cudaDeviceSynchronize());
            }
            CK(cudaSetDevice(0));
            spin<<<1, 1, 0, g[0].fs>>>((long long)clock_khz * 50);  // 50 ms for the host to queue everything
            CK(cudaEventRecord(go, g[0].fs));
            for (int d = 0; d < P; ++d) {
                CK(cudaSetDevice(d));
                CK(cudaStreamWaitEvent(g[d].fs, go, 0));
                CK(cudaEventRecord(g[d].start, g[d].fs));
                for (auto s : g[d].cs) CK(cudaStreamWaitEvent(s, g[d].start, 0));
                for (int k = 0; k < K; ++k) {
                    if (ffts && lo[k + 1] > lo[k])
                        exec_yz(yz_plan(d, lo[k + 1] - lo[k]), (char*)g[d].in + lo[k] * plane_in,
                                (char*)g[d].mid + lo[k] * plane_mid);
                    CK(cudaEventRecord(g[d].slice_done[k], g[d].fs));
                }
            }
            // Copies in rounds, as cuda_ipc_push_rounds: in round r GPU d writes to
            // d + r (mod P), so each GPU sends to one peer and receives from one;
            // every round waits for the last on all GPUs (the engine's ranks meet).
            // The self block moves on its own stream beside the rounds.
            int round = 0;
            std::vector<int> waited(P, -1);
            for (std::size_t i = 0; i < order.size(); ++i) {
                const auto [k, j] = order[i];
                const long planes = lo[k + 1] - lo[k], rows = ylo[j + 1] - ylo[j];
                auto copy = [&](int d, int dst, cudaStream_t s) {
                    if (!copies || planes == 0 || rows == 0) return;
                    const char* src = (const char*)g[d].mid + lo[k] * plane_mid + (dst * Y + ylo[j]) * Z * cb;
                    char* to = (char*)g[dst].recv + (d * X + lo[k]) * plane_recv + ylo[j] * Z * cb;
                    CK(cudaMemcpy2DAsync(to, plane_recv, src, plane_mid, rows * Z * cb, planes, cudaMemcpyDefault, s));
                };
                for (int d = 0; d < P; ++d) {
                    CK(cudaSetDevice(d));
                    if (k > waited[d]) {
                        CK(cudaStreamWaitEvent(g[d].cs[0], g[d].slice_done[k], 0));
                        CK(cudaStreamWaitEvent(g[d].cs[1], g[d].slice_done[k], 0));
                        waited[d] = k;
                    }
                    copy(d, d, g[d].cs[1]);
                    if (k == K - 1) CK(cudaEventRecord(g[d].part_done[1 * S + j], g[d].cs[1]));
                }
                for (int r = 1; r < P; ++r, ++round) {
                    for (int d = 0; d < P; ++d) {
                        CK(cudaSetDevice(d));
                        if (round > 0)
                            for (int e = 0; e < P; ++e) CK(cudaStreamWaitEvent(g[d].cs[0], rounds[(round - 1) * P + e], 0));
                        copy(d, (d + r) % P, g[d].cs[0]);
                        CK(cudaEventRecord(rounds[round * P + d], g[d].cs[0]));
                    }
                }
                if (k == K - 1)
                    for (int d = 0; d < P; ++d) {
                        CK(cudaSetDevice(d));
                        CK(cudaEventRecord(g[d].part_done[0 * S + j], g[d].cs[0]));
                    }
            }
            for (int d = 0; d < P; ++d) {
                CK(cudaSetDevice(d));
                for (int j = 0; j < S; ++j) {
                    // Part j has landed here once every GPU's stream 0 is past its part-j rounds
                    // and this GPU's self copy of it is done.
                    for (int src = 0; src < P; ++src) CK(cudaStreamWaitEvent(g[d].fs, g[src].part_done[0 * S + j], 0));
                    CK(cudaStreamWaitEvent(g[d].fs, g[d].part_done[1 * S + j], 0));
                    if (ffts) exec_x(x_plan(d, ylo[j + 1] - ylo[j]), (char*)g[d].recv + ylo[j] * Z * cb);
                }
                CK(cudaEventRecord(g[d].end, g[d].fs));
            }
            float worst = 0;
            for (int d = 0; d < P; ++d) {
                CK(cudaSetDevice(d));
                CK(cudaEventSynchronize(g[d].end));
                float ms;
                CK(cudaEventElapsedTime(&ms, g[d].start, g[d].end));
                worst = std::max(worst, ms);
            }
            if (it >= 3) times.push_back(worst);
        }
        for (std::size_t i = 0; i < rounds.size(); ++i) {
            CK(cudaSetDevice(int(i % P)));
            CK(cudaEventDestroy(rounds[i]));
        }
        std::sort(times.begin(), times.end());
        std::printf(
            "{\"n\":%ld,\"precision\":\"%s\",\"gpus\":%d,\"slices\":%d,\"tapered\":%s,\"parts\":%d,\"lag\":%d,"
            "\"copies\":%s,\"ffts\":%s,\"reps\":%d,\"min_ms\":%.4f,\"median_ms\":%.4f,\"max_ms\":%.4f}\n",
            n, single ? "single" : "double", P, K, tapered ? "true" : "false", S, L, copies ? "true" : "false",
            ffts ? "true" : "false", reps, times.front(), times[times.size() / 2], times.back());
        std::fflush(stdout);
    };

    // Parts alone: the FFTs without copies, the copies without FFTs.
    run(1, false, 1, 1, false, true);
    run(1, false, 1, 1, true, false);
    run(8, true, 1, 1, true, false);
    run(8, true, 2, 1, true, false);
    // Today's schedules, then the split ones.
    for (int K : {4, 8}) {
        run(K, true, 1, 1, true, true);
        for (int S : {2, 4})
            for (int L : {1, 2, K}) run(K, true, S, L, true, true);
    }
    run(8, false, 1, 1, true, true);
    run(8, false, 2, 1, true, true);
    return 0;
}
