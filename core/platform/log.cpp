#include "core/platform/log.hpp"

#include <array>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace fftune::logging {

namespace {

constexpr std::array<const char*, 5> names{"debug", "info", "warn", "error", "off"};

// Level -> spdlog's, in Level's order.
constexpr std::array<spdlog::level::level_enum, 5> spdlog_levels{spdlog::level::debug, spdlog::level::info,
                                                                 spdlog::level::warn, spdlog::level::err,
                                                                 spdlog::level::off};
spdlog::level::level_enum to_spdlog(Level l) { return spdlog_levels[static_cast<std::size_t>(l)]; }

struct State {
    std::shared_ptr<spdlog::logger> logger;
    Level level = Level::info;
};

State& state() {
    static State s = [] {
        State st;
        // A locked stderr sink: one whole line per call, whatever the threads.
        st.logger = std::make_shared<spdlog::logger>("fftune", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        st.logger->set_pattern("fftune: %v");
        st.logger->flush_on(spdlog::level::debug);  // a job may end at any line: nothing waits in a buffer
        try {
            st.level = level_from_environment();
        } catch (const std::invalid_argument&) {
            st.level = Level::info;  // the CLI refuses the value before any work (main)
        }
        st.logger->set_level(to_spdlog(st.level));
        return st;
    }();
    return s;
}

}  // namespace

Level level_from_environment() {
    const char* v = std::getenv("FFTUNE_LOG_LEVEL");
    if (!v || !*v) return Level::info;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (std::string(v) == names[i]) return static_cast<Level>(i);
    throw std::invalid_argument(std::string("FFTUNE_LOG_LEVEL=") + v +
                                " is not a log level (allowed: debug, info, warn, error, off)");
}

void set_level(Level l) {
    auto& s = state();
    s.level = l;
    s.logger->set_level(to_spdlog(l));
}

Level level() { return state().level; }

std::string to_string(Level l) { return names[static_cast<std::size_t>(l)]; }

void set_rank(int rank, int size) {
    state().logger->set_pattern(size > 1 ? "fftune: rank " + std::to_string(rank) + ": %v" : "fftune: %v");
}

void debug(const std::string& m) { state().logger->debug("{}", m); }
void info(const std::string& m) { state().logger->info("{}", m); }
void warn(const std::string& m) { state().logger->warn("{}", m); }
void error(const std::string& m) { state().logger->error("{}", m); }

}  // namespace fftune::logging
