// fftune ingest RESULTS...: merge result JSON lines into the tuning database (idempotent).
#include <memory>

#include "app/command.hpp"
#include "app/tuner_options.hpp"

namespace fftune::cli {
namespace {

struct IngestOptions {
    std::vector<std::string> files;
    std::string db_path;
};

}  // namespace

void add_ingest(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<IngestOptions>();
    auto* ingest = app.add_subcommand("ingest", "merge result JSON lines into the tuning database (idempotent)");
    ingest->add_option("results", o->files, "JSON-lines result files")->required()->check(CLI::ExistingFile);
    add_db_option(ingest, o->db_path);
    commands.push_back({ingest, [o] {
                            return tuner_errors_reported([&] {
                                Database db(database_path(o->db_path), false);
                                return print_ingest(db, db.ingest(o->files)) ? 0 : 1;
                            });
                        }});
}

}  // namespace fftune::cli
