// fftune command-line interface.
//   fftune run TESTCASE.json [--out DIR] [--launcher CMD] [--launcher-arg ARG]...
//   fftune list            registered variants (backends, decompositions, redistributions)
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>

#include "core/backend.hpp"
#include "core/decomposition.hpp"
#include "core/provenance.hpp"
#include "core/registry.hpp"
#include "core/runner.hpp"
#include "core/testcase.hpp"
#include "core/transport.hpp"

namespace {

// True when a launcher (mpirun, mpiexec, srun) started this process as an MPI rank.
bool under_launcher() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(var)) return true;
    return false;
}

int run_in_job(const fftune::Testcase& tc, const std::string& out_dir, int start_index,
               const std::vector<std::string>& argv) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 0;
    try {
        if (rank == 0) std::filesystem::create_directories(out_dir);
        MPI_Barrier(MPI_COMM_WORLD);
        const std::string file = (std::filesystem::path(out_dir) /
                                  fmt::format("{}-r{}.jsonl", fftune::sanitize_filename(tc.name), size)).string();
        if (tc.points(size).empty() && rank == 0)
            std::cerr << fmt::format("fftune: the testcase has no points for {} ranks (ranks: {})\n", size,
                                     fmt::join(tc.ranks, ", "));
        failed = fftune::run_job(MPI_COMM_WORLD, tc, file, start_index, argv);
        if (rank == 0 && std::getenv("FFTUNE_SWEEP_CHILD") == nullptr)
            std::cout << fftune::summarize_records(fftune::read_records(file)) << "\nResults: " << file << "\n";
        rc = failed > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "fftune: rank " << rank << ": " << e.what() << "\n";
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"fftune: benchmark, validate and tune distributed 3D FFTs"};
    app.require_subcommand(1);
    std::vector<std::string> args(argv, argv + argc);

    auto* run = app.add_subcommand("run", "run a testcase: every point validated and timed per phase");
    std::string testcase, out_dir = "fftune-results", launcher;
    std::vector<std::string> launcher_args;
    int start_index = 0;
    bool no_launch = false, dry_run = false;
    run->add_option("testcase", testcase, "testcase JSON file")->required();
    run->add_option("--out", out_dir, "output directory (JSON lines per rank count, merged file)");
    run->add_option("--launcher", launcher, "MPI launcher (default: the testcase's, else mpirun)");
    run->add_option("--launcher-arg", launcher_args, "extra launcher argument, e.g. --launcher-arg=--bind-to=core")
        ->allow_extra_args(false);
    run->add_flag("--no-launch", no_launch, "run in this process (the points for its MPI world size)");
    run->add_option("--start-index", start_index, "skip the first N points (resume)")->group("");
    run->add_flag("--dry-run", dry_run, "validate the testcase, print the point counts and exit");
    std::vector<int> only_ranks;
    run->add_option("--ranks", only_ranks, "run only these rank counts of the testcase (e.g. --ranks 1,2)")
        ->delimiter(',');

    auto* list = app.add_subcommand("list", "list the registered variants");

    CLI11_PARSE(app, argc, argv);

    if (list->parsed()) {
        std::cout << "backend: " << fftune::Registry<fftune::Backend>::instance().joined_names() << "\n"
                  << "decomposition: " << fftune::Registry<fftune::Decomposition>::instance().joined_names() << "\n"
                  << "redistribution: " << fftune::Registry<fftune::Transport>::instance().joined_names() << "\n";
        return 0;
    }

    fftune::Testcase tc;
    try {
        tc = fftune::load_testcase(testcase);
    } catch (const std::exception& e) {
        std::cerr << "fftune: invalid testcase: " << e.what() << "\n";
        return 2;
    }
    if (!only_ranks.empty()) {
        for (int r : only_ranks)
            if (std::find(tc.ranks.begin(), tc.ranks.end(), r) == tc.ranks.end()) {
                std::cerr << fmt::format("fftune: --ranks {} is not among the testcase's ranks ({})\n", r,
                                         fmt::join(tc.ranks, ", "));
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
    if (no_launch || under_launcher()) return run_in_job(tc, out_dir, start_index, args);
    try {
        setenv("FFTUNE_SWEEP_CHILD", "1", 1);
        return fftune::run_sweep(tc, {testcase, out_dir, launcher, launcher_args});
    } catch (const std::exception& e) {
        std::cerr << "fftune: " << e.what() << "\n";
        return 1;
    }
}
