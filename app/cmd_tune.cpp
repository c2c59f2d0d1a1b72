// fftune tune TESTCASE.json [--strategy S]: run a testcase (every point, or a strategy's rounds) and ingest its results.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/command.hpp"
#include "app/tuner_options.hpp"
#include "core/platform/log.hpp"
#include "core/records/provenance.hpp"
#include "core/run/runner.hpp"
#include "core/run/testcase.hpp"
#include "tuner/strategies.hpp"

namespace fftune::cli {
namespace {

struct TuneOptions {
    std::string testcase, out = "fftune-results", strategy = default_strategy, compare_file, db_path, budget;
};

int tune_and_ingest(const TuneOptions& o) {
    const std::string db_path = database_path(o.db_path);
    const auto tc = load_testcase(o.testcase);
    check_tunable(tc, o.testcase);
    // Opened, and checked, before the sweep: a database it cannot write fails now, not after it.
    Database db(db_path, false);
    setenv("FFTUNE_SWEEP_CHILD", "1", 1);
    long long deadline = 0;
    if (!o.budget.empty()) deadline = unix_ms_now() + static_cast<long long>(*parse_duration(o.budget) * 1000);
    const auto result = fftune::tune(tc, o.testcase, o.out, o.strategy, deadline);
    // Screening rounds are not validated: only the other rounds' records are tuning results.
    const auto st = db.ingest(result.validated_files);
    for (const auto& note : ingest_notes(st)) logging::warn(note);
    std::cout << fmt::format("{}: {} rounds, {} points measured, {} problems picked\n", o.strategy, result.rounds,
                             result.points_measured, result.picks.size());
    std::cout << fmt::format("{}: {} added, {} already present; {} records\n", db_path, st.added, st.duplicates,
                             db.record_count());
    if (!o.budget.empty())
        std::cout << fmt::format("budget {}: {}; measured {} of the {} points ({:.0f}% of the space) in {} rounds; "
                                 "the picks are the fastest validated plans measured\n",
                                 o.budget, result.budget_spent ? "spent, the search stopped" : "not reached",
                                 result.points_covered, result.points_in_space,
                                 result.points_in_space ? 100.0 * result.points_covered / result.points_in_space : 0.0,
                                 result.rounds);
    if (!o.compare_file.empty()) std::cout << compare_with_exhaustive(result, read_records(o.compare_file));
    int failed = 0;
    for (const auto& r : result.records) failed += r.value("status", "") == "failed";
    return failed > 0 ? 1 : 0;
}

}  // namespace

void add_tune(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<TuneOptions>();
    auto* tune_app = app.add_subcommand("tune", "run a testcase (every point) and ingest its results");
    tune_app->add_option("testcase", o->testcase, "testcase JSON file")->required();
    tune_app->add_option("--out", o->out, "directory for the result files");
    tune_app->add_option("--strategy", o->strategy,
                         fmt::format("screen (default: every point briefly without validation, then the fastest "
                                     "few validated), exhaustive, phase (pencil phases one at a time) or halving "
                                     "(successive halving)"))
        ->check(CLI::IsMember(fftune::Registry<fftune::Strategy>::instance().names()));
    tune_app->add_option("--budget", o->budget,
                         "wall time the search may take, e.g. 90s, 10m, 1h30m: no point starts after it, and the "
                         "fastest validated plans measured until then are stored")
        ->check(CLI::Validator(
            [](std::string& v) {
                return parse_duration(v) ? std::string()
                                         : "not a duration (allowed: a positive number of seconds, or e.g. 90s, "
                                           "10m, 1h30m)";
            },
            "DURATION"));
    tune_app->add_option("--compare", o->compare_file, "exhaustive results to judge the picks against")
        ->check(CLI::ExistingFile);
    add_db_option(tune_app, o->db_path);
    commands.push_back({tune_app, [o] { return tuner_errors_reported([&] { return tune_and_ingest(*o); }); }, true});
}

}  // namespace fftune::cli
