// Named phases of one plan execution, each timed by the backend's clock
// (host clock on synchronous backends, CUDA events on the GPU).
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/platform/backend.hpp"

namespace fftune {

// The least traffic of one phase on one rank: bytes read + written on its
// device, and bytes sent to and received from other ranks. Floors come from
// these over measured bandwidths (plotting/report.py).
struct PhaseTraffic {
    std::size_t device_bytes = 0, sent_bytes = 0, received_bytes = 0;
};

class PhaseTimer {
public:
    explicit PhaseTimer(Backend& backend) : backend_(&backend) {}

    // Index of the phase called `name`, adding it on first use.
    int phase(const std::string& name);
    // The same with a clock of the caller's instead of the backend's (a phase
    // whose work runs on several devices); `clock` is dropped if the phase exists.
    int phase(const std::string& name, std::unique_ptr<PhaseClock> clock);
    const std::vector<std::string>& names() const { return names_; }

    void start(int id) { clocks_[id]->start(); }
    void stop(int id) { clocks_[id]->stop(); }

    // Milliseconds per phase since the last reset, in names() order; resets.
    std::vector<double> collect();

private:
    Backend* backend_;
    std::vector<std::string> names_;
    std::vector<std::unique_ptr<PhaseClock>> clocks_;
};

// Times the work of its lifetime as phase `id`; a negative id (a phase the
// transport does not have, ReshapePhases) times nothing. A clock that fails to stop
// (a device fault) throws from here, unless the timed work itself threw: its
// error is the one to keep, and a second one in flight would terminate.
class PhaseScope {
public:
    PhaseScope(PhaseTimer& timer, int id) : timer_(timer), id_(id) {
        if (id_ >= 0) timer_.start(id_);
    }
    ~PhaseScope() noexcept(false) {
        if (id_ < 0) return;
        if (std::uncaught_exceptions() == unwinding_) {
            timer_.stop(id_);
            return;
        }
        try {
            timer_.stop(id_);
        } catch (...) {  // the work's own error is already on its way
        }
    }
    PhaseScope(const PhaseScope&) = delete;
    PhaseScope& operator=(const PhaseScope&) = delete;

private:
    PhaseTimer& timer_;
    int id_;
    int unwinding_ = std::uncaught_exceptions();  // exceptions in flight when the phase began
};

}  // namespace fftune
