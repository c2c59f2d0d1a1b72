// The cost model recovers known coefficients from synthetic records that follow
// it exactly, predicts unmeasured configurations, and its leave-one-out check
// then finds every winner.
#include "tuner/model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"

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
    // Overlapped configurations: no additive prediction, and their records
    // (phases overlap in time) leave the fitted coefficients alone.
    Config overlapped = want.at("config").get<Config>();
    overlapped.overlap = 4;
    EXPECT_FALSE(m.predict(want.at("problem").get<Problem>(), overlapped));
    auto with_overlap = records();
    json bogus = synthetic({64, 64, 64}, 2, "a2a_sync");
    bogus["config"]["overlap"] = 4;
    bogus["timing"]["phases"]["exchange.0"]["median"] = 1e3;
    with_overlap.push_back(bogus);
    EXPECT_NEAR(CostModel::fit(with_overlap).links().at("fftw/a2a_sync").alpha_ms, truth.at("a2a_sync").first, 1e-9);
}

TEST(CostModel, PicksTheMeasuredWinnerOnExactData) {
    // Small messages favour p2p_sync's latency, large ones a2a_sync's bandwidth: both occur.
    const std::string summary = model_accuracy(records());
    EXPECT_NE(summary.find("12 problems; predicted winner = measured winner in 12 (100%), within 5% in 12"), std::string::npos) << summary;
    EXPECT_NE(summary.find("by rank count: 2 ranks: 4/4 right, mean +0.0%; 3 ranks: 4/4 right"), std::string::npos) << summary;
    const CostModel m = CostModel::fit(records());
    const auto best = m.best({"fft3d", {64, 64, 64}, Precision::double_, Direction::forward, 4}, "fftw");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->first.redistribution.front(), best->first.redistribution.back());
}

// A database of every family (a poisson record has no direction): the model
// ranks the fft3d problems as before and leaves the others out.
TEST(CostModel, OtherFamiliesRecordsAreLeftOut) {
    auto mixed = records();
    json poisson = mixed.front();
    poisson["problem"] = {{"kind", "poisson"}, {"n", {16, 16, 16}}, {"boundary", "free"}, {"ranks", 2}};
    mixed.insert(mixed.begin(), poisson);
    EXPECT_EQ(model_accuracy(mixed), model_accuracy(records()));
    const std::string only = model_accuracy({poisson});
    EXPECT_NE(only.find("none of the 1 validated records is of fft3d"), std::string::npos) << only;
}

// Probe records that follow the model exactly: exchanges with (call, alpha, ms per byte)
// at `world`, FFT rates rate(n) contiguous and strided_factor * rate(n) strided.
std::vector<json> probes(int world, double alpha, double per_byte, double (*rate)(long long), double strided_factor = 3,
                         double call = 0) {
    std::vector<json> out;
    auto stat = [](double t) { return json{{"total", {{"median", t}, {"ci99", {t, t}}}}}; };
    for (int q = 2; q <= world; ++q) {
        if (world % q) continue;
        for (long long m : {8ll, 512ll, 32768ll, 2ll << 20})
            out.push_back({{"kind", "probe"}, {"probe", "exchange"}, {"status", "ok"}, {"backend", "fftw"},
                           {"transport", "a2a_sync"}, {"world", world}, {"peers", q}, {"bytes_per_peer", m},
                           {"validation", {{"passed", true}}}, {"timing", stat(call + (alpha + m * per_byte) * (q - 1))}});
    }
    for (long long n : {4ll, 16ll, 64ll})
        for (const char* stride : {"contiguous", "strided"})
            out.push_back({{"kind", "probe"}, {"probe", "fft"}, {"status", "ok"}, {"backend", "fftw"},
                           {"precision", "double"}, {"world", world}, {"n", n}, {"stride", stride},
                           {"ms_per_point_log2n", (std::string(stride) == "strided" ? strided_factor : 1) * rate(n)}, {"timing", stat(1.0)}});
    return out;
}

double rate(long long n) { return 1e-7 * std::log2(double(n)); }
double strided(long long n) { return 3 * rate(n); }

TEST(CostModel, ProbeCalibrationsComeFirstAndPredictUnmeasuredProblems) {
    auto calib = probes(4, 0.02, 3e-7, rate, 3, 0.005);
    const auto far = probes(1, 5.0, 1e-3, rate);  // a world of 1 has no exchanges: FFT rates only
    calib.insert(calib.end(), far.begin(), far.end());
    const CostModel m = CostModel::fit(records(), calib);
    const LinkFit& f = m.probe_links().at("fftw/a2a_sync").at(4);
    EXPECT_NEAR(f.call_ms, 0.005, 1e-9);  // q = 2 and 4 tell the call overhead from alpha
    EXPECT_NEAR(f.alpha_ms, 0.02, 1e-9);
    EXPECT_NEAR(f.ms_per_byte, 3e-7, 1e-15);
    EXPECT_EQ(f.samples, 8);  // q = 2, 4 x 4 sizes
    // One peer count only: o and alpha are one term (o = 0), exactly.
    const LinkFit& two = CostModel::fit({}, probes(2, 0.02, 3e-7, rate, 3, 0.005)).probe_links().at("fftw/a2a_sync").at(2);
    EXPECT_EQ(two.call_ms, 0);
    EXPECT_NEAR(two.alpha_ms, 0.025, 1e-9);
    EXPECT_NEAR(two.ms_per_byte, 3e-7, 1e-15);

    // One stage over x, y, z of the z-contiguous real input (3 complex z entries):
    // x and y at the strided rate, z at the contiguous one.
    const Problem one{"fft3d", {16, 64, 4}, Precision::double_, Direction::forward, 1};
    const Config ref{"fftw", "reference_3d", LayoutVariant::default_, {1, 1}, {}, false};
    ASSERT_TRUE(m.predict(one, ref));
    EXPECT_NEAR(*m.predict(one, ref), 16 * 64 * 3 * (strided(16) * 4 + strided(64) * 6 + rate(4) * 2), 1e-12);
    EXPECT_EQ(m.sources(one, ref), "fft fftw/double: probe at 1 ranks");  // the nearest world

    // 16 x 64 x 4 at 4 ranks, slab_2d1d with a2a_sync: rank 0 does fft.yz on 4 x 64 x 3
    // (y strided; z contiguous in and out in the default layout, written x-fastest in
    // the realigned one), then fft.x on 16 x 16 x 3 (x strided: not the fastest axis
    // of the output in either layout); the exchange sends 3/4 of 768 complex.
    const Problem p{"fft3d", {16, 64, 4}, Precision::double_, Direction::forward, 4};
    const Config c{"fftw", "slab_2d1d", LayoutVariant::default_, {4, 1}, {"a2a_sync"}, false};
    const double link = 0.005 + 0.02 * 3 + 768.0 * 16 * 3 / 4 * 3e-7;
    const double x = 768 * strided(16) * 4;
    ASSERT_TRUE(m.predict(p, c));
    EXPECT_NEAR(*m.predict(p, c), 768 * (strided(64) * 6 + rate(4) * 2) + x + link, 1e-12);
    Config realigned = c;
    realigned.layout = LayoutVariant::realigned;
    EXPECT_NEAR(*m.predict(p, realigned), 768 * (strided(64) * 6 + strided(4) * 2) + x + link, 1e-12);
    EXPECT_EQ(m.sources(p, c), "fft fftw/double: probe at 4 ranks; a2a_sync: probe at 4 ranks");
    // At one rank nothing is exchanged and the realigned orders are settled away:
    // both layouts cost the same.
    Problem p1 = p;
    p1.ranks = 1;
    Config c1 = c, r1 = realigned;
    c1.process_grid = r1.process_grid = {1, 1};
    ASSERT_TRUE(m.predict(p1, c1));
    EXPECT_NEAR(*m.predict(p1, r1), *m.predict(p1, c1), 1e-12);
    // Lengths between probed ones are interpolated in log2 n: 32 lies halfway between 16 and 64.
    const Problem p32{"fft3d", {1, 1, 32}, Precision::double_, Direction::forward, 1};
    EXPECT_NEAR(*m.predict(p32, ref), (rate(16) + rate(64)) / 2 * 17 * 5, 1e-12);
    // A transport without a probe falls back to its sweep fit.
    Config p2p = c;
    p2p.redistribution = {"p2p_sync"};
    EXPECT_EQ(m.sources(p, p2p), "fft fftw/double: probe at 4 ranks; p2p_sync: sweep fit");
    const std::string text = m.describe();
    EXPECT_NE(text.find("fftw/a2a_sync            alpha 0.02 ms per peer, beta 3.33 GB/s, 0.005 ms per call  [probe: 8 exchanges at 4 ranks]"),
              std::string::npos) << text;
    EXPECT_NE(text.find("[sweep: 12 phases; not used, the probe is]"), std::string::npos) << text;
    EXPECT_NE(text.find("fftw/p2p_sync            alpha 0.01 ms per peer"), std::string::npos) << text;
    EXPECT_NE(text.find("fft fftw/double          contiguous 2e-07..6e-07, strided 6e-07..1.8e-06 ms per point*log2 n over n = 4..64  [probe: 3 lengths at 4 ranks]"),
              std::string::npos) << text;
}

TEST(CostModel, ProbesAloneRankConfigurationsOfAnyProblem) {
    const CostModel m = CostModel::fit({}, probes(4, 0.02, 3e-7, rate));
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.backends(), std::vector<std::string>{"fftw"});
    // Never measured: 256^3 at 8 ranks. The pick is the cheapest applicable candidate.
    const Problem p{"fft3d", {256, 256, 256}, Precision::double_, Direction::forward, 8};
    const auto best = m.best(p, "fftw");
    ASSERT_TRUE(best);
    EXPECT_GT(best->second, 0);
    EXPECT_EQ(best->first.redistribution.front(), "a2a_sync");
    EXPECT_FALSE(check_applicable(p, best->first));
    for (const char* d : {"slab_2d1d", "slab_1d2d"})
        for (auto layout : {LayoutVariant::default_, LayoutVariant::realigned})
            EXPECT_LE(best->second, *m.predict(p, {"fftw", d, layout, {8, 1}, {"a2a_sync"}, false}));
    for (const std::array<int, 2> g : {std::array<int, 2>{2, 4}, {4, 2}, {8, 1}})
        for (auto layout : {LayoutVariant::default_, LayoutVariant::realigned})
            EXPECT_LE(best->second, *m.predict(p, {"fftw", "pencil", layout, g, {"a2a_sync", "a2a_sync"}, false}));
    // Nothing for single precision was probed.
    EXPECT_FALSE(m.best({"fft3d", {256, 256, 256}, Precision::single, Direction::forward, 8}, "fftw"));
    // Strided as fast as contiguous and every box split evenly (Nz/2 + 1 = 16): at 2 ranks
    // pencil 1x2 and 2x1 cost what a slab costs (one phase among 2, one among 1); ties go to fewer phases.
    const CostModel flat = CostModel::fit({}, probes(4, 0.02, 3e-7, rate, 1.0));
    const Problem even{"fft3d", {64, 64, 30}, Precision::double_, Direction::forward, 2};
    const auto tie = flat.best(even, "fftw");
    ASSERT_TRUE(tie);
    for (const std::array<int, 2> g : {std::array<int, 2>{1, 2}, {2, 1}})
        EXPECT_NEAR(tie->second, *flat.predict(even, {"fftw", "pencil", LayoutVariant::default_, g, {"a2a_sync", "a2a_sync"}, false}),
                    1e-9 * tie->second);
    EXPECT_EQ(tie->first.redistribution.size(), 1u) << tie->first.key();
}

}  // namespace
}  // namespace fftune
