// Every registered decomposition, for many sizes and rank counts: each layout of
// the chain tiles the global grid exactly once, FFT stages see whole axes, and
// reshapes keep the memory order and stay inside their phase communicator.
#include "core/engine/decomposition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/engine/plan.hpp"
#include "core/base/registry.hpp"
#include "core/run/testcase.hpp"

namespace fftune {
namespace {

struct Case {
    std::string decomposition;
    LayoutVariant layout;
};

class Decompositions : public ::testing::TestWithParam<Case> {};

void check_chains(const Problem& problem, const Config& config) {
    const auto decomposition = Registry<Decomposition>::instance().create(config.decomposition);
    const int p = problem.ranks;
    std::vector<Chain> chains;
    for (int r = 0; r < p; ++r) chains.push_back(decomposition->chain(problem, config, r));
    const Chain& c0 = chains[0];
    ASSERT_EQ(c0.layouts.size(), c0.steps.size() + 1);
    EXPECT_EQ(c0.layouts.front().order, order_xyz);
    EXPECT_EQ(c0.layouts.back().order, order_xyz);
    int reshapes = 0;
    for (const auto& s : c0.steps) reshapes += s.kind == ChainStep::Kind::reshape;
    EXPECT_EQ(reshapes, decomposition->redistribution_phases());

    for (std::size_t k = 0; k < c0.layouts.size(); ++k) {
        const auto n = k == 0 ? problem.size : complex_size(problem.size);
        // Tiles exactly once: counts add up and no two boxes overlap.
        index_t total = 0;
        for (int r = 0; r < p; ++r) {
            const Box3& b = chains[r].layouts[k].box;
            total += b.count();
            for (int a = 0; a < 3; ++a) {
                EXPECT_GE(b.lo[a], 0);
                EXPECT_LE(b.hi[a], n[a]);
            }
            for (int q = 0; q < r; ++q)
                EXPECT_TRUE(intersect(b, chains[q].layouts[k].box).empty())
                    << "ranks " << q << " and " << r << " overlap in layout " << k;
        }
        EXPECT_EQ(total, n[0] * n[1] * n[2]) << "layout " << k;
    }
    for (std::size_t s = 0; s < c0.steps.size(); ++s) {
        for (int r = 0; r < p; ++r) {
            const ChainStep& step = chains[r].steps[s];
            const Layout &in = chains[r].layouts[s], &out = chains[r].layouts[s + 1];
            if (step.kind == ChainStep::Kind::fft) {
                // A rank transforms whole lines: every transformed axis is complete.
                const auto n = s == 0 ? problem.size : complex_size(problem.size);
                if (in.box.empty()) continue;
                const auto nc = complex_size(problem.size);
                for (int a = 0; a < 3; ++a) {
                    if (std::find(step.axes.begin(), step.axes.end(), a) != step.axes.end()) {
                        EXPECT_EQ(in.box.extent(a), n[a]) << "axis " << a << " step " << s;
                        EXPECT_EQ(out.box.extent(a), nc[a]) << "axis " << a << " step " << s;
                    } else {  // an FFT stage never moves data across ranks
                        EXPECT_EQ(in.box.lo[a], out.box.lo[a]) << "batch axis " << a << " step " << s;
                        EXPECT_EQ(in.box.hi[a], out.box.hi[a]) << "batch axis " << a << " step " << s;
                    }
                }
            } else {
                EXPECT_EQ(in.order, out.order);
                // Data stays within the phase communicator: the group's boxes cover the same cells.
                index_t before = 0, after = 0;
                for (int q = 0; q < p; ++q) {
                    if (chains[q].steps[s].color == step.color) {
                        before += chains[q].layouts[s].box.count();
                        after += chains[q].layouts[s + 1].box.count();
                    } else {
                        EXPECT_TRUE(intersect(chains[q].layouts[s + 1].box, in.box).empty())
                            << "rank " << r << " would send to rank " << q << " outside its phase communicator";
                    }
                }
                EXPECT_EQ(before, after) << "step " << s << " color " << step.color;
            }
        }
    }
}

TEST_P(Decompositions, ChainsTileTheGridForEveryRankCount) {
    const auto decomposition = Registry<Decomposition>::instance().create(GetParam().decomposition);
    const std::vector<std::array<index_t, 3>> sizes{{9, 10, 11}, {12, 7, 5}, {4, 3, 2}, {8, 8, 8}, {6, 2, 3}};
    int applicable = 0;
    for (const auto& n : sizes)
        for (int p = 1; p <= 6; ++p) {
            const auto grids = decomposition->uses_process_grid() ? all_grids(p)
                                                                  : std::vector<std::array<int, 2>>{{p, 1}};
            for (const auto& g : grids) {
                const Problem problem{"fft3d", n, Precision::double_, Direction::forward, p};
                const Config config{"fftw", GetParam().decomposition, GetParam().layout, g, {"p2p_sync", "p2p_sync"}, false};
                if (decomposition->not_applicable(problem, config)) continue;
                ++applicable;
                SCOPED_TRACE(size_string(n) + " grid " + std::to_string(g[0]) + "x" + std::to_string(g[1]));
                check_chains(problem, config);
            }
        }
    EXPECT_GT(applicable, 20);
}

TEST_P(Decompositions, SkipsWithAReasonWhenRanksExceedTheSplitAxis) {
    const auto decomposition = Registry<Decomposition>::instance().create(GetParam().decomposition);
    const Problem problem{"fft3d", {2, 2, 8}, Precision::double_, Direction::forward, 4};
    const Config config{"fftw", GetParam().decomposition, GetParam().layout,
                        decomposition->uses_process_grid() ? std::array<int, 2>{4, 1} : std::array<int, 2>{4, 1},
                        {"p2p_sync", "p2p_sync"}, false};
    const auto why = decomposition->not_applicable(problem, config);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("Nx=2"), std::string::npos) << *why;
    // A grid that does not match the job is named in the reason.
    Config wrong = config;
    wrong.process_grid = {3, 1};
    EXPECT_TRUE(decomposition->not_applicable(problem, wrong).has_value());
}

TEST(Decompositions, RealignedLayoutsMakeTheNextFftAxisContiguous) {
    const Problem problem{"fft3d", {8, 6, 10}, Precision::double_, Direction::forward, 4};
    for (const char* name : {"slab_2d1d", "slab_1d2d", "pencil"}) {
        const auto d = Registry<Decomposition>::instance().create(name);
        const Config config{"fftw", name, LayoutVariant::realigned, {2, 2}, {"p2p_sync", "p2p_sync"}, false};
        Config c = config;
        if (!d->uses_process_grid()) c.process_grid = {4, 1};
        const Chain chain = d->chain(problem, c, 1);
        for (std::size_t s = 1; s < chain.steps.size(); ++s)
            if (chain.steps[s].kind == ChainStep::Kind::fft && chain.steps[s].axes.size() == 1)
                EXPECT_EQ(chain.layouts[s].order[2], chain.steps[s].axes[0]) << name << " step " << s;
    }
}

std::vector<Chain> all_chains(const Problem& problem, const Config& config) {
    const auto d = Registry<Decomposition>::instance().create(config.decomposition);
    std::vector<Chain> chains;
    for (int r = 0; r < problem.ranks; ++r) chains.push_back(d->chain(problem, config, r));
    return chains;
}

std::vector<AxisOrder> orders(const Chain& c) {
    std::vector<AxisOrder> out;
    for (const Layout& l : c.layouts) out.push_back(l.order);
    return out;
}

// Realigned orders serve exchanges: where a phase copies a rank's block onto
// itself, the layouts around it take the order before the FFT stage that
// writes them, and boxes never change.
TEST(Decompositions, LayoutsThatServeNoExchangeTakeTheOrderBeforeThem) {
    for (const char* name : {"slab_2d1d", "slab_1d2d", "pencil"}) {
        const Problem one{"fft3d", {8, 6, 10}, Precision::double_, Direction::forward, 1};
        const Config c{"fftw", name, LayoutVariant::realigned, {1, 1}, {"p2p_sync", "p2p_sync"}, false};
        std::vector<Chain> chains = all_chains(one, c);
        const Chain before = chains[0];
        const auto self = self_reshapes(chains);
        settle_unexchanged_orders(chains);
        for (std::size_t i = 0; i < before.steps.size(); ++i)
            EXPECT_EQ(self[0][i], before.steps[i].kind == ChainStep::Kind::reshape) << name << " step " << i;
        for (std::size_t k = 0; k < before.layouts.size(); ++k) {
            EXPECT_EQ(chains[0].layouts[k].order, order_xyz) << name << " layout " << k;
            EXPECT_EQ(chains[0].layouts[k].box, before.layouts[k].box) << name << " layout " << k;
        }
        EXPECT_NE(orders(before), orders(chains[0])) << name << ": realigned at one rank reordered before";
    }
    // Every phase exchanges between 4 ranks: nothing changes.
    const Problem four{"fft3d", {8, 6, 10}, Precision::double_, Direction::forward, 4};
    for (const char* name : {"slab_2d1d", "slab_1d2d", "pencil"}) {
        const bool grid = Registry<Decomposition>::instance().create(name)->uses_process_grid();
        const Config c{"fftw", name, LayoutVariant::realigned, grid ? std::array<int, 2>{2, 2} : std::array<int, 2>{4, 1},
                       {"p2p_sync", "p2p_sync"}, false};
        std::vector<Chain> chains = all_chains(four, c);
        const auto unsettled = chains;
        for (const auto& steps : self_reshapes(chains))
            EXPECT_EQ(std::count(steps.begin(), steps.end(), true), 0) << name;
        settle_unexchanged_orders(chains);
        for (int r = 0; r < 4; ++r) EXPECT_EQ(orders(chains[r]), orders(unsettled[r])) << name << " rank " << r;
    }
    // Pencil 4 x 1: phase 0 runs among one rank (before y's FFT), so the z FFT
    // writes xyz and the y FFT does the reordering to yzx, which phase 1 exchanges.
    // Pencil 1 x 4: phase 1 runs among one rank, so the y FFT keeps zxy.
    const Config p41{"fftw", "pencil", LayoutVariant::realigned, {4, 1}, {"p2p_sync", "p2p_sync"}, false};
    const Config p14{"fftw", "pencil", LayoutVariant::realigned, {1, 4}, {"p2p_sync", "p2p_sync"}, false};
    const std::vector<AxisOrder> want41{order_xyz, order_xyz, order_xyz, order_yzx, order_yzx, order_xyz};
    const std::vector<AxisOrder> want14{order_xyz, order_zxy, order_zxy, order_zxy, order_zxy, order_xyz};
    for (const auto& [config, want] : {std::pair{p41, want41}, std::pair{p14, want14}}) {
        std::vector<Chain> chains = all_chains(four, config);
        settle_unexchanged_orders(chains);
        for (int r = 0; r < 4; ++r) EXPECT_EQ(orders(chains[r]), want) << config.key() << " rank " << r;
    }
}

std::vector<std::vector<int>> fft_axes(const Chain& c) {
    std::vector<std::vector<int>> out;
    for (const ChainStep& s : c.steps)
        out.push_back(s.kind == ChainStep::Kind::fft ? s.axes : std::vector<int>{-1 - s.phase});  // -1, -2: reshapes
    return out;
}

// FFT stages that only a one-rank phase separates become one stage over both
// stages' axes, slowest first, where neither reorders; every rank alike.
TEST(Decompositions, FftStagesThatNoExchangeSeparatesMerge) {
    const auto any = [](int, bool) { return true; };
    const std::vector<int> xyz{axis_x, axis_y, axis_z};
    for (const char* name : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>()) {
            const Problem one{"fft3d", {8, 6, 10}, Precision::double_, Direction::forward, 1};
            const Config c{"fftw", name, layout, {1, 1}, {"p2p_sync", "p2p_sync"}, false};
            std::vector<Chain> chains = all_chains(one, c);
            const Chain unmerged = chains[0];
            settle_unexchanged_orders(chains);
            std::vector<Chain> kept = chains;
            merge_unexchanged_ffts(kept, [](int, bool) { return false; });  // a transport that runs alone
            EXPECT_EQ(fft_axes(kept[0]), fft_axes(unmerged)) << name;
            merge_unexchanged_ffts(chains, any);
            ASSERT_EQ(chains[0].steps.size(), 1u) << name << " " << to_string(layout);
            EXPECT_EQ(chains[0].steps[0].axes, xyz) << name;
            ASSERT_EQ(chains[0].layouts.size(), 2u);
            EXPECT_EQ(chains[0].layouts.front(), unmerged.layouts.front());
            EXPECT_EQ(chains[0].layouts.back(), unmerged.layouts.back());
        }
    // A preserved inverse refuses only the merge that puts step 0 and the last
    // FFT step in one stage: the last step stays apart, the rest merge.
    const auto not_whole = [](int, bool c2r_first) { return !c2r_first; };
    for (const char* name : {"slab_2d1d", "slab_1d2d", "pencil"}) {
        const Problem one{"fft3d", {8, 6, 10}, Precision::double_, Direction::inverse, 1};
        std::vector<Chain> chains = all_chains(one, {"fftw", name, LayoutVariant::default_, {1, 1},
                                                     {"p2p_sync", "p2p_sync"}, false});
        const Chain unmerged = chains[0];
        settle_unexchanged_orders(chains);
        merge_unexchanged_ffts(chains, not_whole);
        const auto axes = fft_axes(chains[0]);
        ASSERT_EQ(axes.size(), 3u) << name;
        EXPECT_EQ(axes.back(), unmerged.steps.back().axes) << name << ": the last FFT step apart";
        std::vector<int> rest = axes.front();
        std::sort(rest.begin(), rest.end());
        std::vector<int> want;
        for (std::size_t k = 0; k + 1 < unmerged.steps.size(); ++k)
            if (unmerged.steps[k].kind == ChainStep::Kind::fft)
                want.insert(want.end(), unmerged.steps[k].axes.begin(), unmerged.steps[k].axes.end());
        std::sort(want.begin(), want.end());
        EXPECT_EQ(rest, want) << name << ": every other FFT step in step 0's stage";
    }
    const Problem four{"fft3d", {8, 6, 10}, Precision::double_, Direction::forward, 4};
    auto merged = [&](const char* name, LayoutVariant layout, std::array<int, 2> grid) {
        std::vector<Chain> chains = all_chains(four, {"fftw", name, layout, grid, {"p2p_sync", "p2p_sync"}, false});
        settle_unexchanged_orders(chains);
        merge_unexchanged_ffts(chains, any);
        for (int r = 1; r < 4; ++r) EXPECT_EQ(fft_axes(chains[r]), fft_axes(chains[0]));
        return fft_axes(chains[0]);
    };
    using Axes = std::vector<std::vector<int>>;
    for (auto layout : all_values<LayoutVariant>()) {
        // Every phase exchanges: nothing merges.
        EXPECT_EQ(merged("slab_2d1d", layout, {4, 1}), (Axes{{axis_y, axis_z}, {-1}, {axis_x}}));
        EXPECT_EQ(merged("pencil", layout, {2, 2}), (Axes{{axis_z}, {-1}, {axis_y}, {-2}, {axis_x}}));
    }
    // 4 x 1: phase 0 among one rank, z and y merge into a slab's y,z stage
    // where the y FFT does not reorder.
    EXPECT_EQ(merged("pencil", LayoutVariant::default_, {4, 1}), (Axes{{axis_y, axis_z}, {-2}, {axis_x}}));
    EXPECT_EQ(merged("pencil", LayoutVariant::realigned, {4, 1}),
              (Axes{{axis_z}, {-1}, {axis_y}, {-2}, {axis_x}}));
    // 1 x 4: phase 1 among one rank; y and x merge where the x FFT does not reorder.
    EXPECT_EQ(merged("pencil", LayoutVariant::default_, {1, 4}), (Axes{{axis_z}, {-1}, {axis_x, axis_y}}));
    EXPECT_EQ(merged("pencil", LayoutVariant::realigned, {1, 4}),
              (Axes{{axis_z}, {-1}, {axis_y}, {-2}, {axis_x}}));
}

TEST(Reference3d, OneStageOnOneProcess) {
    const auto d = Registry<Decomposition>::instance().create("reference_3d");
    Problem problem{"fft3d", {9, 10, 11}, Precision::double_, Direction::forward, 1};
    const Config config{"fftw", "reference_3d", LayoutVariant::default_, {1, 1}, {}, false};
    ASSERT_FALSE(d->not_applicable(problem, config));
    check_chains(problem, config);
    const Chain c = d->chain(problem, config, 0);
    ASSERT_EQ(c.steps.size(), 1u);
    EXPECT_EQ(c.steps[0].axes, (std::vector<int>{axis_x, axis_y, axis_z}));
    Config realigned = config;
    realigned.layout = LayoutVariant::realigned;
    EXPECT_TRUE(d->not_applicable(problem, realigned));
    problem.ranks = 2;
    EXPECT_TRUE(d->not_applicable(problem, config));
}

// Built with the CUDA toolkit only. Its chain is reference_3d's with one step
// over every device; without a multi-device backend it is skipped with the reason.
TEST(ReferenceCufftxt, OneStepOverEveryDeviceOnOneProcess) {
    if (!Registry<Decomposition>::instance().contains("reference_cufftxt")) GTEST_SKIP() << "built without CUDA";
    const auto d = Registry<Decomposition>::instance().create("reference_cufftxt");
    EXPECT_EQ(d->redistribution_phases(), 0);
    Problem problem{"fft3d", {64, 48, 40}, Precision::double_, Direction::forward, 1};
    const Config config{"cuda", "reference_cufftxt", LayoutVariant::default_, {1, 1}, {}, false};
    ASSERT_FALSE(d->not_applicable(problem, config));
    check_chains(problem, config);
    const Chain c = d->chain(problem, config, 0);
    const Chain ref = Registry<Decomposition>::instance().create("reference_3d")->chain(problem, config, 0);
    EXPECT_EQ(c.layouts, ref.layouts);  // what validation reads is reference_3d's layout
    ASSERT_EQ(c.steps.size(), 1u);
    EXPECT_TRUE(c.steps[0].all_devices);
    EXPECT_FALSE(ref.steps[0].all_devices);
    EXPECT_EQ(c.steps[0].axes, (std::vector<int>{axis_x, axis_y, axis_z}));
    Config realigned = config;
    realigned.layout = LayoutVariant::realigned;
    EXPECT_TRUE(d->not_applicable(problem, realigned));
    problem.ranks = 2;
    const auto why = d->not_applicable(problem, config);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("one process"), std::string::npos) << *why;
    // The CPU backend has no transform over several devices: skipped, never run.
    problem.ranks = 1;
    Config fftw = config;
    fftw.backend = "fftw";
    const auto no_devices = check_applicable(problem, fftw);
    ASSERT_TRUE(no_devices);
    EXPECT_NE(no_devices->find("several devices"), std::string::npos) << *no_devices;
}

INSTANTIATE_TEST_SUITE_P(All, Decompositions,
                         ::testing::Values(Case{"slab_2d1d", LayoutVariant::default_}, Case{"slab_2d1d", LayoutVariant::realigned},
                                           Case{"slab_1d2d", LayoutVariant::default_}, Case{"slab_1d2d", LayoutVariant::realigned},
                                           Case{"pencil", LayoutVariant::default_}, Case{"pencil", LayoutVariant::realigned}),
                         [](const auto& info) { return info.param.decomposition + "_" + to_string(info.param.layout); });

}  // namespace
}  // namespace fftune
