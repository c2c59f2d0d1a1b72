// PhaseTimer and PhaseScope: phases are named once and collected in order;
// a clock that fails to stop reports it, but never replaces (or, by throwing
// during unwinding, terminates on) the timed work's own error.
#include "core/platform/phase_timer.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/base/registry.hpp"

namespace fftune {
namespace {

// A clock that counts its calls and, when told, fails to stop (as
// cudaEventRecord does after a device fault).
struct ScriptedClock final : PhaseClock {
    bool fail_stop = false;
    int starts = 0, stops = 0;
    double ms = 1.5;
    void start() override { ++starts; }
    void stop() override {
        ++stops;
        if (fail_stop) throw std::runtime_error("clock: device fault");
    }
    double elapsed_ms() override { return ms * stops; }
    void reset() override { starts = stops = 0; }
};

struct Timer {
    std::unique_ptr<Backend> backend = Registry<Backend>::instance().create("fftw");
    PhaseTimer timer{*backend};
    ScriptedClock* clock = nullptr;
    int id = -1;
    Timer() {
        auto c = std::make_unique<ScriptedClock>();
        clock = c.get();
        id = timer.phase("exchange.0", std::move(c));
    }
};

TEST(PhaseTimer, NamesPhasesOnceAndCollectsInOrder) {
    Timer t;
    EXPECT_EQ(t.timer.phase("exchange.0"), t.id);  // existing: the same index
    const int fft = t.timer.phase("fft.x");
    EXPECT_EQ(t.timer.names(), (std::vector<std::string>{"exchange.0", "fft.x"}));
    { PhaseScope s(t.timer, t.id); }
    { PhaseScope s(t.timer, t.id); }
    { PhaseScope s(t.timer, fft); }
    const auto ms = t.timer.collect();
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_DOUBLE_EQ(ms[0], 3.0);  // two stops of the scripted clock
    EXPECT_EQ(t.clock->stops, 0);  // collect() resets
}

TEST(PhaseScope, ANegativeIdTimesNothing) {
    Timer t;
    { PhaseScope s(t.timer, -1); }  // a phase the transport has not (ReshapePhases)
    EXPECT_EQ(t.clock->starts, 0);
    EXPECT_EQ(t.timer.collect(), std::vector<double>{0.0});
}

TEST(PhaseScope, AClockThatFailsToStopIsReported) {
    Timer t;
    t.clock->fail_stop = true;
    EXPECT_THROW({ PhaseScope s(t.timer, t.id); }, std::runtime_error);
}

TEST(PhaseScope, TheWorksOwnErrorWinsOverAClockThatFailsToStop) {
    // Before, the destructor threw while the work's error was in flight: std::terminate.
    Timer t;
    t.clock->fail_stop = true;
    try {
        PhaseScope s(t.timer, t.id);
        throw std::logic_error("cuFFT: execution failed");
    } catch (const std::logic_error& e) {
        EXPECT_STREQ(e.what(), "cuFFT: execution failed");
    }
    EXPECT_EQ(t.clock->stops, 1);  // stopped all the same
}

}  // namespace
}  // namespace fftune
