#include "core/engine/decomposition.hpp"

namespace fftune {

FFTUNE_DEFINE_REGISTRY(Decomposition);

std::array<index_t, 3> complex_size(const std::array<index_t, 3>& n) {
    return {n[0], n[1], n[2] / 2 + 1};
}

Box3 grid_box(const std::array<index_t, 3>& n, int a, int pa, int i, int b, int pb, int j) {
    Box3 box;
    box.hi = n;
    box.lo[a] = split_lo(n[a], pa, i);
    box.hi[a] = split_hi(n[a], pa, i);
    box.lo[b] = split_lo(n[b], pb, j);
    box.hi[b] = split_hi(n[b], pb, j);
    return box;
}

std::array<int, 2> auto_grid(int p) {
    int best = 1;
    for (int a = 1; a * a <= p; ++a)
        if (p % a == 0) best = a;
    return {p / best, best};
}

std::vector<std::array<int, 2>> all_grids(int p) {
    std::vector<std::array<int, 2>> out;
    for (int a = 1; a <= p; ++a)
        if (p % a == 0) out.push_back({a, p / a});
    return out;
}

}  // namespace fftune
