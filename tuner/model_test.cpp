// The cost model recovers known coefficients from synthetic records that follow
// it exactly, predicts unmeasured configurations, and its leave-one-out check
// then finds every winner.
#include "tuner/model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/decomposition.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

constexpr double c_fft = 2e-7;  // ms per (point per rank * log2 N)
const std::map<std::string, std::pair<double, double>> truth{// alpha ms, ms per byte
                                                             {"a2a_sync", {0.05, 1e-6}},
                                                             {"p2p_sync", {0.01, 2e-6}}};

json synthetic(std::array<index_t, 3> n, int ranks, const std::string& method) {
    const Problem p{"fft3d", n, Precision::double_, Direction::forward, ranks};
    const Config c{"fftw", "slab_2d1d", LayoutVariant::default_, {ranks, 1}, {method}, false};
    const double points = double(n[0]) * n[1] * n[2];
    const double t_fft = c_fft * points / ranks * std::log2(points);
    const auto nc = complex_size(n);
    const double bytes = double(nc[0]) * nc[1] * nc[2] / ranks * 16 * (ranks - 1) / ranks;
    const auto [alpha, per_byte] = truth.at(method);
    const double t_x = ranks > 1 ? alpha * (ranks - 1) + bytes * per_byte : 0;
    const double total = t_fft + t_x;
    auto stat = [](double t) { return json{{"median", t}, {"ci99", {t, t}}}; };
    json phases{{"fft.yz", stat(t_fft / 2)}, {"fft.x", stat(t_fft / 2)}, {"exchange.0", stat(t_x)}};
    return json{{"status", "ok"},
                {"problem", p},
                {"config", c},
                {"key", c.key()},
                {"validation", {{"passed", true}}},
                {"timing", {{"total", stat(total)}, {"phases", phases}}},
                {"machine", {{"fingerprint", "m"}}}};
}

std::vector<json> records() {
    std::vector<json> out;
    for (int ranks : {2, 3, 4})
        for (std::array<index_t, 3> n : {std::array<index_t, 3>{64, 64, 64}, {128, 64, 64}, {256, 128, 64}, {32, 32, 32}})
            for (const char* m : {"a2a_sync", "p2p_sync"}) out.push_back(synthetic(n, ranks, m));
    return out;
}

TEST(CostModel, RecoversTheCoefficientsOfExactData) {
    const CostModel m = CostModel::fit(records());
    for (const auto& [method, ab] : truth) {
        const LinkFit& f = m.links().at("fftw/" + method);
        EXPECT_NEAR(f.alpha_ms, ab.first, 1e-9) << method;
        EXPECT_NEAR(f.ms_per_byte, ab.second, 1e-12) << method;
    }
    // An unmeasured size and rank count is predicted exactly.
    const json want = synthetic({512, 256, 128}, 8, "p2p_sync");
    const auto t = m.predict(want.at("problem").get<Problem>(), want.at("config").get<Config>());
    ASSERT_TRUE(t);
    EXPECT_NEAR(*t, want["timing"]["total"]["median"].get<double>(), 1e-9);
    // Nothing measured for this backend: no prediction.
    Config other = want.at("config").get<Config>();
    other.backend = "cuda";
    EXPECT_FALSE(m.predict(want.at("problem").get<Problem>(), other));
}

TEST(CostModel, PicksTheMeasuredWinnerOnExactData) {
    // Small messages favour p2p_sync's latency, large ones a2a_sync's bandwidth: both occur.
    const std::string summary = model_accuracy(records());
    EXPECT_NE(summary.find("12 problems; predicted winner = measured winner in 12 (100%)"), std::string::npos) << summary;
    const CostModel m = CostModel::fit(records());
    const auto best = m.best({"fft3d", {64, 64, 64}, Precision::double_, Direction::forward, 4}, "fftw");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->first.redistribution.front(), best->first.redistribution.back());
}

}  // namespace
}  // namespace fftune
