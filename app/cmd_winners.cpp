// fftune winners: best and runner-up per problem, one table per family, with a verdict from the 99% CIs.
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "app/tuner_options.hpp"
#include "core/base/registry.hpp"
#include "core/run/family.hpp"

namespace fftune::cli {
namespace {

struct WinnersOptions {
    std::string db_path, machine;
};

int print_winners(const WinnersOptions& o) {
    Database db(database_path(o.db_path), true);
    std::string family;  // one table per family, each with its problem columns
    std::map<std::string, int> not_built;
    for (const auto& p : db.problems(o.machine)) {
        const auto w = pick_winner(p, db.measurements(p, o.machine));
        if (!w) continue;
        const std::string kind = p.at("kind").get<std::string>();
        if (!Registry<Family>::instance().contains(kind)) {
            ++not_built[kind];  // ingested by a build with more families
            continue;
        }
        const auto& f = family_named(kind);
        if (f.name() != family) {
            std::cout << (family.empty() ? "" : "\n")
                      << fmt::format("{}\n{:>5} {:>5} {}  {:>10}  {:<50} {:>8}  {}\n", f.name(), "ranks", "/node",
                                     f.problem_header(), "best ms", "best configuration", "margin",
                                     "verdict (runner-up)");
            family = f.name();
        }
        const int per_node = p.value("ranks_per_node", 0);
        std::cout << fmt::format("{:>5} {:>5} {}  {:>10.4g}  {:<50} {:>7.1f}%  {}{}\n", p.at("ranks").get<int>(),
                                 per_node > 0 ? std::to_string(per_node) : "?", f.problem_label(p), w->best.median_ms,
                                 w->best.key, 100 * w->margin, w->verdict,
                                 w->runner_up ? " (" + w->runner_up->key + ")" : "");
    }
    for (const auto& [kind, n] : not_built)
        std::cout << fmt::format("\n{}: {} problems of a family this fftune is not built with\n", kind, n);
    return 0;
}

}  // namespace

void add_winners(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<WinnersOptions>();
    auto* winners = app.add_subcommand("winners", "best and runner-up per problem with a verdict from the 99% CIs");
    add_db_option(winners, o->db_path);
    add_machine_option(winners, o->machine);
    commands.push_back({winners, [o] { return tuner_errors_reported([&] { return print_winners(*o); }); }});
}

}  // namespace fftune::cli
