// Summary statistics over timed iterations: median with a distribution-free 99%
// confidence interval from order statistics (binomial, p = 1/2).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace fftune {

struct Stats {
    int n = 0;
    double median = 0, mean = 0, min = 0, max = 0, stddev = 0;
    double ci99_low = 0, ci99_high = 0;  // 99% CI of the median
    double ci99_level = 0;               // achieved coverage (< 0.99 when n is small)
};

Stats summarize(std::vector<double> samples);
// Order-statistic indices (0-based) bounding the 99% CI of the median of n samples.
std::pair<int, int> median_ci_ranks(int n, double* coverage = nullptr);

void to_json(nlohmann::json& j, const Stats& s);

}  // namespace fftune
