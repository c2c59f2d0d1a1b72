// What the tuner's subcommands (ingest, best, winners, tune, report, model,
// and probe's --db) share: the database and machine options, and ingest's summary.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "tuner/database.hpp"

namespace fftune::cli {

// --db PATH on `sub`; database_path() gives the default when it was not given.
void add_db_option(CLI::App* sub, std::string& db_path);
std::string database_path(const std::string& given);
// --machine FINGERPRINT on `sub`.
void add_machine_option(CLI::App* sub, std::string& machine);

// What was stored, and why lines were not (tuner/database.hpp); false when nothing usable was read.
bool print_ingest(const Database& db, const IngestStats& st);

// The tuner's subcommands' errors: a bad testcase exits 2, anything else 1.
int tuner_errors_reported(const std::function<int()>& action);

}  // namespace fftune::cli
