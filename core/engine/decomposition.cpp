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

}  // namespace fftune
