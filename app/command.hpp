// One CLI11 subcommand per file (app/cmd_*.cpp): each add_* adds its subcommand
// and options to the app and appends what it does once parsed; main() parses
// and runs the one that was given.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fftune::cli {

struct Command {
    CLI::App* app = nullptr;         // runs when this (sub)subcommand was parsed
    std::function<int()> action;     // exit status: 0 done, 1 failed, 2 bad command line or testcase
    bool checks_settings = false;    // transforms: the environment's settings are refused before it starts
};
using Commands = std::vector<Command>;

// The process's own command line: jobs it launches repeat it.
using Argv = std::vector<std::string>;

// True when a launcher (mpirun, mpiexec, srun) started this process as an MPI rank.
bool under_launcher();

// The SLURM subcommands' (jobs, init-site) errors: a bad testcase or cluster
// profile exits 2, anything else 1.
int jobs_errors_reported(const std::function<int()>& action);

void add_run(CLI::App& app, const Argv& argv, Commands& commands);
void add_list(CLI::App& app, Commands& commands);
void add_families(CLI::App& app, Commands& commands);
void add_jobs(CLI::App& app, Commands& commands);
void add_init_site(CLI::App& app, Commands& commands);
void add_probe(CLI::App& app, const Argv& argv, Commands& commands);
#ifdef FFTUNE_HAVE_TUNER
void add_ingest(CLI::App& app, Commands& commands);
void add_best(CLI::App& app, Commands& commands);
void add_winners(CLI::App& app, Commands& commands);
void add_tune(CLI::App& app, Commands& commands);
void add_report(CLI::App& app, Commands& commands);
void add_model(CLI::App& app, Commands& commands);
#endif

}  // namespace fftune::cli
