#include "core/engine/decomposition.hpp"

#include <algorithm>
#include <map>

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

namespace {
bool plain_fft(const ChainStep& s) { return s.kind == ChainStep::Kind::fft && !s.all_devices; }
}  // namespace

std::vector<std::vector<bool>> self_reshapes(const std::vector<Chain>& chains) {
    std::vector<std::vector<bool>> self(chains.size());
    if (chains.empty()) return self;
    const std::size_t nsteps = chains[0].steps.size();
    for (auto& s : self) s.assign(nsteps, false);
    for (std::size_t i = 0; i < nsteps; ++i) {
        if (chains[0].steps[i].kind != ChainStep::Kind::reshape) continue;
        std::map<int, int> ranks_of_color;
        for (const Chain& c : chains) ++ranks_of_color[c.steps[i].color];
        for (std::size_t r = 0; r < chains.size(); ++r)
            self[r][i] = ranks_of_color[chains[r].steps[i].color] == 1 &&
                         chains[r].layouts[i] == chains[r].layouts[i + 1];
    }
    return self;
}

void settle_unexchanged_orders(std::vector<Chain>& chains) {
    const auto self = self_reshapes(chains);
    for (std::size_t r = 0; r < chains.size(); ++r) {
        Chain& c = chains[r];
        // Ascending, so that a run of such steps (pencil at one rank) settles on the first order.
        for (std::size_t i = 1; i + 1 < c.steps.size(); ++i)
            if (self[r][i] && plain_fft(c.steps[i - 1]) && plain_fft(c.steps[i + 1]))
                c.layouts[i].order = c.layouts[i + 1].order = c.layouts[i - 1].order;
    }
}

void merge_unexchanged_ffts(std::vector<Chain>& chains, const std::function<bool(int, bool)>& may_merge) {
    if (chains.empty()) return;
    for (std::size_t i = 1; i + 1 < chains[0].steps.size();) {
        const auto self = self_reshapes(chains);
        // Step 0 (the r2c) and the last FFT step in one stage: the inverse's first stage would be the c2r.
        const bool whole = i == 1 && chains[0].steps.size() == 3;
        bool merge = may_merge(chains[0].steps[i].phase, whole);
        for (std::size_t r = 0; merge && r < chains.size(); ++r) {
            const Chain& c = chains[r];
            const AxisOrder& order = c.layouts[i - 1].order;
            merge = self[r][i] && plain_fft(c.steps[i - 1]) && plain_fft(c.steps[i + 1]) &&
                    c.layouts[i].order == order && c.layouts[i + 2].order == order &&
                    // The halved axis of r2c (step 0) stays the fastest.
                    (i - 1 != 0 || order[2] == axis_z);
        }
        if (!merge) {
            ++i;
            continue;
        }
        for (Chain& c : chains) {
            const AxisOrder& order = c.layouts[i - 1].order;
            std::vector<int> axes = c.steps[i - 1].axes;
            axes.insert(axes.end(), c.steps[i + 1].axes.begin(), c.steps[i + 1].axes.end());
            auto slot = [&](int a) { return std::find(order.begin(), order.end(), a) - order.begin(); };
            std::sort(axes.begin(), axes.end(), [&](int a, int b) { return slot(a) < slot(b); });
            c.steps[i - 1].axes = axes;
            c.steps.erase(c.steps.begin() + static_cast<std::ptrdiff_t>(i), c.steps.begin() + static_cast<std::ptrdiff_t>(i) + 2);
            c.layouts.erase(c.layouts.begin() + static_cast<std::ptrdiff_t>(i), c.layouts.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        }
    }
}

}  // namespace fftune
