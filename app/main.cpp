// fftune command-line interface: one file per subcommand (app/cmd_*.cpp, app/command.hpp).
//   fftune run TESTCASE.json [--out DIR] [--launcher CMD] [--launcher-arg ARG]...
//   fftune list            registered variants (backends, decompositions, redistributions)
//   fftune jobs slurm|status|resubmit, fftune init-site   SLURM job arrays (jobs/README.md)
//   fftune probe [--ranks 1,2,4] [--out F.jsonl] [--db PATH]   cost-model microbenchmarks (core/run/probe.hpp)
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/command.hpp"
#include "core/platform/log.hpp"
#include "core/platform/settings.hpp"

namespace {

// The log level from FFTUNE_LOG_LEVEL, then -v or -q; false (after saying why) when the variable is bad.
bool set_log_level(bool verbose, bool quiet) {
    namespace logging = fftune::logging;
    try {
        logging::set_level(logging::level_from_environment());
    } catch (const std::invalid_argument& e) {
        logging::error(e.what());
        return false;
    }
    if (verbose || quiet) {
        // Jobs this process launches inherit the level through the environment.
        logging::set_level(verbose ? logging::Level::debug : logging::Level::warn);
        setenv("FFTUNE_LOG_LEVEL", logging::to_string(logging::level()).c_str(), 1);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    namespace cli = fftune::cli;
    CLI::App app{"fftune: benchmark, validate and tune distributed 3D FFTs"};
    app.require_subcommand(1);
    bool verbose = false, quiet = false;
    app.add_flag("-v,--verbose", verbose, "more diagnostics (FFTUNE_LOG_LEVEL=debug)");
    app.add_flag("-q,--quiet", quiet, "warnings and errors only (FFTUNE_LOG_LEVEL=warn)")->excludes("--verbose");
    app.fallthrough();  // also after the subcommand: fftune run --quiet t.json
    const cli::Argv args(argv, argv + argc);

    // In this order in `fftune --help`.
    cli::Commands commands;
    cli::add_run(app, args, commands);
    cli::add_list(app, commands);
    cli::add_families(app, commands);
    cli::add_jobs(app, commands);
    cli::add_init_site(app, commands);
    cli::add_probe(app, args, commands);
#ifdef FFTUNE_HAVE_TUNER
    cli::add_ingest(app, commands);
    cli::add_best(app, commands);
    cli::add_winners(app, commands);
    cli::add_tune(app, commands);
    cli::add_report(app, commands);
    cli::add_model(app, commands);
#endif

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);  // prints help or the error
        return rc == 0 ? 0 : 2;      // bad command lines exit 2, like bad testcases
    }
    if (!set_log_level(verbose, quiet)) return 2;
    for (const auto& command : commands) {
        if (!command.app->parsed()) continue;
        // Settings from the environment (core/platform/settings.hpp), refused before any work.
        if (command.checks_settings) try {
                fftune::check_settings();
            } catch (const std::invalid_argument& e) {
                fftune::logging::error(e.what());
                return 2;
            }
        return command.action();
    }
    return 2;  // not reached: require_subcommand(1) makes the parse fail without one
}
