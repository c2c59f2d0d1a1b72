// Per-machine tuning database (SQLite). Result records and probe records
// (results/README.md) are merged in by ingest(), idempotently: a record's
// identity is a hash of its canonical JSON, so ingesting the same files twice
// adds nothing. Lookups open the file read-only. Schema: tuner/README.md;
// version in meta.schema_version (older files are migrated in place when
// opened for writing, and read as they are otherwise).
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/config.hpp"

struct sqlite3;

namespace fftune {

inline constexpr int database_schema_version = 4;

struct DatabaseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One measured, validated configuration of a problem.
struct Measurement {
    std::string key;       // the family's configuration key (Config::key() for fft3d)
    nlohmann::json config;
    double median_ms = 0, ci_low = 0, ci_high = 0;
    double max_rel_error = 0;
    std::string machine;   // hardware fingerprint
    std::string software;  // software validator hash
    std::string timestamp;
};

// Best and runner-up of one problem, with a verdict from their 99% CIs.
struct Winner {
    nlohmann::json problem;
    Measurement best;
    std::optional<Measurement> runner_up;
    double margin = 0;      // runner_up / best - 1
    std::string verdict;    // "faster", "same within noise", "ambiguous", "only one"
    int candidates = 0;
};

// What one ingest did with each non-empty line: stored it (added, or already
// present), or not, and why (tuner/record_check.hpp).
struct IngestStats {
    int files = 0, lines = 0, added = 0, duplicates = 0;
    int probes_added = 0;   // of `added`: probe records (fftune probe)
    int not_validated = 0;  // ok records whose validation did not run: not stored
    // Lines refused, per category: "unreadable" (not JSON: a torn line of a
    // job that died, or not a record file), "unknown schema", "missing field",
    // "impossible value".
    std::map<std::string, int> refused;
    struct Refusal {
        std::string file;
        int line = 0;  // 1-based, empty lines counted
        std::string category, reason;
    };
    std::vector<Refusal> refusals;  // the first max_refusals_kept, in file and line order
    static constexpr std::size_t max_refusals_kept = 100;

    int refused_lines() const;
    int not_stored() const { return not_validated + refused_lines(); }
    // Something usable was read: a record stored now or stored before.
    bool usable() const { return added + duplicates > 0; }
};

class Database {
public:
    // Creates the file and schema when `read_only` is false. Throws DatabaseError
    // naming the path for a missing, corrupt or foreign (other schema version) file.
    Database(const std::string& path, bool read_only);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    IngestStats ingest(const std::vector<std::string>& files);
    // Validated ok measurements of `problem` (a record's "problem": its kind,
    // ranks, the family's fields) on `machine` (all machines when empty), at
    // its ranks_per_node (and those whose ranks per node is not known; any
    // when 0 or absent). Sorted by median.
    std::vector<Measurement> measurements(const nlohmann::json& problem, const std::string& machine) const;
    std::vector<Measurement> measurements(const Problem& problem, const std::string& machine) const;
    // Every problem with validated measurements on `machine`, one per ranks per
    // node (its "ranks_per_node" absent where not known); of `kind` only when given.
    std::vector<nlohmann::json> problems(const std::string& machine, const std::string& kind = "") const;
    std::vector<std::string> machines() const;
    // Every validated ok record of `machine` (all machines when empty), as
    // written by the runner; of `kind` only when given.
    std::vector<nlohmann::json> validated_records(const std::string& machine, const std::string& kind = "") const;
    long long record_count() const;
    // Probe records (fftune probe, core/run/probe.hpp) of `machine` (all when empty):
    // ok, and for exchanges validated. Empty for a version 1 file opened read-only.
    std::vector<nlohmann::json> probe_records(const std::string& machine) const;
    long long probe_count() const;
    int schema_version() const { return version_; }
    const std::string& path() const { return path_; }

private:
    const char* ranks_per_node_column() const;
    sqlite3* db_ = nullptr;
    std::string path_;
    int version_ = 0;
};

// The lines an ingest did not store, one per refused line (`FILE:LINE: not
// stored: REASON`, at most `limit`, then how many more), and one for the
// records that were not validated, with their count.
std::vector<std::string> ingest_notes(const IngestStats& stats, std::size_t limit = 20);
// One line: files, lines, added, already present, not stored (by reason), and
// the database's record counts afterwards.
std::string ingest_summary(const Database& db, const IngestStats& stats);
// Why an ingest that read nothing usable fails (empty when it read something).
std::string ingest_failure(const IngestStats& stats);

// Winner of a problem from its measurements (sorted by median on return).
std::optional<Winner> pick_winner(const nlohmann::json& problem, std::vector<Measurement> ms);

// Software validator of a record: hash of fftune version, MPI library, FFT and
// GPU library versions. A change means older measurements are stale.
std::string software_validator(const nlohmann::json& record);

// $FFTUNE_DB, else $XDG_DATA_HOME/fftune/tuning.sqlite, else ~/.local/share/fftune/tuning.sqlite.
std::string default_database_path();

}  // namespace fftune
