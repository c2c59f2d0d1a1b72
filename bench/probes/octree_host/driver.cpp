// Host cost of the octree sampling at a 256^3 rank pair's shapes: rank 0's
// slab [0,128) samples for rank 1's [128,256) and interpolates what rank 1 sends.
#include <chrono>
#include <cstdio>
#include <vector>
#include SAMPLING_HEADER
using namespace fftune;
using namespace fftune::convolution;
int main() {
    const index_t n = NSIZE;
    const Box3 own{{0, 0, 0}, {n / 2, n, n}}, other{{n / 2, 0, 0}, {n, n, n}};
    std::vector<double> grid(std::size_t(n) * n * n);
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = double(i % 977) * 1e-3;
    for (const char* name : {"full", "fine", "coarse"}) {
        const auto& s = sampling_scheme(name);
        double best_s = 1e9, best_i = 1e9, best_t = 1e9;
        for (int rep = 0; rep < 5; ++rep) {
            auto tt = std::chrono::steady_clock::now();
            const auto to = tile(other, own, s);
            const auto from = tile(own, other, s);
            auto t0 = std::chrono::steady_clock::now();
            best_t = std::min(best_t, std::chrono::duration<double, std::milli>(t0 - tt).count());
            std::vector<double> send;
            sample(to, [&](index_t i, index_t j, index_t l) { return grid[std::size_t((i * n + j) * n + l)]; }, send);
            auto t1 = std::chrono::steady_clock::now();
            std::vector<double> y(std::size_t(own.count()), 0.0);
            interpolate_add(from, send.data(), own, y.data());
            auto t2 = std::chrono::steady_clock::now();
            best_s = std::min(best_s, std::chrono::duration<double, std::milli>(t1 - t0).count());
            best_i = std::min(best_i, std::chrono::duration<double, std::milli>(t2 - t1).count());
        }
        std::printf("%s %s: both tilings %.1f ms, sample %.1f ms, interpolate %.1f ms (own slab %lld points)\n", LABEL, name, best_t, best_s, best_i, (long long)own.count());
    }
}
