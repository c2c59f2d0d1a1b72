// Test helper: a transport that forwards to a registered one (a2a_sync by
// default). Test transports derive from it and override only what they change
// (the staging sizes they ask for, claims about peers' memory).
#pragma once

#include <memory>
#include <string>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune::testing {

class ForwardingTransport : public Transport {
public:
    explicit ForwardingTransport(const std::string& inner = "a2a_sync")
        : inner_(Registry<Transport>::instance().create(inner)) {}
    bool separate_pack_phases() const override { return inner_->separate_pack_phases(); }
    bool runs_alone() const override { return true; }  // its faults are injected at one rank too
    void setup(const ReshapeContext& ctx) override { inner_->setup(ctx); }
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        inner_->execute(ctx, src, dst, timer, phases);
    }

private:
    std::unique_ptr<Transport> inner_;
};

}  // namespace fftune::testing
