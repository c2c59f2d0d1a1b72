// Runtime plan selection from the tuning database (DESIGN.md section 6).
//
//   fftune::Selection why;
//   auto plan = fftune::make_plan(MPI_COMM_WORLD, problem, {}, &why);
//   // why.rung: "exact", "stale", "nearest", "per_rank_size", "model" or "default";
//   // why.reason says more
//
// Rungs, in order (DESIGN.md section 6): exact (this machine, this problem at
// its ranks per node, validated; "stale" when the software changed since) ->
// nearest problem (same kind, precision, direction and ranks; sizes and ranks
// per node by log2 ratio; the configuration must apply) -> per_rank_size (same kind, precision and direction at another
// rank count, nearest points per rank by log2 ratio; its configuration with
// the process grid re-derived for this rank count, adapt_to_ranks, must apply)
// -> model (alpha-beta model, tuner/model.hpp: fftune probe calibrations of
// this machine, else fits to its measurements) -> documented default. A
// missing, corrupt or foreign-machine database never fails a lookup: it falls
// through to the default and says why.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json_fwd.hpp>

#include "core/engine/config.hpp"
#include "core/engine/plan.hpp"
#include "tuner/database.hpp"

namespace fftune {

struct SelectOptions {
    std::string database;  // empty: default_database_path()
    std::string machine;   // empty: this machine's fingerprint
};

struct Selection {
    Config config;
    std::string rung;        // exact | stale | nearest | per_rank_size | model | default
    std::string reason;
    double distance = 0;     // nearest: sum over axes of |log2(N / N_measured)|, plus
                             // |log2(ranks per node / measured)| where both are known;
                             // per_rank_size: |log2(points per rank / measured points per rank)|
    std::optional<double> expected_ms;  // the measured median it is based on (scaled), or the model's prediction
    std::optional<Problem> measured_problem;
    std::string verdict;     // of the winner it came from
};

void to_json(nlohmann::json& j, const Selection& s);
void from_json(const nlohmann::json& j, Selection& s);

// Local lookup (no MPI collectives). problem.ranks_per_node 0 matches any.
Selection select(const Problem& problem, const SelectOptions& options = {});
// Collective: rank 0 looks up, every rank gets the same answer. A
// problem.ranks_per_node of 0 is taken from `comm` (ranks sharing a node).
Selection select(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {});
// The documented default configuration for a problem (see tuner/README.md).
Config default_config(const Problem& problem);
// A measured configuration re-derived for `ranks`: slabs take P x 1; pencils
// every grid of `ranks`, the aspect P1/P2 nearest the measured one first
// (equally near: P1 >= P2 first).
// Method and layout are kept; callers check which candidate applies.
std::vector<Config> adapt_to_ranks(const Config& config, int ranks);
// Select and build in one collective call.
std::unique_ptr<Plan> make_plan(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {},
                                Selection* chosen = nullptr);

}  // namespace fftune
