// Alpha-beta cost model (thesis 2.5.3) of one machine. A redistribution phase
// with transport t among q ranks costs o_t + alpha_t * (q - 1) + bytes_sent_per_rank / beta_t
// (o_t, a per-call overhead, only from probes that saw several peer counts;
// else 0); the local FFTs cost a rate times the work. Coefficients come from
// two sources:
//
//  - probe (preferred): fftune probe's microbenchmarks (core/run/probe.hpp).
//    o, alpha, beta per (backend, transport) and world size of the probing job,
//    t = o + alpha * (q - 1) + m * (q - 1) / beta, by non-negative least squares
//    on relative error over message sizes and peer counts;
//    FFT: ms per (complex point * log2 n) per (backend, precision), by
//    transform length n, contiguous and strided, and world size. Each FFT
//    stage of the configuration's chain (rank 0's boxes, the largest of a
//    balanced split) costs sum over its axes a of
//    rate(N_a) * (complex elements of the stage) * log2 N_a, with the contiguous
//    rate when a is the fastest axis of both the stage's input and output
//    layouts and the strided rate otherwise (so decompositions and layouts
//    differ); the r2c counts its complex output (half the work of a complex
//    transform). The probe of the world size nearest the problem's rank count
//    is used (concurrency on a node changes both rates).
//  - sweep (fallback): fitted to the phases of measured records: FFT phases ->
//    c per (backend, precision) (and per decomposition/layout) with
//    t = c * (points per rank) * log2 N; pack + exchange + unpack -> alpha, beta
//    per (backend, transport) (and per variant and phase) by non-negative least squares.
//
// Probe calibrations take precedence per (backend, transport) and per
// (backend, precision); the sweep fits fill the gaps. The model predicts
// configurations and problems that were never measured.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/config.hpp"

namespace fftune {

struct LinkFit {
    double call_ms = 0;           // per exchange call (probe fits with several peer counts; else 0)
    double alpha_ms = 0;          // per message (peer)
    double ms_per_byte = 0;       // 1 / beta
    int samples = 0;
};

class CostModel {
public:
    // From validated ok result records and ok probe records (others are ignored).
    static CostModel fit(const std::vector<nlohmann::json>& records, const std::vector<nlohmann::json>& probes = {});
    // Predicted milliseconds, or nothing when a needed coefficient was never
    // measured or the configuration overlaps its phases (Config::overlap > 1).
    std::optional<double> predict(const Problem& problem, const Config& config) const;
    // Fastest predicted applicable configuration among every decomposition,
    // layout, process grid and calibrated transport (one method for all phases).
    std::optional<std::pair<Config, double>> best(const Problem& problem, const std::string& backend) const;
    bool empty() const { return fft_.empty() && probe_fft_.empty(); }
    // Backends with an FFT coefficient (from either source).
    std::vector<std::string> backends() const;
    // Sweep fits per "backend/transport" (and finer variant keys).
    const std::map<std::string, LinkFit>& links() const { return links_; }
    // Probe fits per "backend/transport", by world size.
    const std::map<std::string, std::map<int, LinkFit>>& probe_links() const { return probe_links_; }
    // Every coefficient, one line each, saying where it came from and whether it is used.
    std::string describe() const;
    // Which source each coefficient of a prediction came from, e.g.
    // "fft fftw/double: probe at 4 ranks; a2a_sync: probe at 4 ranks".
    std::string sources(const Problem& problem, const Config& config) const;

private:
public:
    // ms per (point * log2 n) by transform length n, from one world size's probe.
    struct StrideRates {
        std::map<long long, double> contiguous, strided, mean;
    };

private:
    struct FftRates {
        std::map<int, StrideRates> by_world;
        int samples = 0;
    };
    const StrideRates* probe_rates(const std::string& key, int ranks, int* world) const;
    const LinkFit* probe_link(const std::string& key, int ranks, int* world) const;

    std::map<std::string, double> fft_;                            // sweep: "backend/precision[/variant]"
    std::map<std::string, LinkFit> links_;                         // sweep: "backend/transport[/variant/phase]"
    std::map<std::string, int> fft_samples_;                       // sweep records per fft_ key
    std::map<std::string, FftRates> probe_fft_;                    // probe: "backend/precision"
    std::map<std::string, std::map<int, LinkFit>> probe_links_;    // probe: "backend/transport" -> world
};

// Leave-one-problem-out check: fit on the other problems (and every probe
// record), predict the winner of each problem among its measured
// configurations, compare with the measured winner. Text summary.
std::string model_accuracy(const std::vector<nlohmann::json>& records, const std::vector<nlohmann::json>& probes = {});

}  // namespace fftune
