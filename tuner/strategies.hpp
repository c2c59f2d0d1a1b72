// Search strategies of `fftune tune` (each round is an ordinary sweep over a
// PointSelection, so crash-resume, validation and flushing all apply):
//  - exhaustive: every point, full iterations;
//  - phase: independent phases tuned one at a time (Family::phase_split;
//    fft3d: the pencil's redistribution phases): phase 0 with phase 1 fixed
//    to its first method, then phase 1 with the best phase 0; other points
//    as in exhaustive;
//  - halving: successive halving: every point with few iterations, then the
//    better half (and only those within 1.3x of the current best) with twice
//    as many, until the testcase's iterations are reached;
//  - screen (the default): every point once with a few iterations and no
//    validation, then per problem the few fastest (within screen_margin of
//    its fastest) with the testcase's iterations and validation; a problem
//    none of whose candidates validates takes its next ones.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/run/testcase.hpp"

namespace fftune {

struct Round;  // one sweep over a selection of points (strategies.cpp)

// A search strategy of `fftune tune`, registered by name: it runs rounds.
class Strategy {
public:
    static constexpr const char* kind = "strategy";
    virtual ~Strategy() = default;
    virtual void search(Round& round) const = 0;
};
FFTUNE_DECLARE_REGISTRY(Strategy);

struct TuneResult {
    std::string strategy;
    std::vector<nlohmann::json> records;          // every record of every round
    std::vector<std::string> validated_files;     // the record files of the validated rounds (to ingest)
    std::map<std::string, std::string> picks;     // problem signature -> configuration key
    long long point_iterations = 0;               // sum over measured points of warmup + iterations
    int points_measured = 0;                      // points that ran (not skipped)
    int rounds = 0;
    int points_in_space = 0;                      // the testcase's points over its rank counts
    int points_covered = 0;                       // of them, measured at least once
    bool budget_spent = false;                    // the deadline stopped the search early
};

// --strategy screen: iterations of the screening pass, how far behind a
// problem's fastest screened point a candidate may be, and how many
// candidates per problem each confirming round takes.
inline constexpr int screen_iterations = 3;
inline constexpr double screen_margin = 1.15;
inline constexpr int screen_candidates = 3;
inline constexpr const char* default_strategy = "screen";

// "ranks/<problem_key>", the unit a strategy picks a winner for.
std::string problem_signature(const nlohmann::json& record);
// Fastest validated ok record per problem signature.
std::map<std::string, const nlohmann::json*> best_per_problem(const std::vector<nlohmann::json>& records);

// Throws TestcaseError, before anything runs, for a testcase whose points
// would not be validated ("validate": false): the database stores only
// validated results (tuner/record_check.hpp), so such a sweep tunes nothing.
void check_tunable(const Testcase& tc, const std::string& testcase_path);

// Runs the strategy's rounds (check_tunable first). Throws
// std::invalid_argument for a name not registered, naming those that are.
// With `deadline_unix_ms` > 0 (--budget) no point starts after it, and no
// round: the picks are the best validated plans measured until then.
TuneResult tune(const Testcase& tc, const std::string& testcase_path, const std::string& out_dir,
                const std::string& strategy, long long deadline_unix_ms = 0);

// Seconds in a duration such as "90s", "10m", "1h", "1h30m" or "600" (seconds);
// nothing for text that is not one, or for zero.
std::optional<double> parse_duration(const std::string& text);

// How close the picks come to the exhaustive best (times from `exhaustive`) and
// what they cost, as a short text table.
std::string compare_with_exhaustive(const TuneResult& result, const std::vector<nlohmann::json>& exhaustive);

}  // namespace fftune
