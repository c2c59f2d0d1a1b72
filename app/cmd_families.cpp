// fftune families [--json]: what defines each family's problems and configurations.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "core/base/registry.hpp"
#include "core/run/family.hpp"

namespace fftune::cli {

void add_families(CLI::App& app, Commands& commands) {
    auto* families = app.add_subcommand("families", "the problem families: what defines a problem and a configuration");
    auto as_json = std::make_shared<bool>(false);
    families->add_flag("--json", *as_json, "as JSON (plotting/report.py reads it)");
    commands.push_back({families, [as_json] {
                            nlohmann::json all = nlohmann::json::array();
                            for (const auto& name : Registry<Family>::instance().names()) {
                                const auto& f = family_named(name);
                                if (*as_json) all.push_back(describe(f));
                                else std::cout << fmt::format("{}: {}\n", name, f.summary());
                            }
                            if (*as_json) std::cout << all.dump(2) << "\n";
                            return 0;
                        }});
}

}  // namespace fftune::cli
