#include "core/platform/process.hpp"

#include <filesystem>

#include <gtest/gtest.h>

namespace fftune {
namespace {

TEST(Process, CapturesOutputAndStatus) {
    const auto r = run_capture({"sh", "-c", "echo out; echo err >&2; exit 3"});
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(r.output.find("out\n"), std::string::npos);
    EXPECT_NE(r.output.find("err\n"), std::string::npos);
}

TEST(Process, ArgumentsAreNotReparsedByAShell) {
    const auto r = run_capture({"printf", "%s|", "a b", "$(echo injected)", "x;y"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.output, "a b|$(echo injected)|x;y|");
}

TEST(Process, MissingProgramIs127WithReason) {
    const auto r = run_capture({"fftune-no-such-program-xyz"});
    EXPECT_EQ(r.status, 127);
    EXPECT_NE(r.output.find("fftune-no-such-program-xyz"), std::string::npos);
    EXPECT_THROW(spawn_and_wait({"fftune-no-such-program-xyz"}), std::runtime_error);
}

TEST(Process, SignalIs128PlusSignal) { EXPECT_EQ(spawn_and_wait({"sh", "-c", "kill -TERM $$"}), 128 + 15); }

TEST(Process, SelfExecutableIsThisTest) {
    EXPECT_EQ(std::filesystem::path(self_executable()).filename(), "process_test");
}

// The quoted string, read back by a real shell, is the original bytes.
TEST(Process, ShellQuoteRoundTrips) {
    for (std::string s : {"plain", "", "it's", "a'b'c", "$(rm -rf /)", "`x`", "a\nb", "\\", "'"}) {
        const auto r = run_capture({"sh", "-c", "printf %s " + shell_quote(s)});
        EXPECT_EQ(r.status, 0) << s;
        EXPECT_EQ(r.output, s);
    }
}

}  // namespace
}  // namespace fftune
