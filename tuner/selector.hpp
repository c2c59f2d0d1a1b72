// Runtime plan selection from the tuning database (DESIGN.md section 6).
//
//   fftune::Selection why;
//   auto plan = fftune::make_plan(MPI_COMM_WORLD, problem, {}, &why);
//   // why.rung: "exact", "stale", "nearest" or "default"; why.reason says more
//
// Rungs, in order: exact (this machine, this problem, validated; "stale" when
// the software changed since) -> nearest problem (same kind, precision,
// direction and ranks; sizes by log2 ratio; the configuration must apply) ->
// model (alpha-beta model fitted to this machine's measurements, tuner/model.hpp)
// -> documented default. A missing, corrupt or foreign-machine database never
// fails a lookup: it falls through to the default and says why. (The
// per-rank-size rung of DESIGN.md is not built.)
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <mpi.h>
#include <nlohmann/json_fwd.hpp>

#include "core/config.hpp"
#include "core/plan.hpp"
#include "tuner/database.hpp"

namespace fftune {

struct SelectOptions {
    std::string database;  // empty: default_database_path()
    std::string machine;   // empty: this machine's fingerprint
};

struct Selection {
    Config config;
    std::string rung;        // exact | stale | nearest | model | default
    std::string reason;
    double distance = 0;     // nearest: sum over axes of |log2(N / N_measured)|
    std::optional<double> expected_ms;  // the measured median it is based on
    std::optional<Problem> measured_problem;
    std::string verdict;     // of the winner it came from
};

void to_json(nlohmann::json& j, const Selection& s);
void from_json(const nlohmann::json& j, Selection& s);

// Local lookup (no MPI collectives).
Selection select(const Problem& problem, const SelectOptions& options = {});
// Collective: rank 0 looks up, every rank gets the same answer.
Selection select(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {});
// The documented default configuration for a problem (see tuner/README.md).
Config default_config(const Problem& problem);
// Select and build in one collective call.
std::unique_ptr<Plan> make_plan(MPI_Comm comm, const Problem& problem, const SelectOptions& options = {},
                                Selection* chosen = nullptr);

}  // namespace fftune
