// fftune command-line interface.
//   fftune run TESTCASE.json [--out DIR] [--launcher CMD] [--launcher-arg ARG]...
//   fftune list            registered variants (backends, decompositions, redistributions)
//   fftune jobs slurm|status|resubmit, fftune init-site   SLURM job arrays (jobs/README.md)
//   fftune probe [--ranks 1,2,4] [--out F.jsonl] [--db PATH]   cost-model microbenchmarks (core/run/probe.hpp)
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>

#include "core/platform/backend.hpp"
#include "core/engine/decomposition.hpp"
#include "core/platform/device_fault.hpp"
#include "core/platform/job_process.hpp"
#include "core/platform/log.hpp"
#include "core/run/family.hpp"
#include "core/run/probe.hpp"
#include "core/run/resume.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/run/runner.hpp"
#include "core/platform/settings.hpp"
#include "core/run/testcase.hpp"
#include "core/engine/transport.hpp"
#include "jobs/cluster_profile.hpp"
#include "jobs/slurm_arrays.hpp"
#ifdef FFTUNE_HAVE_TUNER
#include "tuner/database.hpp"
#include "tuner/model.hpp"
#include "tuner/selector.hpp"
#include "tuner/strategies.hpp"
#endif

namespace {

// True when a launcher (mpirun, mpiexec, srun) started this process as an MPI rank.
bool under_launcher() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(var)) return true;
    return false;
}

// The points of a job-array task (--manifest/--task) still missing from its
// result file (a resubmitted task resumes). Rank 0 decides; all ranks get it.
std::vector<int> task_points_to_run(const fftune::Testcase& tc, const std::string& manifest, const std::string& task,
                                    const std::string& file, int size) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<int> only;
    std::string error;
    if (rank == 0) try {
            only = fftune::manifest_task_points(manifest, task, tc, size);
            for (const auto& r : fftune::read_records(file))
                if (r.contains("problem") && r["problem"].value("ranks", 0) == size)
                    std::erase(only, r.value("point_index", -1));
            // An earlier run of this task was ended by one of its ranks (a lost
            // device, a point past point_timeout_s) on its first point still
            // missing: record that point as failed, with the reason, and go on
            // after it, instead of running it again.
            if (const std::string note = fftune::take_job_end_note(file); !note.empty() && !only.empty()) {
                const auto rec = fftune::died_point_record(
                    tc.points(size)[only.front()],
                    fmt::format("the MPI job ended while running this point{}; this task resumed after it", note));
                fftune::append_record(file, rec);
                only.erase(only.begin());
            }
        } catch (const std::exception& e) {
            error = e.what();
        }
    if (auto err = fftune::agree_error(MPI_COMM_WORLD, error)) throw std::runtime_error(*err);
    int n = static_cast<int>(only.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    only.resize(n);
    MPI_Bcast(only.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
    return only;
}

#ifdef FFTUNE_HAVE_TUNER
// The problem `fftune best` asks about, from --problem, --ranks and the
// family's axis options (--size, --precision, ...): a size of one number is a
// cube; categories not given take the family's fallback. Throws
// std::invalid_argument naming the option and what is allowed.
nlohmann::json best_problem(const std::string& family_name, const std::map<std::string, std::vector<std::string>>& given,
                            CLI::App* best, int ranks, int ranks_per_node) {
    const auto& family = fftune::family_named(family_name);
    const auto axes = family.problem_axes();
    std::vector<std::string> names;
    for (const auto& a : axes) names.push_back("--" + a.name);
    for (const auto& [name, values] : given)
        if (best->count("--" + name) > 0 &&
            std::none_of(axes.begin(), axes.end(), [&](const auto& a) { return a.name == name; }))
            throw std::invalid_argument(fmt::format("--{} is not an axis of problem {} (its axes: {})", name, family_name,
                                                    fmt::join(names, ", ")));
    nlohmann::json problem{{"kind", family_name}, {"ranks", ranks}};
    if (ranks_per_node > 0) problem["ranks_per_node"] = ranks_per_node;
    for (const auto& a : axes) {
        const auto& v = given.at(a.name);
        const bool set = best->count("--" + a.name) > 0;
        if (a.role == fftune::ProblemAxis::Role::size) {
            if (!set) throw std::invalid_argument(fmt::format("--{} is required for problem {}", a.name, family_name));
            if (v.size() != 1 && static_cast<int>(v.size()) != a.dims)
                throw std::invalid_argument(fmt::format("--{} takes 1 or {} positive integers for problem {}, not {}",
                                                        a.name, a.dims, family_name, v.size()));
            nlohmann::json n = nlohmann::json::array();
            for (int i = 0; i < a.dims; ++i) {
                const std::string& text = v[v.size() == 1 ? 0 : i];
                char* end = nullptr;
                const long long x = std::strtoll(text.c_str(), &end, 10);
                if (end == text.c_str() || *end != '\0' || x < 1)
                    throw std::invalid_argument(
                        fmt::format("--{} {}: not a positive integer (allowed: 1 or {} of them)", a.name, text, a.dims));
                n.push_back(x);
            }
            problem[a.name] = n;
        } else {
            if (set && v.size() != 1)
                throw std::invalid_argument(fmt::format("--{} takes one value for problem {}, not {} ({}; allowed: one "
                                                        "of {})",
                                                        a.name, family_name, v.size(), fmt::join(v, " "),
                                                        fmt::join(a.values, ", ")));
            const std::string value = set ? v.front() : a.fallback;
            if (std::find(a.values.begin(), a.values.end(), value) == a.values.end())
                throw std::invalid_argument(fmt::format("--{} {}: unknown value for problem {} (allowed: {})", a.name,
                                                        value, family_name, fmt::join(a.values, ", ")));
            problem[a.name] = value;
        }
    }
    return problem;
}
#endif

int run_in_job(fftune::Testcase tc, const std::string& out_dir, int start_index, bool fresh,
               const std::vector<std::string>& argv, const std::string& selection_path,
               const std::string& manifest = {}, const std::string& task = {}) {
    if (under_launcher()) fftune::end_with_parent();  // no rank outlives its mpirun
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fftune::logging::set_rank(rank, size);
    int rc = 0;
    try {
        if (rank == 0) std::filesystem::create_directories(out_dir);
        MPI_Barrier(MPI_COMM_WORLD);
        const std::string file = (std::filesystem::path(out_dir) /
                                  fmt::format("{}-r{}.jsonl", fftune::sanitize_filename(tc.name), size)).string();
        if (tc.points(size).empty() && rank == 0)
            fftune::logging::warn(fmt::format("the testcase has no points for {} ranks (ranks: {})", size,
                                              fmt::join(tc.ranks, ", ")));
        std::vector<int> only;
        if (!selection_path.empty()) {
            const auto sel = fftune::load_point_selection(selection_path);
            tc.warmup = sel.warmup;
            tc.iterations = sel.iterations;
            if (auto it = sel.points.find(size); it != sel.points.end()) only = it->second;
        }
        const bool from_manifest = !manifest.empty();
        if (from_manifest) only = task_points_to_run(tc, manifest, task, file, size);
        // Not given (a run of its own, not a sweep's job): continue after the last stored record.
        if (start_index < 0)
            start_index = fresh || from_manifest || !selection_path.empty()
                              ? 0 : fftune::resume_index(MPI_COMM_WORLD, file, tc.points(size));
        failed = fftune::run_job(MPI_COMM_WORLD, tc, file, start_index, argv,
                                 selection_path.empty() && !from_manifest ? nullptr : &only, from_manifest);
        if (rank == 0 && std::getenv("FFTUNE_SWEEP_CHILD") == nullptr)
            std::cout << fftune::summarize_records(fftune::read_records(file)) << "\nResults: " << file << "\n";
        rc = failed > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        fftune::logging::error(e.what());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return rc;
}

// Probe inside one MPI job: rank 0 writes every record to `out` as it is measured.
int probe_in_job(const fftune::ProbeOptions& options, const std::string& out, int* rank_out) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);  // p2p_streams needs it
    int rank = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *rank_out = rank;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fftune::logging::set_rank(rank, size);
    try {
        std::ofstream file;
        if (rank == 0) {
            if (std::filesystem::path(out).has_parent_path())
                std::filesystem::create_directories(std::filesystem::path(out).parent_path());
            file.open(out, std::ios::trunc);
            if (!file) throw std::runtime_error("cannot write " + out);
        }
        fftune::set_device_fault_note(out);  // a probe past --timeout says so there (core/run/point_watchdog.hpp)
        failed = fftune::run_probe(MPI_COMM_WORLD, options,
                                   [&](const nlohmann::json& r) { file << r.dump() << '\n' << std::flush; });
    } catch (const std::exception& e) {
        fftune::logging::error(e.what());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"fftune: benchmark, validate and tune distributed 3D FFTs"};
    app.require_subcommand(1);
    bool verbose = false, quiet = false;
    app.add_flag("-v,--verbose", verbose, "more diagnostics (FFTUNE_LOG_LEVEL=debug)");
    app.add_flag("-q,--quiet", quiet, "warnings and errors only (FFTUNE_LOG_LEVEL=warn)")->excludes("--verbose");
    app.fallthrough();  // also after the subcommand: fftune run --quiet t.json
    std::vector<std::string> args(argv, argv + argc);

    auto* run = app.add_subcommand("run", "run a testcase: every point validated and timed per phase");
    std::string testcase, out_dir = "fftune-results", launcher;
    std::vector<std::string> launcher_args;
    int start_index = -1;
    bool no_launch = false, dry_run = false, fresh = false;
    run->add_option("testcase", testcase, "testcase JSON file")->required();
    run->add_option("--out", out_dir, "output directory (JSON lines per rank count, merged file)");
    run->add_option("--launcher", launcher, "MPI launcher (default: the testcase's, else mpirun)");
    run->add_option("--launcher-arg", launcher_args, "extra launcher argument, e.g. --launcher-arg=--bind-to=core")
        ->allow_extra_args(false);
    run->add_flag("--no-launch", no_launch, "run in this process (the points for its MPI world size)");
    run->add_option("--start-index", start_index, "skip the first N points (resume)")->group("");
    std::string selection_path;
    run->add_option("--select", selection_path, "run only the points of a point-selection file (tuner rounds)")->group("");
    run->add_flag("--dry-run", dry_run, "validate the testcase, print the point counts and exit");
    run->add_flag("--fresh", fresh,
                  "measure every point again: empty the result files of these rank counts first (by default a run "
                  "continues after the records already stored in --out)");
    std::vector<int> only_ranks;
    run->add_option("--ranks", only_ranks, "run only these rank counts of the testcase (e.g. --ranks 1,2)")
        ->delimiter(',');

    std::string manifest, task;
    run->add_option("--manifest", manifest, "job-array manifest (with --task; written by `fftune jobs slurm`)")->group("");
    run->add_option("--task", task, "ARRAY:INDEX: run the manifest points of this array task")->group("");

    auto* list = app.add_subcommand("list", "list the registered problem families and variants");
    auto* families = app.add_subcommand("families", "the problem families: what defines a problem and a configuration");
    bool families_json = false;
    families->add_flag("--json", families_json, "as JSON (plotting/report.py reads it)");

    auto* jobs = app.add_subcommand("jobs", "SLURM job arrays: generate and submit, status, resubmit (jobs/README.md)");
    jobs->require_subcommand(1);
    auto* jobs_slurm = jobs->add_subcommand("slurm", "write job arrays (one per resource shape) and a merge job for a testcase");
    std::string jobs_testcase, cluster_profile, jobs_dir, jobs_db;
    bool jobs_submit = false;
    jobs_slurm->add_option("testcase", jobs_testcase, "testcase JSON file")->required()->check(CLI::ExistingFile);
    jobs_slurm->add_option("--cluster", cluster_profile, "cluster profile JSON (fftune init-site writes one)")
        ->required()->check(CLI::ExistingFile);
    jobs_slurm->add_option("--out", jobs_dir, "job directory (scripts, manifest, results, logs)")->required();
    jobs_slurm->add_option("--db", jobs_db, "database the merge job ingests into (default: fftune's default location)");
    jobs_slurm->add_flag("--submit", jobs_submit, "submit with sbatch and print the job ids");
    auto* jobs_submit_dir = jobs->add_subcommand("submit", "submit a job directory written without --submit");
    jobs_submit_dir->add_option("dir", jobs_dir, "job directory")->required()->check(CLI::ExistingDirectory);
    auto* jobs_status = jobs->add_subcommand("status", "done / failed / running / pending per array task");
    bool status_json = false;
    for (auto* sub : {jobs_status}) sub->add_option("dir", jobs_dir, "job directory")->required()->check(CLI::ExistingDirectory);
    jobs_status->add_flag("--json", status_json, "one JSON object per task");
    auto* jobs_resubmit = jobs->add_subcommand("resubmit", "resubmit only the failed tasks, and a new merge job");
    bool resubmit_failed_flag = false;
    jobs_resubmit->add_option("dir", jobs_dir, "job directory")->required()->check(CLI::ExistingDirectory);
    jobs_resubmit->add_flag("--failed", resubmit_failed_flag, "the failed tasks (required: says what is resubmitted)")->required();
    auto* init_site = app.add_subcommand("init-site", "write a starting cluster profile from sinfo and scontrol");
    std::string site_out;
    bool site_force = false;
    init_site->add_option("--out", site_out, "profile file (default: <ClusterName>.json)");
    init_site->add_flag("--force", site_force, "overwrite an existing profile");
    auto* probe = app.add_subcommand("probe", "calibrate the cost model: MPI exchanges and batched FFTs per backend (JSON lines)");
    fftune::ProbeOptions probe_opts;
    probe_opts.argv = args;
    std::string probe_out = "fftune-probe.jsonl", probe_launcher = "mpirun";
    std::vector<int> probe_ranks;
    std::vector<std::string> probe_launcher_args;
    bool probe_no_launch = false;
    probe->add_option("--out", probe_out, "JSON-lines file for the probe records");
    probe->add_option("--ranks", probe_ranks, "world sizes, one MPI job each (default: 1, 2, 4, ... up to the cores)")
        ->delimiter(',');
    probe->add_option("--sizes", probe_opts.bytes_per_peer, "exchange bytes per peer (default 8 B to 16 MiB by factors of 8)");
    probe->add_option("--fft-sizes", probe_opts.fft_lengths, "1D transform lengths (default 4 to 4096 by factors of 2)");
    probe->add_option("--fft-points", probe_opts.fft_points, "points per batched transform call (default 2^20)");
    probe->add_option("--iterations", probe_opts.iterations, "timed iterations per probe (default 20)");
    probe->add_option("--warmup", probe_opts.warmup, "warm-up iterations per probe (default 5)");
    probe->add_option("--timeout", probe_opts.timeout_s,
                      "seconds one probe may run before its job is ended (default 600; 0: no limit)");
    probe->add_option("--backend", probe_opts.backends, "backends (default: every available one)")->delimiter(',');
    probe->add_option("--transport", probe_opts.transports, "redistribution methods (default: every one that applies)")
        ->delimiter(',');
    probe->add_option("--launcher", probe_launcher, "MPI launcher (default mpirun)");
    probe->add_option("--launcher-arg", probe_launcher_args, "extra launcher argument")->allow_extra_args(false);
    probe->add_flag("--no-launch", probe_no_launch, "probe in this process at its MPI world size");

#ifdef FFTUNE_HAVE_TUNER
    std::string db_path;
    auto* ingest = app.add_subcommand("ingest", "merge result JSON lines into the tuning database (idempotent)");
    std::vector<std::string> ingest_files;
    ingest->add_option("results", ingest_files, "JSON-lines result files")->required()->check(CLI::ExistingFile);
    auto* best = app.add_subcommand("best", "the best plan for a problem on this machine, from the tuning database");
    std::string best_family = "fft3d";
    int best_ranks = 1, best_ranks_per_node = 0;
    bool best_json = false;
    std::optional<double> best_max_error;
    best->add_option("--problem", best_family, "problem family (fftune families)")
        ->check(CLI::IsMember(fftune::Registry<fftune::Family>::instance().names()));
    best->add_option("--ranks", best_ranks, "MPI ranks")->required()->check(CLI::PositiveNumber);
    best->add_option("--ranks-per-node", best_ranks_per_node,
                     "most ranks on one node (default: any; measurements at other counts answer as nearest)")
        ->check(CLI::PositiveNumber);
    best->add_option("--max-error", best_max_error, "only configurations whose measured error is at most this")
        ->check(CLI::Validator(
            [](std::string& v) {
                char* end = nullptr;
                const double e = std::strtod(v.c_str(), &end);
                return end == v.c_str() || *end != '\0' ? v + " is not a number (allowed: a finite number >= 0)"
                                                           : fftune::check_max_error(e);
            },
            "finite >= 0"));
    best->add_flag("--json", best_json, "print the answer as JSON");
    // One option per problem axis of every family (--size, --precision, ...):
    // the chosen family's are checked after parsing.
    std::map<std::string, std::vector<std::string>> best_axes;
    for (const auto& name : fftune::Registry<fftune::Family>::instance().names())
        for (const auto& axis : fftune::family_named(name).problem_axes()) {
            if (best_axes.contains(axis.name)) continue;
            auto* opt = best->add_option("--" + axis.name, best_axes[axis.name], axis.help + " (" + name + ")");
            if (axis.role == fftune::ProblemAxis::Role::size) opt->expected(1, axis.dims);
        }
    auto* winners = app.add_subcommand("winners", "best and runner-up per problem with a verdict from the 99% CIs");
    auto* tune = app.add_subcommand("tune", "run a testcase (every point) and ingest its results");
    std::string tune_testcase, tune_out = "fftune-results", strategy = "exhaustive";
    tune->add_option("testcase", tune_testcase, "testcase JSON file")->required();
    tune->add_option("--out", tune_out, "directory for the result files");
    tune->add_option("--strategy", strategy, "exhaustive, phase (pencil phases one at a time) or halving (successive halving)")
        ->check(CLI::IsMember({"exhaustive", "phase", "halving"}));
    std::string compare_file;
    tune->add_option("--compare", compare_file, "exhaustive results to judge the picks against")->check(CLI::ExistingFile);
    auto* report = app.add_subcommand("report", "figures and a Markdown report (plotting/report.py) from the database or result files");
    std::vector<std::string> report_files;
    std::string report_out, report_title = "fftune report";
    report->add_option("results", report_files, "JSON-lines result files (instead of the database)");
    report->add_option("--out", report_out, "output directory")->required();
    report->add_option("--title", report_title, "report title");
    std::optional<double> hbm_gbps, link_gbps;
    const CLI::Validator positive_gbps(
        [](std::string& v) -> std::string {
            char* end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            return end != v.c_str() && *end == '\0' && d > 0 ? "" : "must be a positive bandwidth in GB/s, not " + v;
        },
        "GB/s > 0");
    report->add_option("--hbm-gbps", hbm_gbps, "device memory bandwidth for the floors, GB/s (default: measured in the records)")
        ->check(positive_gbps);
    report->add_option("--link-gbps", link_gbps, "bandwidth between ranks for the floors, GB/s per direction (default: measured by exchange probes given with the results)")
        ->check(positive_gbps);
    auto* model = app.add_subcommand("model", "fit the alpha-beta cost model to the database and check it (leave one problem out)");
    std::string machine;
    // What was stored, and why lines were not (tuner/database.hpp); false when nothing usable was read.
    auto print_ingest = [&](const fftune::Database& db, const fftune::IngestStats& st) {
        for (const auto& note : fftune::ingest_notes(st)) fftune::logging::warn(note);
        std::cout << fftune::ingest_summary(db, st) << "\n";
        if (const auto why = fftune::ingest_failure(st); !why.empty()) fftune::logging::error(why);
        return st.usable();
    };
    for (auto* sub : {ingest, best, winners, tune, report, model, probe})
        sub->add_option("--db", db_path, "tuning database (default: $FFTUNE_DB or ~/.local/share/fftune/tuning.sqlite)");
    for (auto* sub : {best, winners, report, model}) sub->add_option("--machine", machine, "machine fingerprint (default: this machine; report: all)");
#endif

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);  // prints help or the error
        return rc == 0 ? 0 : 2;      // bad command lines exit 2, like bad testcases
    }
    try {
        fftune::logging::set_level(fftune::logging::level_from_environment());
    } catch (const std::invalid_argument& e) {
        fftune::logging::error(e.what());
        return 2;
    }
    if (verbose || quiet) {
        // Jobs this process launches inherit the level through the environment.
        fftune::logging::set_level(verbose ? fftune::logging::Level::debug : fftune::logging::Level::warn);
        setenv("FFTUNE_LOG_LEVEL", fftune::logging::to_string(fftune::logging::level()).c_str(), 1);
    }
    // Settings from the environment (core/platform/settings.hpp), refused before any work.
    bool transforms = run->parsed() || probe->parsed();
#ifdef FFTUNE_HAVE_TUNER
    transforms = transforms || tune->parsed();
#endif
    if (transforms) try {
            fftune::check_settings();
        } catch (const std::invalid_argument& e) {
            fftune::logging::error(e.what());
            return 2;
        }

    if (probe->parsed()) {
        // Bad options exit 2 before anything runs.
        if (probe_opts.bytes_per_peer.empty()) probe_opts.bytes_per_peer = fftune::default_probe_bytes();
        if (probe_opts.fft_lengths.empty()) probe_opts.fft_lengths = fftune::default_probe_fft_lengths();
        if (const auto why = fftune::check_probe_options(probe_opts); !why.empty()) {
            fftune::logging::error("probe: " + why);
            return 2;
        }
        for (int r : probe_ranks)
            if (r < 1) {
                fftune::logging::error(fmt::format("probe: --ranks {}: world sizes must be 1 or more", r));
                return 2;
            }
        std::string ingest_into;
#ifdef FFTUNE_HAVE_TUNER
        if (probe->count("--db") > 0) ingest_into = db_path;
#endif
        const bool in_job = probe_no_launch || under_launcher();
        if (in_job && !probe_ranks.empty()) {
            fftune::logging::error("probe: --ranks launches one job per world size; under a launcher (or with "
                                   "--no-launch) the probe runs at the job's own size");
            return 2;
        }
        int rc = 0;
        if (in_job) {
            int rank = 0;
            rc = probe_in_job(probe_opts, probe_out, &rank);
            if (rank != 0) return rc;  // rank 0 wrote the file and ingests it
        } else {
            // Parent mode: one MPI job per world size, parts merged into --out.
            if (probe_ranks.empty())
                for (unsigned r = 1; r <= std::max(2u, std::thread::hardware_concurrency()); r *= 2) probe_ranks.push_back(r);
            auto join = [](const auto& v) { return fmt::format("{}", fmt::join(v, ",")); };
            std::vector<std::string> parts;
            for (int r : probe_ranks) {
                const std::string part = fmt::format("{}.r{}", probe_out, r);
                std::vector<std::string> child{"probe", "--no-launch", "--out", part, "--sizes"};
                for (auto m : probe_opts.bytes_per_peer) child.push_back(std::to_string(m));
                child.push_back("--fft-sizes");
                for (auto n : probe_opts.fft_lengths) child.push_back(std::to_string(n));
                child.insert(child.end(), {"--fft-points", std::to_string(probe_opts.fft_points), "--iterations",
                                           std::to_string(probe_opts.iterations), "--warmup", std::to_string(probe_opts.warmup),
                                           "--timeout", fmt::format("{}", probe_opts.timeout_s)});
                if (!probe_opts.backends.empty()) child.insert(child.end(), {"--backend", join(probe_opts.backends)});
                if (!probe_opts.transports.empty()) child.insert(child.end(), {"--transport", join(probe_opts.transports)});
                fftune::logging::info(fmt::format("probe: {} ranks", r));
                (void)fftune::take_job_end_note(part);  // an earlier run's
                try {
                    if (const int job = fftune::launch_self(probe_launcher, r, probe_launcher_args, child); job != 0) {
                        fftune::logging::error(fmt::format("probe: the {}-rank job exited with status {}{}", r, job,
                                                           fftune::take_job_end_note(part)));
                        rc = 1;
                    }
                } catch (const std::exception& e) {
                    fftune::logging::error(std::string("probe: ") + e.what());
                    return 1;
                }
                parts.push_back(part);
            }
            std::ofstream all(probe_out, std::ios::trunc);
            int records = 0, failed = 0;
            for (const auto& part : parts) {
                for (const auto& r : fftune::read_records(part)) {
                    all << r.dump() << '\n';
                    ++records;
                    failed += r.value("status", "") != "ok";
                }
                std::filesystem::remove(part);
            }
            std::cout << fmt::format("probe: {} records ({} failed) at {} ranks: {}\n", records, failed, join(probe_ranks), probe_out);
        }
#ifdef FFTUNE_HAVE_TUNER
        if (!ingest_into.empty()) {
            try {
                fftune::Database db(ingest_into, false);
                if (!print_ingest(db, db.ingest({probe_out}))) rc = 1;
            } catch (const std::exception& e) {
                fftune::logging::error(e.what());
                return 1;
            }
        }
#endif
        return rc;
    }

#ifdef FFTUNE_HAVE_TUNER
    if (db_path.empty()) db_path = fftune::default_database_path();
    try {
        if (ingest->parsed()) {
            fftune::Database db(db_path, false);
            return print_ingest(db, db.ingest(ingest_files)) ? 0 : 1;
        }
        if (best->parsed()) {
            if (best_ranks_per_node > best_ranks) {
                fftune::logging::error(fmt::format("--ranks-per-node {} exceeds --ranks {} (allowed: 1 to {})",
                                                   best_ranks_per_node, best_ranks, best_ranks));
                return 2;
            }
            nlohmann::json problem;
            try {
                problem = best_problem(best_family, best_axes, best, best_ranks, best_ranks_per_node);
            } catch (const std::invalid_argument& e) {
                fftune::logging::error(std::string("best: ") + e.what());
                return 2;
            }
            int initialized = 0;
            MPI_Initialized(&initialized);
            if (!initialized) MPI_Init(nullptr, nullptr);  // provenance asks MPI for its version
            const auto s = fftune::select(problem, {db_path, machine, best_max_error});
            if (best_json) std::cout << nlohmann::json(s).dump(2) << "\n";
            else
                std::cout << fmt::format("{}  [{}]  {}{}\n", s.key, s.rung, s.reason,
                                         s.expected_ms ? fmt::format("; expected {:.4g} ms", *s.expected_ms) : "");
            MPI_Finalize();
            return 0;
        }
        if (winners->parsed()) {
            fftune::Database db(db_path, true);
            std::string family;  // one table per family, each with its problem columns
            std::map<std::string, int> not_built;
            for (const auto& p : db.problems(machine)) {
                const auto w = fftune::pick_winner(p, db.measurements(p, machine));
                if (!w) continue;
                const std::string kind = p.at("kind").get<std::string>();
                if (!fftune::Registry<fftune::Family>::instance().contains(kind)) {
                    ++not_built[kind];  // ingested by a build with more families
                    continue;
                }
                const auto& f = fftune::family_named(kind);
                if (f.name() != family) {
                    std::cout << (family.empty() ? "" : "\n")
                              << fmt::format("{}\n{:>5} {:>5} {}  {:>10}  {:<50} {:>8}  {}\n", f.name(), "ranks",
                                             "/node", f.problem_header(), "best ms", "best configuration", "margin",
                                             "verdict (runner-up)");
                    family = f.name();
                }
                const int per_node = p.value("ranks_per_node", 0);
                std::cout << fmt::format("{:>5} {:>5} {}  {:>10.4g}  {:<50} {:>7.1f}%  {}{}\n", p.at("ranks").get<int>(),
                                         per_node > 0 ? std::to_string(per_node) : "?", f.problem_label(p),
                                         w->best.median_ms, w->best.key, 100 * w->margin, w->verdict,
                                         w->runner_up ? " (" + w->runner_up->key + ")" : "");
            }
            for (const auto& [kind, n] : not_built)
                std::cout << fmt::format("\n{}: {} problems of a family this fftune is not built with\n", kind, n);
            return 0;
        }
        if (model->parsed()) {
            fftune::Database db(db_path, true);
            const auto records = db.validated_records(machine);
            const auto probes = db.probe_records(machine);
            std::cout << fftune::CostModel::fit(records, probes).describe();
            // Leave one problem out, from sweep fits alone and with the probe calibrations first.
            std::cout << fftune::model_accuracy(records);
            if (!probes.empty()) std::cout << fftune::model_accuracy(records, probes);
            return 0;
        }
        if (report->parsed()) {
            // The plots are Python (matplotlib): hand over to plotting/report.py.
            const char* dir = std::getenv("FFTUNE_PLOTTING_DIR");
            const std::string script = std::string(dir ? dir : FFTUNE_PLOTTING_DIR) + "/report.py";
            // What defines each family's problems and configurations, for the report's sections.
            std::filesystem::create_directories(report_out);
            const std::string families_file = (std::filesystem::path(report_out) / "families.json").string();
            nlohmann::json described = nlohmann::json::array();
            for (const auto& name : fftune::Registry<fftune::Family>::instance().names())
                described.push_back(fftune::describe(fftune::family_named(name)));
            std::ofstream(families_file) << described.dump(2) << "\n";
            std::vector<std::string> args{"python3", script, "--out", report_out, "--title", report_title,
                                          "--families", families_file};
            if (report_files.empty()) args.insert(args.end(), {"--db", db_path});
            if (!machine.empty()) args.insert(args.end(), {"--machine", machine});
            if (hbm_gbps) args.insert(args.end(), {"--hbm-gbps", fmt::format("{}", *hbm_gbps)});
            if (link_gbps) args.insert(args.end(), {"--link-gbps", fmt::format("{}", *link_gbps)});
            args.insert(args.end(), report_files.begin(), report_files.end());
            std::vector<char*> cargs;
            for (auto& a : args) cargs.push_back(a.data());
            cargs.push_back(nullptr);
            execvp("python3", cargs.data());
            fftune::logging::error("cannot run python3 " + script + ": " + std::strerror(errno));
            return 1;
        }
        if (tune->parsed()) {
            const auto tc = fftune::load_testcase(tune_testcase);
            fftune::check_tunable(tc, tune_testcase);
            // Opened, and checked, before the sweep: a database it cannot write fails now, not after it.
            fftune::Database db(db_path, false);
            setenv("FFTUNE_SWEEP_CHILD", "1", 1);
            const auto result = fftune::tune(tc, tune_testcase, tune_out, strategy);
            std::vector<std::string> files;
            for (int k = 0; k < result.rounds; ++k)
                files.push_back((std::filesystem::path(tune_out) / fmt::format("round{}", k) /
                                 (fftune::sanitize_filename(tc.name) + ".jsonl")).string());
            const auto st = db.ingest(files);
            for (const auto& note : fftune::ingest_notes(st)) fftune::logging::warn(note);
            std::cout << fmt::format("{}: {} rounds, {} points measured, {} problems picked\n", strategy, result.rounds,
                                     result.points_measured, result.picks.size());
            std::cout << fmt::format("{}: {} added, {} already present; {} records\n", db_path, st.added, st.duplicates,
                                     db.record_count());
            if (!compare_file.empty())
                std::cout << fftune::compare_with_exhaustive(result, fftune::read_records(compare_file));
            int failed = 0;
            for (const auto& r : result.records) failed += r.value("status", "") == "failed";
            return failed > 0 ? 1 : 0;
        }
    } catch (const fftune::TestcaseError& e) {
        fftune::logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    } catch (const std::exception& e) {
        fftune::logging::error(e.what());
        return 1;
    }
#endif

    try {
        if (jobs_slurm->parsed()) {
            const auto tc = fftune::load_testcase(jobs_testcase);
            const auto profile = fftune::load_cluster_profile(cluster_profile);
            const auto arrays = fftune::write_job_dir(tc, profile, {jobs_testcase, jobs_dir, jobs_db});
            std::size_t tasks = 0;
            for (const auto& a : arrays) {
                tasks += a.tasks.size();
                std::cout << fmt::format("array {}: {} tasks\n", a.name, a.tasks.size());
            }
            std::cout << fmt::format("{} arrays, {} tasks written to {}\n", arrays.size(), tasks, jobs_dir);
            if (jobs_submit) std::cout << fftune::submit_job_dir(std::filesystem::weakly_canonical(
                                 std::filesystem::absolute(jobs_dir)).string());
            return 0;
        }
        if (jobs_submit_dir->parsed()) {
            std::cout << fftune::submit_job_dir(jobs_dir);
            return 0;
        }
        if (jobs_status->parsed()) {
            const auto states = fftune::job_dir_status(jobs_dir);
            if (status_json)
                for (const auto& s : states)
                    std::cout << nlohmann::json{{"array", s.array}, {"task", s.task}, {"state", s.state},
                                                {"detail", s.detail}, {"points", s.points}, {"recorded", s.recorded},
                                                {"failed_points", s.failed_points}}.dump()
                              << "\n";
            else
                std::cout << fftune::format_status(states, jobs_dir);
            return 0;
        }
        if (jobs_resubmit->parsed()) {
            std::cout << fftune::resubmit_failed(jobs_dir);
            return 0;
        }
        if (init_site->parsed()) {
            const auto profile = fftune::profile_from_this_slurm();
            if (site_out.empty()) site_out = fftune::sanitize_filename(profile.name) + ".json";
            if (std::filesystem::exists(site_out) && !site_force) {
                fftune::logging::error(site_out + " exists (use --force to overwrite)");
                return 2;
            }
            std::ofstream(site_out) << fftune::to_json(profile).dump(2) << "\n";
            std::cout << fmt::format("{}: partition {} ({} nodes, {} CPUs and {} GPUs per node), MaxArraySize {}, launcher {}\n"
                                     "Check account, qos, modules and binding before the first submission.\n",
                                     site_out, profile.partition, profile.target().nodes, profile.target().cpus_per_node,
                                     profile.target().gpus_per_node, profile.max_array_size, profile.launcher);
            return 0;
        }
    } catch (const fftune::TestcaseError& e) {
        fftune::logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    } catch (const fftune::ProfileError& e) {
        fftune::logging::error(e.what());
        return 2;
    } catch (const std::exception& e) {
        fftune::logging::error(e.what());
        return 1;
    }

    if (list->parsed()) {
        std::cout << "problem: " << fftune::Registry<fftune::Family>::instance().joined_names() << "\n"
                  << "backend: " << fftune::Registry<fftune::Backend>::instance().joined_names() << "\n"
                  << "decomposition: " << fftune::Registry<fftune::Decomposition>::instance().joined_names() << "\n"
                  << "redistribution: " << fftune::Registry<fftune::Transport>::instance().joined_names() << "\n";
        return 0;
    }
    if (families->parsed()) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& name : fftune::Registry<fftune::Family>::instance().names()) {
            const auto& f = fftune::family_named(name);
            if (families_json) all.push_back(fftune::describe(f));
            else std::cout << fmt::format("{}: {}\n", name, f.summary());
        }
        if (families_json) std::cout << all.dump(2) << "\n";
        return 0;
    }

    fftune::Testcase tc;
    try {
        tc = fftune::load_testcase(testcase);
    } catch (const std::exception& e) {
        fftune::logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    }
    const std::vector<int> testcase_ranks = tc.ranks;  // the merged file keeps them all
    if (!only_ranks.empty()) {
        for (int r : only_ranks)
            if (std::find(tc.ranks.begin(), tc.ranks.end(), r) == tc.ranks.end()) {
                fftune::logging::error(fmt::format("--ranks {} is not among the testcase's ranks ({})", r,
                                                   fmt::join(tc.ranks, ", ")));
                return 2;
            }
        tc.ranks = only_ranks;
    }
    if (dry_run) {
        std::size_t total = 0;
        for (int r : tc.ranks) {
            const auto n = tc.points(r).size();
            total += n;
            std::cout << fmt::format("{} ranks: {} points\n", r, n);
        }
        std::cout << fmt::format("total: {} points\n", total);
        return 0;
    }
    if (manifest.empty() != task.empty()) {
        fftune::logging::error("--manifest and --task go together");
        return 2;
    }
    if (no_launch || under_launcher())
        return run_in_job(tc, out_dir, start_index, fresh, args, selection_path, manifest, task);
    try {
        setenv("FFTUNE_SWEEP_CHILD", "1", 1);
        return fftune::run_sweep(tc, {testcase, out_dir, launcher, launcher_args, selection_path, !fresh, testcase_ranks});
    } catch (const std::exception& e) {
        fftune::logging::error(e.what());
        return 1;
    }
}
