// fftune run TESTCASE.json [--out DIR] [--launcher CMD] [--launcher-arg ARG]...
// In the parent, one MPI job per rank count (run_sweep); in a job, the points of its world size.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "core/platform/device_fault.hpp"
#include "core/platform/job_process.hpp"
#include "core/platform/log.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/records/provenance.hpp"
#include "core/run/resume.hpp"
#include "core/run/runner.hpp"
#include "core/run/testcase.hpp"
#include "jobs/slurm_arrays.hpp"

namespace fftune::cli {
namespace {

struct RunOptions {
    Argv argv;
    std::string testcase, out_dir = "fftune-results", launcher;
    std::vector<std::string> launcher_args;
    int start_index = -1;
    bool no_launch = false, dry_run = false, fresh = false;
    std::string selection_path;
    std::vector<int> only_ranks;
    std::string manifest, task;
};

// The points of a job-array task (--manifest/--task) still missing from its
// result file (a resubmitted task resumes). Rank 0 decides; all ranks get it.
std::vector<int> task_points_to_run(const Testcase& tc, const std::string& manifest, const std::string& task,
                                    const std::string& file, int size) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<int> only;
    std::string error;
    if (rank == 0) try {
            only = manifest_task_points(manifest, task, tc, size);
            for (const auto& r : read_records(file))
                if (r.contains("problem") && r["problem"].value("ranks", 0) == size)
                    std::erase(only, r.value("point_index", -1));
            // An earlier run of this task was ended by one of its ranks (a lost
            // device, a point past point_timeout_s) on its first point still
            // missing: record that point as failed, with the reason, and go on
            // after it, instead of running it again.
            if (const std::string note = take_job_end_note(file); !note.empty() && !only.empty()) {
                const auto rec = died_point_record(
                    tc.points(size)[only.front()],
                    fmt::format("the MPI job ended while running this point{}; this task resumed after it", note));
                append_record(file, rec);
                only.erase(only.begin());
            }
        } catch (const std::exception& e) {
            error = e.what();
        }
    if (auto err = agree_error(MPI_COMM_WORLD, error)) throw std::runtime_error(*err);
    int n = static_cast<int>(only.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    only.resize(n);
    MPI_Bcast(only.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
    return only;
}

int run_in_job(Testcase tc, const RunOptions& o) {
    if (under_launcher()) end_with_parent();  // no rank outlives its mpirun
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    logging::set_rank(rank, size);
    int rc = 0;
    int start_index = o.start_index;
    try {
        if (rank == 0) std::filesystem::create_directories(o.out_dir);
        MPI_Barrier(MPI_COMM_WORLD);
        const std::string file =
            (std::filesystem::path(o.out_dir) / fmt::format("{}-r{}.jsonl", sanitize_filename(tc.name), size)).string();
        if (tc.points(size).empty() && rank == 0)
            logging::warn(fmt::format("the testcase has no points for {} ranks (ranks: {})", size,
                                      fmt::join(tc.ranks, ", ")));
        std::vector<int> only;
        long long deadline = 0;
        if (!o.selection_path.empty()) {
            const auto sel = load_point_selection(o.selection_path);
            tc.warmup = sel.warmup;
            tc.iterations = sel.iterations;
            tc.validate = tc.validate && sel.validate;
            deadline = sel.deadline_unix_ms;
            if (auto it = sel.points.find(size); it != sel.points.end()) only = it->second;
        }
        const bool from_manifest = !o.manifest.empty();
        if (from_manifest) only = task_points_to_run(tc, o.manifest, o.task, file, size);
        // Not given (a run of its own, not a sweep's job): continue after the last stored record.
        if (start_index < 0)
            start_index = o.fresh || from_manifest || !o.selection_path.empty()
                              ? 0 : resume_index(MPI_COMM_WORLD, file, tc.points(size));
        failed = run_job(MPI_COMM_WORLD, tc, file, start_index, o.argv,
                         o.selection_path.empty() && !from_manifest ? nullptr : &only, from_manifest, deadline);
        if (rank == 0 && std::getenv("FFTUNE_SWEEP_CHILD") == nullptr)
            std::cout << summarize_records(read_records(file)) << "\nResults: " << file << "\n";
        rc = failed > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        logging::error(e.what());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return rc;
}

int run_testcase(const RunOptions& o) {
    Testcase tc;
    try {
        tc = load_testcase(o.testcase);
    } catch (const std::exception& e) {
        logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    }
    const std::vector<int> testcase_ranks = tc.ranks;  // the merged file keeps them all
    if (!o.only_ranks.empty()) {
        for (int r : o.only_ranks)
            if (std::find(tc.ranks.begin(), tc.ranks.end(), r) == tc.ranks.end()) {
                logging::error(fmt::format("--ranks {} is not among the testcase's ranks ({})", r,
                                           fmt::join(tc.ranks, ", ")));
                return 2;
            }
        tc.ranks = o.only_ranks;
    }
    if (o.dry_run) {
        std::size_t total = 0;
        for (int r : tc.ranks) {
            const auto n = tc.points(r).size();
            total += n;
            std::cout << fmt::format("{} ranks: {} points\n", r, n);
        }
        std::cout << fmt::format("total: {} points\n", total);
        return 0;
    }
    if (o.manifest.empty() != o.task.empty()) {
        logging::error("--manifest and --task go together");
        return 2;
    }
    if (o.no_launch || under_launcher()) return run_in_job(tc, o);
    try {
        setenv("FFTUNE_SWEEP_CHILD", "1", 1);
        return run_sweep(tc, {o.testcase, o.out_dir, o.launcher, o.launcher_args, o.selection_path, !o.fresh,
                              testcase_ranks});
    } catch (const std::exception& e) {
        logging::error(e.what());
        return 1;
    }
}

}  // namespace

void add_run(CLI::App& app, const Argv& argv, Commands& commands) {
    auto o = std::make_shared<RunOptions>();
    o->argv = argv;
    auto* run_app = app.add_subcommand("run", "run a testcase: every point validated and timed per phase");
    run_app->add_option("testcase", o->testcase, "testcase JSON file")->required();
    run_app->add_option("--out", o->out_dir, "output directory (JSON lines per rank count, merged file)");
    run_app->add_option("--launcher", o->launcher, "MPI launcher (default: the testcase's, else mpirun)");
    run_app->add_option("--launcher-arg", o->launcher_args, "extra launcher argument, e.g. --launcher-arg=--bind-to=core")
        ->allow_extra_args(false);
    run_app->add_flag("--no-launch", o->no_launch, "run in this process (the points for its MPI world size)");
    run_app->add_option("--start-index", o->start_index, "skip the first N points (resume)")->group("");
    run_app->add_option("--select", o->selection_path, "run only the points of a point-selection file (tuner rounds)")
        ->group("");
    run_app->add_flag("--dry-run", o->dry_run, "validate the testcase, print the point counts and exit");
    run_app->add_flag("--fresh", o->fresh,
                      "measure every point again: empty the result files of these rank counts first (by default a "
                      "run continues after the records already stored in --out)");
    run_app->add_option("--ranks", o->only_ranks, "run only these rank counts of the testcase (e.g. --ranks 1,2)")
        ->delimiter(',');
    run_app->add_option("--manifest", o->manifest, "job-array manifest (with --task; written by `fftune jobs slurm`)")
        ->group("");
    run_app->add_option("--task", o->task, "ARRAY:INDEX: run the manifest points of this array task")->group("");
    commands.push_back({run_app, [o] { return run_testcase(*o); }, true});
}

}  // namespace fftune::cli
