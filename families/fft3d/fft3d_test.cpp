// The fft3d family through the Family interface: keys, labels, applicability,
// the per-phase split the phase strategy tunes, re-derived grids.
#include "families/fft3d/fft3d.hpp"

#include <gtest/gtest.h>

namespace fftune {
namespace {

using json = nlohmann::json;

const Family& fft3d() { return family_named("fft3d"); }

TEST(Fft3dFamily, PointsCarryTheRecordsFields) {
    const Point pt = Fft3dPoint{{"fft3d", {24, 12, 10}, Precision::single, Direction::inverse, 2},
                                {"fftw", "pencil", LayoutVariant::default_, {2, 1}, {"a2a_sync", "p2p_sync"}, false}};
    EXPECT_EQ(pt.family(), "fft3d");
    EXPECT_EQ(pt.backend(), "fftw");
    EXPECT_EQ(pt.ranks(), 2);
    EXPECT_EQ(pt.key, "fftw/pencil/default/2x1/a2a_sync+p2p_sync/host");
    EXPECT_EQ(fft3d().config_key(pt.config), pt.key);
    EXPECT_EQ(pt.label, "24x12x10 fftw/pencil/default/2x1/a2a_sync+p2p_sync/host single inverse");
    EXPECT_EQ(fft3d_problem(pt).size, (std::array<index_t, 3>{24, 12, 10}));
    EXPECT_EQ(fft3d_config(pt).redistribution.size(), 2u);
    EXPECT_EQ(fft3d().problem_label(pt.problem), "      24x12x10 single inverse");
    EXPECT_EQ(problem_key(pt.problem), R"({"direction":"inverse","kind":"fft3d","precision":"single","size":[24,12,10]})");
}

TEST(Fft3dFamily, PhaseSplitOnlyForSeveralPhases) {
    Point pencil = Fft3dPoint{{"fft3d", {16, 8, 8}, Precision::double_, Direction::forward, 2},
                              {"fftw", "pencil", LayoutVariant::default_, {2, 1}, {"a2a_sync", "p2p_sync"}, false}};
    const auto split = fft3d().phase_split(pencil);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->methods, (std::vector<std::string>{"a2a_sync", "p2p_sync"}));
    Point other = Fft3dPoint{{"fft3d", {16, 8, 8}, Precision::double_, Direction::forward, 2},
                             {"fftw", "pencil", LayoutVariant::default_, {2, 1}, {"p2p_sync", "p2p_sync"}, false}};
    EXPECT_EQ(fft3d().phase_split(other)->rest, split->rest);  // same point but for its methods
    const Point slab = Fft3dPoint{{"fft3d", {16, 8, 8}, Precision::double_, Direction::forward, 2},
                                  {"fftw", "slab_2d1d", LayoutVariant::default_, {2, 1}, {"a2a_sync"}, false}};
    EXPECT_FALSE(fft3d().phase_split(slab));
    EXPECT_EQ(fft3d().per_phase_key(), "redistribution_phases");
}

TEST(Fft3dFamily, NotApplicableSaysWhy) {
    const json p = Problem{"fft3d", {4, 8, 8}, Precision::double_, Direction::forward, 8};
    const json slab = Config{"fftw", "slab_2d1d", LayoutVariant::default_, {8, 1}, {"a2a_sync"}, false};
    const auto why = fft3d().not_applicable(p, slab);
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "slab_2d1d splits x over P=8 ranks but Nx=4 < P");
    EXPECT_FALSE(fft3d().not_applicable(p, fft3d().default_config(p)));
}

TEST(Fft3dFamily, AdaptedGridsSayWhatChanged) {
    const json pencil = Config{"fftw", "pencil", LayoutVariant::default_, {2, 2}, {"a2a_sync", "a2a_sync"}, false};
    const auto a = fft3d().adapt_to_ranks(pencil, 8);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a[0].config.at("process_grid"), json::array({4, 2}));
    EXPECT_EQ(a[0].change, "with the process grid 2x2 re-derived as 4x2 for 8 ranks");
    EXPECT_EQ(fft3d().adapt_to_ranks(pencil, 4)[0].change, "");
}

TEST(Fft3dFamily, TheWorkIsThePoints) {
    EXPECT_DOUBLE_EQ(fft3d().work(json(Problem{"fft3d", {16, 8, 4}, Precision::double_, Direction::forward, 2})), 512);
    EXPECT_EQ(fft3d().size_label(json(Problem{"fft3d", {16, 8, 4}, Precision::double_, Direction::forward, 2})), "16x8x4");
}

}  // namespace
}  // namespace fftune
