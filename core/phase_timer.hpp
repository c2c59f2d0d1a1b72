// Named phases of one plan execution, each timed by the backend's clock
// (host clock on synchronous backends, CUDA events on the GPU).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace fftune {

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

class PhaseScope {
public:
    PhaseScope(PhaseTimer& timer, int id) : timer_(timer), id_(id) { timer_.start(id_); }
    ~PhaseScope() { timer_.stop(id_); }
    PhaseScope(const PhaseScope&) = delete;
    PhaseScope& operator=(const PhaseScope&) = delete;

private:
    PhaseTimer& timer_;
    int id_;
};

}  // namespace fftune
