// Alpha-beta cost model (thesis 2.5.3) calibrated from measured records of one
// machine: a local FFT stage costs c * (points per rank) * log2(N); a
// redistribution phase with transport t among q ranks costs
// alpha_t * (q - 1) + bytes_sent_per_rank / beta_t. c per (backend, precision)
// is the median over records; alpha and beta per (backend, transport) come
// from a non-negative least-squares line through the measured phase times.
// The model predicts configurations and sizes that were never measured.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config.hpp"

namespace fftune {

struct LinkFit {
    double alpha_ms = 0;          // per message
    double ms_per_byte = 0;       // 1 / beta
    int samples = 0;
};

class CostModel {
public:
    // Fit from validated ok records (others are ignored).
    static CostModel fit(const std::vector<nlohmann::json>& records);
    // Predicted milliseconds, or nothing when a needed coefficient was never measured.
    std::optional<double> predict(const Problem& problem, const Config& config) const;
    // Fastest predicted applicable configuration among every decomposition,
    // layout, process grid and fitted transport (one method for all phases).
    std::optional<std::pair<Config, double>> best(const Problem& problem, const std::string& backend) const;
    bool empty() const { return fft_.empty(); }
    const std::map<std::string, LinkFit>& links() const { return links_; }

private:
    std::map<std::string, double> fft_;       // "backend/precision" -> ms per (point per rank * log2 N)
    std::map<std::string, LinkFit> links_;    // "backend/transport"
};

// Leave-one-problem-out check: fit on the other problems, predict the winner of
// each problem, compare with the measured winner. Text summary.
std::string model_accuracy(const std::vector<nlohmann::json>& records);

}  // namespace fftune
