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

// Probe records that follow the model exactly: exchanges with (alpha, ms per byte)
// at `world`, FFT rates rate(n) (contiguous r, strided 3r: the model takes the mean 2r).
std::vector<json> probes(int world, double alpha, double per_byte, double (*rate)(long long)) {
    std::vector<json> out;
    auto stat = [](double t) { return json{{"total", {{"median", t}, {"ci99", {t, t}}}}}; };
    for (int q = 2; q <= world; ++q) {
        if (world % q) continue;
        for (long long m : {8ll, 512ll, 32768ll, 2ll << 20})
            out.push_back({{"kind", "probe"}, {"probe", "exchange"}, {"status", "ok"}, {"backend", "fftw"},
                           {"transport", "a2a_sync"}, {"world", world}, {"peers", q}, {"bytes_per_peer", m},
                           {"validation", {{"passed", true}}}, {"timing", stat((alpha + m * per_byte) * (q - 1))}});
    }
    for (long long n : {4ll, 16ll, 64ll})
        for (double k : {1.0, 3.0})
            out.push_back({{"kind", "probe"}, {"probe", "fft"}, {"status", "ok"}, {"backend", "fftw"},
                           {"precision", "double"}, {"world", world}, {"n", n}, {"ms_per_point_log2n", k * rate(n)},
                           {"timing", stat(1.0)}});
    return out;
}

double rate(long long n) { return 1e-7 * std::log2(double(n)); }

TEST(CostModel, ProbeCalibrationsComeFirstAndPredictUnmeasuredProblems) {
    auto calib = probes(4, 0.02, 3e-7, rate);
    const auto far = probes(1, 5.0, 1e-3, rate);  // a world of 1 has no exchanges: FFT rates only
    calib.insert(calib.end(), far.begin(), far.end());
    const CostModel m = CostModel::fit(records(), calib);
    const LinkFit& f = m.probe_links().at("fftw/a2a_sync").at(4);
    EXPECT_NEAR(f.alpha_ms, 0.02, 1e-9);
    EXPECT_NEAR(f.ms_per_byte, 3e-7, 1e-15);
    EXPECT_EQ(f.samples, 8);  // q = 2, 4 x 4 sizes

    // 16 x 64 x 4 at 4 ranks, slabs with a2a_sync: every coefficient from the probe at 4 ranks.
    const Problem p{"fft3d", {16, 64, 4}, Precision::double_, Direction::forward, 4};
    const Config c{"fftw", "slab_2d1d", LayoutVariant::default_, {4, 1}, {"a2a_sync"}, false};
    const double complex_per_rank = 16.0 * 64 * 3 / 4;  // Nz/2 + 1 = 3
    double want = 0;
    for (double n : {16.0, 64.0, 4.0}) want += 2 * rate(static_cast<long long>(n)) * complex_per_rank * std::log2(n);
    const double bytes = complex_per_rank * 16 * 3 / 4;  // (q - 1) / q of the rank's complex share
    want += 0.02 * 3 + bytes * 3e-7;
    ASSERT_TRUE(m.predict(p, c));
    EXPECT_NEAR(*m.predict(p, c), want, 1e-12);
    EXPECT_EQ(m.sources(p, c), "fft fftw/double: probe at 4 ranks; a2a_sync: probe at 4 ranks");
    // Lengths between probed ones are interpolated in log2 n: 32 lies halfway between 16 and 64.
    Problem p32 = p;
    p32.size = {32, 1, 1};
    EXPECT_NEAR(*m.predict(p32, {"fftw", "reference_3d", LayoutVariant::default_, {1, 1}, {}, false}) * 4,
                2 * (rate(16) + rate(64)) / 2 * 32 * 5, 1e-12);
    // A transport without a probe falls back to its sweep fit.
    Config p2p = c;
    p2p.redistribution = {"p2p_sync"};
    EXPECT_EQ(m.sources(p, p2p), "fft fftw/double: probe at 4 ranks; p2p_sync: sweep fit");
    // One rank: the probe of the nearest world (1) is used.
    const Problem one{"fft3d", {16, 64, 4}, Precision::double_, Direction::forward, 1};
    EXPECT_EQ(m.sources(one, {"fftw", "reference_3d", LayoutVariant::default_, {1, 1}, {}, false}), "fft fftw/double: probe at 1 ranks");
    const std::string text = m.describe();
    EXPECT_NE(text.find("fftw/a2a_sync            alpha 0.02 ms per peer, beta 3.33 GB/s  [probe: 8 exchanges at 4 ranks]"),
              std::string::npos) << text;
    EXPECT_NE(text.find("[sweep: 12 phases; not used, the probe is]"), std::string::npos) << text;
    EXPECT_NE(text.find("fftw/p2p_sync            alpha 0.01 ms per peer"), std::string::npos) << text;
}

TEST(CostModel, ProbesAloneRankConfigurationsOfAnyProblem) {
    const CostModel m = CostModel::fit({}, probes(4, 0.02, 3e-7, rate));
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.backends(), std::vector<std::string>{"fftw"});
    // Never measured: 256^3 at 8 ranks. Every candidate uses the probed transport.
    const auto best = m.best({"fft3d", {256, 256, 256}, Precision::double_, Direction::forward, 8}, "fftw");
    ASSERT_TRUE(best);
    EXPECT_GT(best->second, 0);
    EXPECT_EQ(best->first.redistribution.front(), "a2a_sync");
    // Ties (pencil 1x8 costs what a slab costs in this model) go to fewer phases.
    EXPECT_EQ(best->first.redistribution.size(), 1u) << best->first.key();
    // Nothing for single precision was probed.
    EXPECT_FALSE(m.best({"fft3d", {256, 256, 256}, Precision::single, Direction::forward, 8}, "fftw"));
}

}  // namespace
}  // namespace fftune
