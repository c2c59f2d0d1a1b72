#include "core/records/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace fftune {
namespace {

TEST(Statistics, BasicMoments) {
    const Stats s = summarize({4, 1, 3, 2});
    EXPECT_EQ(s.n, 4);
    EXPECT_DOUBLE_EQ(s.median, 2.5);
    EXPECT_DOUBLE_EQ(s.mean, 2.5);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 4);
    EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-15);
}

TEST(Statistics, MedianCiRanksMatchBinomialTables) {
    // Known 99% order-statistic intervals (1-based): n=20 -> [4, 17], n=100 -> [37, 64].
    double cov = 0;
    auto r = median_ci_ranks(20, &cov);
    EXPECT_EQ(r.first + 1, 4);
    EXPECT_EQ(r.second + 1, 17);
    EXPECT_GE(cov, 0.99);
    r = median_ci_ranks(100, &cov);
    EXPECT_EQ(r.first + 1, 37);
    EXPECT_EQ(r.second + 1, 64);
    EXPECT_GE(cov, 0.99);
    // Too few samples: the whole range, with its (lower) coverage reported.
    r = median_ci_ranks(5, &cov);
    EXPECT_EQ(r.first, 0);
    EXPECT_EQ(r.second, 4);
    EXPECT_LT(cov, 0.99);
}

TEST(Statistics, CiCoversTheTrueMedianAtLeast99Percent) {
    std::mt19937 rng(7);
    std::exponential_distribution<double> dist(1.0);
    const double true_median = std::log(2.0);
    int covered = 0;
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
        std::vector<double> x(30);
        for (auto& v : x) v = dist(rng);
        const Stats s = summarize(x);
        covered += s.ci99_low <= true_median && true_median <= s.ci99_high;
    }
    EXPECT_GE(covered, trials * 0.985);
}

TEST(Statistics, JsonNamesTheInterval) {
    const nlohmann::json j = summarize({1, 2, 3});
    EXPECT_EQ(j.at("ci99").size(), 2u);
    EXPECT_EQ(j.at("median"), 2.0);
}

}  // namespace
}  // namespace fftune
