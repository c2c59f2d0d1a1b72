// fftune's diagnostics: one spdlog logger on stderr, "fftune: message", or
// "fftune: rank N: message" inside a job of several ranks. The level comes from
// FFTUNE_LOG_LEVEL (debug, info, warn, error, off; default info) or the CLI's
// --verbose (debug) / --quiet (warn). Progress lines and summary tables are
// output, not diagnostics: they are printed as they are.
#pragma once

#include <string>

namespace fftune::logging {

enum class Level { debug, info, warn, error, off };

// The level FFTUNE_LOG_LEVEL names (info when unset); throws
// std::invalid_argument naming the value and the allowed ones.
Level level_from_environment();
void set_level(Level level);
Level level();
// The name of `level`, as FFTUNE_LOG_LEVEL takes it.
std::string to_string(Level level);
// Name the rank in every message when the job has several.
void set_rank(int rank, int size);

void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
void error(const std::string& message);

}  // namespace fftune::logging
