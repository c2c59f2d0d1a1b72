// fftune list: the registered problem families and variants.
#include <iostream>

#include "app/command.hpp"
#include "core/base/registry.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/transport.hpp"
#include "core/platform/backend.hpp"
#include "core/run/family.hpp"

namespace fftune::cli {

void add_list(CLI::App& app, Commands& commands) {
    auto* list = app.add_subcommand("list", "list the registered problem families and variants");
    commands.push_back({list, [] {
                            std::cout << "problem: " << Registry<Family>::instance().joined_names() << "\n"
                                      << "backend: " << Registry<Backend>::instance().joined_names() << "\n"
                                      << "decomposition: " << Registry<Decomposition>::instance().joined_names() << "\n"
                                      << "redistribution: " << Registry<Transport>::instance().joined_names() << "\n";
                            return 0;
                        }});
}

}  // namespace fftune::cli
