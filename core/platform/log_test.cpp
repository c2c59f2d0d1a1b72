#include "core/platform/log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

namespace fftune::logging {
namespace {

std::string captured(void (*write)(const std::string&), const std::string& message) {
    testing::internal::CaptureStderr();
    write(message);
    return testing::internal::GetCapturedStderr();
}

TEST(Log, LevelsFilterAndTheRankIsNamed) {
    set_level(Level::info);
    set_rank(0, 1);
    EXPECT_EQ(captured(info, "starting"), "fftune: starting\n");
    EXPECT_EQ(captured(debug, "details"), "");
    set_level(Level::warn);  // --quiet
    EXPECT_EQ(captured(info, "starting"), "");
    EXPECT_EQ(captured(warn, "careful"), "fftune: careful\n");
    set_level(Level::debug);  // --verbose
    EXPECT_EQ(captured(debug, "details"), "fftune: details\n");
    set_rank(3, 4);
    EXPECT_EQ(captured(error, "lost"), "fftune: rank 3: lost\n");
    set_level(Level::off);
    EXPECT_EQ(captured(error, "lost"), "");
    set_rank(0, 1);
    set_level(Level::info);
}

TEST(Log, TheEnvironmentNamesTheLevel) {
    unsetenv("FFTUNE_LOG_LEVEL");
    EXPECT_EQ(level_from_environment(), Level::info);
    setenv("FFTUNE_LOG_LEVEL", "debug", 1);
    EXPECT_EQ(level_from_environment(), Level::debug);
    setenv("FFTUNE_LOG_LEVEL", "off", 1);
    EXPECT_EQ(level_from_environment(), Level::off);
    setenv("FFTUNE_LOG_LEVEL", "loud", 1);
    try {
        level_from_environment();
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "FFTUNE_LOG_LEVEL=loud is not a log level (allowed: debug, info, warn, error, off)");
    }
    unsetenv("FFTUNE_LOG_LEVEL");
    EXPECT_EQ(to_string(Level::debug), "debug");
    EXPECT_EQ(to_string(Level::warn), "warn");
    EXPECT_EQ(to_string(Level::off), "off");
}

}  // namespace
}  // namespace fftune::logging
