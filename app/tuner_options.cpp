#include "app/tuner_options.hpp"

#include <iostream>

#include "core/platform/log.hpp"
#include "core/run/testcase.hpp"

namespace fftune::cli {

void add_db_option(CLI::App* sub, std::string& db_path) {
    sub->add_option("--db", db_path, "tuning database (default: $FFTUNE_DB or ~/.local/share/fftune/tuning.sqlite)");
}

std::string database_path(const std::string& given) { return given.empty() ? default_database_path() : given; }

void add_machine_option(CLI::App* sub, std::string& machine) {
    sub->add_option("--machine", machine, "machine fingerprint (default: this machine; report: all)");
}

bool print_ingest(const Database& db, const IngestStats& st) {
    for (const auto& note : ingest_notes(st)) logging::warn(note);
    std::cout << ingest_summary(db, st) << "\n";
    if (const auto why = ingest_failure(st); !why.empty()) logging::error(why);
    return st.usable();
}

int tuner_errors_reported(const std::function<int()>& action) {
    try {
        return action();
    } catch (const TestcaseError& e) {
        logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    } catch (const std::exception& e) {
        logging::error(e.what());
        return 1;
    }
}

}  // namespace fftune::cli
