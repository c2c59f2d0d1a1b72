// Runs testcase points inside one MPI job (all ranks call), and sweeps over rank
// counts by launching one MPI job per count (parent mode).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/run/testcase.hpp"

namespace fftune {

struct RunOptions {
    int warmup = 10;
    int iterations = 20;
    bool validate = true;
    std::vector<std::string> argv;  // for provenance
    int ranks_per_node = 0;         // of the job (run_job asks once); 0: run_point asks the communicator
    // The job's next point (run_job), or none: a workload may keep what that
    // point will want (Workload::end) and let go of the rest in this point.
    const Point* next = nullptr;
    // The job's start-up (core/run/job_start.hpp), copied into the record as "job".
    nlohmann::json job;
};

// Collective over `comm`. Never throws for a failing configuration: the
// record's status says ok, skipped or failed. Every rank returns the record.
nlohmann::json run_point(MPI_Comm comm, const Point& point, const RunOptions& options,
                         const nlohmann::json& machine);

// Runs the testcase's points for this job's world size from `start_index` on,
// appending one JSON line per point to `out_file` (rank 0 holds it as a
// RecordFile: each record stored whole before its progress line is printed).
// Returns the number of failed points. A record that cannot be stored ends
// the job with job_status_store_failed, the file ending after its last whole record.
// `only`, when given, lists the point indices to run (sorted); others are skipped.
// The file is appended to when start_index > 0 or `append` (resumed jobs).
// With `deadline_unix_ms` > 0 (a tuning budget) no point starts after that
// wall-clock time: the job stops and leaves budget_spent_path(out_file).
int run_job(MPI_Comm comm, const Testcase& tc, const std::string& out_file, int start_index,
            const std::vector<std::string>& argv, const std::vector<int>* only = nullptr, bool append = false,
            long long deadline_unix_ms = 0);
// Milliseconds since the Unix epoch, the clock of a selection's deadline.
long long unix_ms_now();

// A subset of a testcase's points, with its own iteration counts: what the
// tuner's search strategies run in each round. JSON file:
//   {"points": {"<ranks>": [index, ...]}, "warmup": W, "iterations": N[, "deadline_unix_ms": T]}
struct PointSelection {
    std::map<int, std::vector<int>> points;  // by rank count, sorted
    int warmup = 0, iterations = 1;
    long long deadline_unix_ms = 0;  // > 0: no point starts after it (fftune tune --budget)
    bool validate = true;            // false: a screening round (fftune tune --strategy screen) skips validation
};
PointSelection load_point_selection(const std::string& path);
void save_point_selection(const PointSelection& s, const std::string& path);

// Parent mode: one launcher job per rank count, merged into OUT/<name>.jsonl;
// returns the process exit code (0; 1: failed points, or the sweep stopped;
// 128 + signal when interrupted). The sweep owns OUT while it runs
// (FolderLock: a second one is refused). With `resume`, each rank count's
// result file is continued after its last stored record (checked to be of
// this testcase first: core/run/resume.hpp); without, it is emptied first.
// A job that dies is resumed after the point it died on, which is recorded as
// failed; a job that fails before its first point (the launcher cannot
// start, or refuses) stops the sweep with the launcher's message, as do a
// record that cannot be stored and SIGINT, SIGTERM or SIGHUP (forwarded to
// the job). The merged file holds every stored record of `merge_ranks` (all
// the testcase's rank counts, also those not run now), and is replaced whole.
struct SweepOptions {
    std::string testcase_path;
    std::string out_dir;
    std::string launcher;               // overrides the testcase's when not empty
    std::vector<std::string> launcher_args;  // appended to the testcase's
    std::string selection_path;              // a PointSelection file, or empty for every point
    bool resume = false;                     // continue the result files (fftune run's default; --fresh: false)
    std::vector<int> merge_ranks;            // rank counts whose results the merged file holds (empty: tc.ranks)
};
int run_sweep(const Testcase& tc, const SweepOptions& options);

// The exit status of a job whose rank 0 could not store a record
// (RecordWriteError, core/records/record_file.hpp): the sweep stops.
constexpr int job_status_store_failed = 74;  // EX_IOERR

// As root, with Open MPI as the launcher: sets OMPI_ALLOW_RUN_AS_ROOT and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM for the jobs where the user has not, and says
// so once (job_command calls it). True when it set them.
bool allow_open_mpi_as_root();
// The launcher command of one MPI job of `ranks` processes running this executable with `args`:
//   launcher -n ranks [--oversubscribe] [--bind-to none] extra... /proc/self/exe args...
// (--oversubscribe for Open MPI when ranks exceed the cores).
std::vector<std::string> job_command(const std::string& launcher, int ranks, const std::vector<std::string>& extra,
                                     const std::vector<std::string>& args);
// Runs job_command(...) supervised (core/platform/job_process.hpp) and
// returns its exit status, 128 + signal when it was killed. Used by `fftune probe`.
int launch_self(const std::string& launcher, int ranks, const std::vector<std::string>& extra,
                const std::vector<std::string>& args);

// Beside a result file while a job runs its points: rank 0 makes it once the
// job holds the file, and removes it when the job ends normally. A job that
// ends without having made it failed before its first point.
std::string job_started_path(const std::string& result_file);
// Beside a result file: the job stopped at its selection's deadline (the
// tuning budget) with points left; the sweep starts no further job.
std::string budget_spent_path(const std::string& result_file);

// The failed record of a point whose MPI job ended while running it (it
// wrote none itself), with `error` saying so.
nlohmann::json died_point_record(const Point& point, const std::string& error);
// Appends `record` as one line to the result file `path` (RecordFile: whole
// or not at all, after cutting off a torn last line; RecordWriteError names the file).
void append_record(const std::string& path, const nlohmann::json& record);

// Human-readable summary of records (status counts, best plan per problem,
// skip reasons tallied, failures); core/run/summary.cpp.
std::string summarize_records(const std::vector<nlohmann::json>& records);
// A skip reason with its numbers replaced by N and the "rank K: " prefix dropped:
// points skipped for one cause share it.
std::string skip_reason_kind(const std::string& reason);
// "Skipped, by reason" lines of the summary (the most frequent first), or "".
std::string skip_tally(const std::vector<nlohmann::json>& records);
// The records of a result file, plain or gzip-compressed (core/records/json_lines.hpp);
// none when it does not exist, and a torn line is dropped.
std::vector<nlohmann::json> read_records(const std::string& path);

}  // namespace fftune
