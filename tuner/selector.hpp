// Runtime plan selection from the tuning database (DESIGN.md section 6), for
// every problem family (core/run/family.hpp).
//
//   fftune::Selection why;
//   auto plan = fftune::make_plan(MPI_COMM_WORLD, problem, {}, &why);   // fft3d
//   // why.rung: "exact", "stale", "nearest", "per_rank_size", "model" or "default";
//   // why.reason says more
//
// Rungs, in order: exact (this machine, this problem at its ranks per node,
// validated; "stale" when the software changed since) -> nearest problem
// (same family, categories and ranks; sizes and ranks per node by log2
// ratio; the configuration must apply) -> per_rank_size (same family and
// categories at another rank count, nearest points per rank by log2 ratio;
// its configuration re-derived for this rank count, Family::adapt_to_ranks,
// must apply) -> model (a cost model registered for the family, CostModelRung:
// fft3d's alpha-beta model, tuner/model.hpp) -> the family's documented
// default. A missing, corrupt or foreign-machine database never fails a
// lookup: it falls through to the default and says why. With max_error,
// only measurements whose validation error is within it answer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/engine/config.hpp"
#include "core/engine/plan.hpp"
#include "core/run/family.hpp"
#include "tuner/database.hpp"

namespace fftune {

struct SelectOptions {
    std::string database;  // empty: default_database_path()
    std::string machine;   // empty: this machine's fingerprint
    // Only configurations whose measured validation error (max_rel_error) is
    // at most this; the model and default rungs are the family's exact methods.
    // A finite number >= 0 (check_max_error); select throws otherwise.
    std::optional<double> max_error;
};

// Why `bound` cannot be a max_error, empty when it can: a finite number >= 0.
// (NaN would make every comparison false and silently exclude every
// measurement; inf bounds nothing, a negative bound excludes everything.)
std::string check_max_error(double bound);

struct Selection {
    nlohmann::json config;   // the family's configuration (Config for fft3d: fft3d_config)
    std::string key;         // its key
    std::string rung;        // exact | stale | nearest | per_rank_size | model | default
    std::string reason;
    double distance = 0;     // nearest: sum over size axes of |log2(N / N_measured)|, plus
                             // |log2(ranks per node / measured)| where both are known;
                             // per_rank_size: |log2(work per rank / measured work per rank)|
    std::optional<double> expected_ms;  // the measured median it is based on (scaled), or the model's prediction
    std::optional<nlohmann::json> measured_problem;
    std::string verdict;     // of the winner it came from
    std::optional<double> error;  // the measurement's validation error (measured rungs)
};

void to_json(nlohmann::json& j, const Selection& s);
void from_json(const nlohmann::json& j, Selection& s);

// A cost model of one family, asked when nothing measured applies.
class CostModelRung {
public:
    static constexpr const char* kind = "cost model";
    virtual ~CostModelRung() = default;
    struct Answer {
        nlohmann::json config;
        double expected_ms = 0;
        std::string reason;
    };
    // From this machine's validated records of the family and its probe records.
    virtual std::optional<Answer> best(const nlohmann::json& problem, const std::vector<nlohmann::json>& records,
                                       const std::vector<nlohmann::json>& probes) const = 0;
};
FFTUNE_DECLARE_REGISTRY(CostModelRung);

// Local lookup (no MPI collectives). `problem` is a record's "problem" (its
// "kind" names the family); a ranks_per_node of 0 or none matches any.
// Throws std::invalid_argument for an unusable max_error.
Selection select(const nlohmann::json& problem, const SelectOptions& options = {});
Selection select(const Problem& problem, const SelectOptions& options = {});
// Collective: rank 0 looks up, every rank gets the same answer. A missing
// ranks_per_node is taken from `comm` (ranks sharing a node).
Selection select(MPI_Comm comm, const nlohmann::json& problem, const SelectOptions& options = {});
Selection select(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {});
// fft3d: select and build in one collective call.
std::unique_ptr<Plan> make_plan(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {},
                                Selection* chosen = nullptr);
// Any family: select and make the chosen configuration's work in one
// collective call. `problem` holds "kind" and the family's fields (`fftune
// best --problem NAME --help`; categories left out take their defaults,
// complete_problem); "ranks" is the size of `comm`. The caller drives the work
// as the runner does (core/run/family.hpp Workload): setup(comm),
// prepare(comm), step() as often as it likes, validate(comm).
std::unique_ptr<Workload> make_workload(MPI_Comm comm, const nlohmann::json& problem,
                                        const SelectOptions& options = {}, Selection* chosen = nullptr);

}  // namespace fftune
