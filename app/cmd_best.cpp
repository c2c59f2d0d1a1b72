// fftune best --problem F --ranks N [--size ...]: the best plan for a problem on this machine, from the tuning database.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "app/tuner_options.hpp"
#include "core/base/registry.hpp"
#include "core/platform/log.hpp"
#include "core/run/family.hpp"
#include "tuner/selector.hpp"

namespace fftune::cli {
namespace {

struct BestOptions {
    std::string family = "fft3d";
    int ranks = 1, ranks_per_node = 0;
    bool json = false;
    std::optional<double> max_error;
    // One option per problem axis of every family (--size, --precision, ...):
    // the chosen family's are checked after parsing.
    std::map<std::string, std::vector<std::string>> axes;
    std::string db_path, machine;
    CLI::App* app = nullptr;
};

// The problem `fftune best` asks about, from --problem, --ranks and the
// family's axis options (--size, --precision, ...): a size of one number is a
// cube; categories not given take the family's fallback. Throws
// std::invalid_argument naming the option and what is allowed.
nlohmann::json best_problem(const std::string& family_name, const std::map<std::string, std::vector<std::string>>& given,
                            CLI::App* best, int ranks, int ranks_per_node) {
    const auto& family = family_named(family_name);
    const auto axes = family.problem_axes();
    std::vector<std::string> names;
    for (const auto& a : axes) names.push_back("--" + a.name);
    for (const auto& [name, values] : given)
        if (best->count("--" + name) > 0 &&
            std::none_of(axes.begin(), axes.end(), [&](const auto& a) { return a.name == name; }))
            throw std::invalid_argument(fmt::format("--{} is not an axis of problem {} (its axes: {})", name, family_name,
                                                    fmt::join(names, ", ")));
    nlohmann::json problem{{"kind", family_name}, {"ranks", ranks}};
    if (ranks_per_node > 0) problem["ranks_per_node"] = ranks_per_node;
    for (const auto& a : axes) {
        const auto& v = given.at(a.name);
        const bool set = best->count("--" + a.name) > 0;
        if (a.role == ProblemAxis::Role::count && !set) continue;  // the measured count (select)
        if (a.role != ProblemAxis::Role::category) {
            if (!set) throw std::invalid_argument(fmt::format("--{} is required for problem {}", a.name, family_name));
            if (v.size() != 1 && static_cast<int>(v.size()) != a.dims)
                throw std::invalid_argument(fmt::format("--{} takes 1 or {} positive integers for problem {}, not {}",
                                                        a.name, a.dims, family_name, v.size()));
            nlohmann::json n = nlohmann::json::array();
            for (int i = 0; i < a.dims; ++i) {
                const std::string& text = v[v.size() == 1 ? 0 : i];
                char* end = nullptr;
                const long long x = std::strtoll(text.c_str(), &end, 10);
                if (end == text.c_str() || *end != '\0' || x < 1)
                    throw std::invalid_argument(
                        fmt::format("--{} {}: not a positive integer (allowed: 1 or {} of them)", a.name, text, a.dims));
                n.push_back(x);
            }
            problem[a.name] = n;
        } else {
            if (set && v.size() != 1)
                throw std::invalid_argument(fmt::format("--{} takes one value for problem {}, not {} ({}; allowed: one "
                                                        "of {})",
                                                        a.name, family_name, v.size(), fmt::join(v, " "),
                                                        fmt::join(a.values, ", ")));
            const std::string value = set ? v.front() : fallback_of(a, problem);
            if (std::find(a.values.begin(), a.values.end(), value) == a.values.end())
                throw std::invalid_argument(fmt::format("--{} {}: unknown value for problem {} (allowed: {})", a.name,
                                                        value, family_name, fmt::join(a.values, ", ")));
            problem[a.name] = value;
        }
    }
    return problem;
}

int select_best(const BestOptions& o) {
    if (o.ranks_per_node > o.ranks) {
        logging::error(fmt::format("--ranks-per-node {} exceeds --ranks {} (allowed: 1 to {})", o.ranks_per_node,
                                   o.ranks, o.ranks));
        return 2;
    }
    nlohmann::json problem;
    try {
        problem = best_problem(o.family, o.axes, o.app, o.ranks, o.ranks_per_node);
    } catch (const std::invalid_argument& e) {
        logging::error(std::string("best: ") + e.what());
        return 2;
    }
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);  // provenance asks MPI for its version
    const auto s = fftune::select(problem, {database_path(o.db_path), o.machine, o.max_error});
    if (o.json) std::cout << nlohmann::json(s).dump(2) << "\n";
    else
        std::cout << fmt::format("{}  [{}]  {}{}\n", s.key, s.rung, s.reason,
                                 s.expected_ms ? fmt::format("; expected {:.4g} ms", *s.expected_ms) : "");
    MPI_Finalize();
    return 0;
}

}  // namespace

void add_best(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<BestOptions>();
    auto* best = app.add_subcommand("best", "the best plan for a problem on this machine, from the tuning database");
    o->app = best;
    best->add_option("--problem", o->family, "problem family (fftune families)")
        ->check(CLI::IsMember(Registry<Family>::instance().names()));
    best->add_option("--ranks", o->ranks, "MPI ranks")->required()->check(CLI::PositiveNumber);
    best->add_option("--ranks-per-node", o->ranks_per_node,
                     "most ranks on one node (default: any; measurements at other counts answer as nearest)")
        ->check(CLI::PositiveNumber);
    best->add_option("--max-error", o->max_error, "only configurations whose measured error is at most this")
        ->check(CLI::Validator(
            [](std::string& v) {
                char* end = nullptr;
                const double e = std::strtod(v.c_str(), &end);
                return end == v.c_str() || *end != '\0' ? v + " is not a number (allowed: a finite number >= 0)"
                                                           : check_max_error(e);
            },
            "finite >= 0"));
    best->add_flag("--json", o->json, "print the answer as JSON");
    for (const auto& name : Registry<Family>::instance().names())
        for (const auto& axis : family_named(name).problem_axes()) {
            if (o->axes.contains(axis.name)) continue;
            auto* opt = best->add_option("--" + axis.name, o->axes[axis.name], axis.help + " (" + name + ")");
            if (axis.role != ProblemAxis::Role::category) opt->expected(1, axis.dims);
        }
    // --problem NAME --help: that family's axes, their values and defaults.
    best->footer([o] { return "\n" + problem_help(family_named(o->family)); });
    add_db_option(best, o->db_path);
    add_machine_option(best, o->machine);
    commands.push_back({best, [o] { return tuner_errors_reported([&] { return select_best(*o); }); }});
}

}  // namespace fftune::cli
