// Shared applicability rule of the two slab decompositions (thesis 4.2, 4.3).
#pragma once

#include <fmt/format.h>

#include "core/engine/decomposition.hpp"

namespace fftune::slab {

// Slabs split x over all P ranks: every rank needs at least one x-plane of input.
inline std::optional<std::string> not_applicable(const char* name, const Problem& problem,
                                                 const Config& config) {
    const int p = problem.ranks;
    if (config.process_grid[0] != p || config.process_grid[1] != 1)
        return fmt::format("{} uses the process grid {}x1, not {}x{}", name, p,
                           config.process_grid[0], config.process_grid[1]);
    if (p > problem.size[0])
        return fmt::format("{} splits x over P={} ranks but Nx={} < P", name, p, problem.size[0]);
    return std::nullopt;
}

}  // namespace fftune::slab
