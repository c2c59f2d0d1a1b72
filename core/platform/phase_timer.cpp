#include "core/platform/phase_timer.hpp"

namespace fftune {

int PhaseTimer::phase(const std::string& name) { return phase(name, nullptr); }

int PhaseTimer::phase(const std::string& name, std::unique_ptr<PhaseClock> clock) {
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return static_cast<int>(i);
    names_.push_back(name);
    clocks_.push_back(clock ? std::move(clock) : backend_->make_clock());
    return static_cast<int>(names_.size() - 1);
}

std::vector<double> PhaseTimer::collect() {
    std::vector<double> out;
    out.reserve(clocks_.size());
    for (auto& c : clocks_) {
        out.push_back(c->elapsed_ms());
        c->reset();
    }
    return out;
}

}  // namespace fftune
