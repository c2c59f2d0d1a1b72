// fftune model: fit the alpha-beta cost model to the database and check it (leave one problem out).
#include <iostream>
#include <memory>

#include "app/command.hpp"
#include "app/tuner_options.hpp"
#include "tuner/model.hpp"

namespace fftune::cli {
namespace {

struct ModelOptions {
    std::string db_path, machine;
};

int fit_and_check(const ModelOptions& o) {
    Database db(database_path(o.db_path), true);
    const auto records = db.validated_records(o.machine);
    const auto probes = db.probe_records(o.machine);
    std::cout << CostModel::fit(records, probes).describe();
    // Leave one problem out, from sweep fits alone and with the probe calibrations first.
    std::cout << model_accuracy(records);
    if (!probes.empty()) std::cout << model_accuracy(records, probes);
    return 0;
}

}  // namespace

void add_model(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<ModelOptions>();
    auto* model = app.add_subcommand(
        "model", "fit the alpha-beta cost model to the database and check it (leave one problem out)");
    add_db_option(model, o->db_path);
    add_machine_option(model, o->machine);
    commands.push_back({model, [o] { return tuner_errors_reported([&] { return fit_and_check(*o); }); }});
}

}  // namespace fftune::cli
