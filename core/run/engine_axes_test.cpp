// The engine's testcase axes: defaults, the configurations they give in sweep
// order, per-phase methods, refusals that name the JSON path, and the grid a
// configuration takes at another rank count.
#include "core/run/engine_axes.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include <stdexcept>
#include <string>

#include "core/base/registry.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/redistribution.hpp"
#include "core/engine/transport.hpp"
#include "core/testing/forwarding_transport.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

const TestcaseParser ps("tc.json");

TEST(EngineAxes, ConfigurationsInSweepOrderEachOnce) {
    const json j{{"decomposition", {"slab_2d1d", "pencil"}},
                 {"layout", {"default", "realigned"}},
                 {"redistribution", {"a2a_sync", "p2p_sync"}},
                 {"process_grid", "all"},
                 {"overlap", {1, 3}}};
    const EngineAxes a = parse_engine_axes(ps, j, {4});
    EXPECT_EQ(a.backends, std::vector<std::string>{"fftw"});
    EXPECT_EQ(a.gpu_aware, std::vector<bool>{false});
    const auto slab = engine_shapes(a, "slab_2d1d", 4);
    ASSERT_EQ(slab.size(), 4u);  // 2 layouts x 1 grid x 2 methods: layout outermost
    EXPECT_EQ(slab[0].layout, LayoutVariant::default_);
    EXPECT_EQ(slab[1].methods, std::vector<std::string>{"p2p_sync"});
    EXPECT_EQ(slab[0].grid, (std::array<int, 2>{4, 1}));
    const auto pencil = engine_shapes(a, "pencil", 4);
    EXPECT_EQ(pencil.size(), 2u * 3 * 2);  // grids 1x4, 2x2, 4x1
    EXPECT_EQ(pencil[0].methods, (std::vector<std::string>{"a2a_sync", "a2a_sync"}));
    const auto configs = engine_configs(a, "slab_2d1d", slab[0]);
    ASSERT_EQ(configs.size(), 2u);  // overlap 1, 3
    EXPECT_EQ(configs[1].overlap, 3);
    EXPECT_EQ(engine_configs(a, 4).size(), (4u + 12u) * 2);
}

TEST(EngineAxes, ExchangePartsOnlyWithOverlap) {
    const json j{{"decomposition", "slab_2d1d"}, {"redistribution", "a2a_sync"}, {"overlap", {1, 3}},
                 {"exchange_parts", {1, 2}}};
    const EngineAxes a = parse_engine_axes(ps, j, {2});
    const auto configs = engine_configs(a, "slab_2d1d", engine_shapes(a, "slab_2d1d", 2)[0]);
    ASSERT_EQ(configs.size(), 3u);  // overlap 1; overlap 3 in 1 and in 2 parts
    EXPECT_EQ(configs[0].exchange_parts, 1);
    EXPECT_EQ(configs[1].exchange_parts, 1);
    EXPECT_EQ(configs[2].exchange_parts, 2);
    EXPECT_EQ(configs[2].overlap, 3);
}

TEST(EngineAxes, PerPhaseMethodsTakeTheirProduct) {
    const json j{{"decomposition", "pencil"}, {"redistribution_phases", {{"a2a_sync"}, {"a2a_sync", "p2p_sync"}}}};
    const auto shapes = engine_shapes(parse_engine_axes(ps, j, {4}), "pencil", 4);
    ASSERT_EQ(shapes.size(), 2u * 2);  // 2 layouts x auto grid x 2 method pairs
    EXPECT_EQ(shapes[1].methods, (std::vector<std::string>{"a2a_sync", "p2p_sync"}));
}

TEST(EngineAxes, RefusalsNameThePath) {
    auto message = [](const json& j) {
        try {
            parse_engine_axes(ps, j, {2});
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message({{"overlap", 65}}).find("/overlap: 65 chunks is out of range (allowed: 1 to 64)"), std::string::npos);
    EXPECT_NE(message({{"exchange_parts", {2, 0}}}).find("/exchange_parts/1"), std::string::npos);
    EXPECT_NE(message({{"process_grid", {{2, 2}}}}).find("/process_grid/0: 2x2 needs 4 ranks"), std::string::npos);
    EXPECT_NE(message({{"gpu_aware", {1}}}).find("/gpu_aware/0: 1 is not a boolean"), std::string::npos);
    EXPECT_NE(message({{"redistribution", "a2a_sync"}, {"redistribution_phases", {{"a2a_sync"}, {"a2a_sync"}}}})
                  .find("/redistribution_phases: given together with /redistribution"),
              std::string::npos);
}

TEST(EngineAxes, RegriddedSaysWhatChanged) {
    const Config pencil{"fftw", "pencil", LayoutVariant::default_, {2, 2}, {"a2a_sync", "a2a_sync"}, false};
    const auto adapted = adapt_to_ranks(pencil, 8);
    ASSERT_FALSE(adapted.empty());
    EXPECT_EQ(regridded(pencil, adapted[0], 8),
              fmt::format("with the process grid 2x2 re-derived as {}x{} for 8 ranks", adapted[0].process_grid[0],
                          adapted[0].process_grid[1]));
    EXPECT_EQ(regridded(pencil, pencil, 4), "");
}

// A transport that needs device memory: "all" leaves it out on fftw, a testcase naming it keeps it.
class DeviceOnly final : public testing::ForwardingTransport {
public:
    std::optional<std::string> not_applicable(const Backend& b, bool) const override {
        if (!b.device_memory()) return std::string("needs device memory");
        return std::nullopt;
    }
};
const bool registered_device_only = register_variant<Transport, DeviceOnly>("test_device_only");

// A transport this process cannot run as its ranks are placed (NCCL with two
// ranks on one GPU): "all" keeps it, and the point is skipped when it runs.
class NotHere final : public testing::ForwardingTransport {
public:
    std::optional<std::string> not_runnable_here(const Backend&) const override {
        return std::string("2 ranks share 1 GPU on this node");
    }
};
const bool registered_not_here = register_variant<Transport, NotHere>("test_not_here");

bool has(const std::vector<Config>& cs, const std::function<bool(const Config&)>& f) {
    return std::any_of(cs.begin(), cs.end(), f);
}

TEST(EngineAxes, AllBringsOnlyWhatAppliesAtTheRankCount) {
    const json j{{"gpu_aware", "all"}, {"fft_stores_kept", "all"}};  // decomposition, layout, redistribution: all
    const EngineAxes a = parse_engine_axes(ps, j, {1, 2});
    auto ref = [](const Config& c) { return c.decomposition == "reference_3d"; };
    auto device_only = [](const Config& c) {
        return std::find(c.redistribution.begin(), c.redistribution.end(), "test_device_only") != c.redistribution.end();
    };
    const auto one = engine_configs(a, 1), two = engine_configs(a, 2);
    // One rank: the reference in its one layout, nothing that needs a reshape between ranks.
    EXPECT_TRUE(has(one, ref));
    EXPECT_FALSE(has(one, [&](const Config& c) { return ref(c) && c.layout != LayoutVariant::default_; }));
    EXPECT_FALSE(has(one, [](const Config& c) { return c.fft_stores_kept; }));
    // Two ranks: no one-process reference; a host backend has no gpu_aware and no device-only transport.
    EXPECT_FALSE(has(two, ref));
    EXPECT_FALSE(has(two, [](const Config& c) { return c.gpu_aware; }));
    EXPECT_FALSE(has(two, device_only));
    EXPECT_TRUE(has(two, [](const Config& c) { return c.decomposition == "pencil" && c.layout == LayoutVariant::realigned; }));
    EXPECT_TRUE(has(two, [](const Config& c) { return c.fft_stores_kept; }) ==
                !Registry<Backend>::instance().create("fftw")->store_aside_unavailable().has_value());
    for (const auto& c : two) EXPECT_FALSE(left_out_by_all(a, c, 2)) << json(c).dump();
}

// The launcher enumerates a testcase without the job's placement (its
// environment names no local ranks) and merges the job's records by point
// index: a transport refused only by placement must not change the points.
TEST(EngineAxes, PlacementLeavesNoPointOutButSkipsItWhenItRuns) {
    const EngineAxes a = parse_engine_axes(ps, json::object(), {2});  // redistribution: all
    const auto two = engine_configs(a, 2);
    const auto it = std::find_if(two.begin(), two.end(), [](const Config& c) {
        return c.decomposition == "slab_2d1d" && c.redistribution == std::vector<std::string>{"test_not_here"};
    });
    ASSERT_NE(it, two.end()) << "left out by all";
    const Problem p{"fft3d", {16, 16, 16}, Precision::double_, Direction::forward, 2};
    EXPECT_EQ(check_applicable(p, *it).value_or(""), "2 ranks share 1 GPU on this node");
    EXPECT_FALSE(check_applicable(p, *it, /*placement=*/false));
    EXPECT_EQ(Redistribution::not_applicable("test_not_here", *Registry<Backend>::instance().create("fftw")).value_or(""),
              "2 ranks share 1 GPU on this node");
}

TEST(EngineAxes, NamedValuesStayAndSkipWithTheirReason) {
    // Named, they make points (skipped when run, with the reason): the user asked for them.
    const json j{{"decomposition", {"reference_3d", "slab_2d1d"}},
                 {"layout", "realigned"},
                 {"redistribution", "test_device_only"},
                 {"gpu_aware", true},
                 {"overlap", {1, 3}}};
    const EngineAxes a = parse_engine_axes(ps, j, {1, 2});
    const auto two = engine_configs(a, 2);
    EXPECT_TRUE(has(two, [](const Config& c) { return c.decomposition == "reference_3d"; }));
    EXPECT_EQ(two.size(), 2u * 2);  // 2 decompositions x 2 overlaps: nothing left out
    // A value that fails for a named one's sake stays too: overlap 3 at one rank with every decomposition.
    const EngineAxes b = parse_engine_axes(ps, json{{"overlap", {1, 3}}, {"redistribution", "a2a_sync"}}, {1});
    EXPECT_TRUE(has(engine_configs(b, 1), [](const Config& c) { return c.decomposition == "slab_2d1d" && c.overlap == 3; }));
}

}  // namespace
}  // namespace fftune
