#include "core/records/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace fftune {

namespace {
// P(B <= k) for B ~ Binomial(n, 1/2), in log space to stay finite for large n.
double binom_cdf_half(int n, int k) {
    double sum = 0;
    for (int i = 0; i <= k; ++i)
        sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                        n * std::log(2.0));
    return sum;
}
}  // namespace

std::pair<int, int> median_ci_ranks(int n, double* coverage) {
    // Largest j with P(B < j) <= 0.005: CI = [x_(j), x_(n-j+1)] (1-based).
    int j = 0;
    while (j + 1 <= n / 2 && binom_cdf_half(n, j) <= 0.005) ++j;
    if (j == 0) {  // too few samples for any interval narrower than the range
        if (coverage) *coverage = n > 0 ? 1.0 - 2 * std::pow(0.5, n) : 0.0;
        return {0, std::max(0, n - 1)};
    }
    if (coverage) *coverage = 1.0 - 2 * binom_cdf_half(n, j - 1);
    return {j - 1, n - j};
}

Stats summarize(std::vector<double> x) {
    Stats s;
    s.n = static_cast<int>(x.size());
    if (x.empty()) return s;
    std::sort(x.begin(), x.end());
    const int n = s.n;
    s.min = x.front();
    s.max = x.back();
    s.median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    s.mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.stddev = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
    const auto [lo, hi] = median_ci_ranks(n, &s.ci99_level);
    s.ci99_low = x[lo];
    s.ci99_high = x[hi];
    return s;
}

void to_json(nlohmann::json& j, const Stats& s) {
    j = nlohmann::json{{"n", s.n},           {"median", s.median}, {"mean", s.mean},
                       {"min", s.min},       {"max", s.max},       {"stddev", s.stddev},
                       {"ci99", {s.ci99_low, s.ci99_high}}, {"ci99_coverage", s.ci99_level}};
}

}  // namespace fftune
