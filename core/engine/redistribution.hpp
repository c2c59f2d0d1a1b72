// One reshape between two box distributions outside a Plan: its pack plan,
// the transport that moves it, the packed and host staging buffers it needs,
// and its phases (pack.k, exchange.k, unpack.k) in the caller's PhaseTimer.
// For solvers whose pipelines are their own (families/poisson zero_skipping):
// the before and after boxes need not cover the same global box, so blocks
// outside either are never sent (padding created or dropped in place).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/transport.hpp"
#include "core/platform/mpi_util.hpp"

namespace fftune {

class Redistribution {
public:
    // Collective over `comm` (the phase communicator: every rank of the lists).
    // Host staging when the backend holds device memory and MPI reads host
    // memory only. Throws std::invalid_argument for an unknown transport.
    Redistribution(MPI_Comm comm, Backend& backend, const std::string& transport, int phase,
                   const std::vector<Layout>& before, const std::vector<Layout>& after, std::size_t elem_bytes,
                   PhaseTimer& timer, const std::vector<Box3>& moving_before = {},
                   const std::vector<Box3>& moving_after = {});
    ~Redistribution();
    Redistribution(const Redistribution&) = delete;
    Redistribution& operator=(const Redistribution&) = delete;

    // Why `transport` cannot run on `backend` (host-staged MPI) in this process,
    // as the job placed its ranks (Transport::not_runnable_here), or nothing.
    static std::optional<std::string> not_applicable(const std::string& transport, const Backend& backend);

    // Collective: src (the before layout's array) into dst (the after layout's).
    void execute(const void* src, void* dst);
    // Floor traffic per phase, in the timer's ids: {phase id, traffic}.
    std::vector<std::pair<int, PhaseTraffic>> traffic() const;
    const ReshapePlan& plan() const { return plan_; }
    std::size_t device_bytes() const { return send_.bytes() + recv_.bytes(); }
    std::size_t host_bytes() const;

private:
    MPI_Comm comm_;
    PhaseTimer& timer_;
    ReshapePlan plan_;
    ReshapeContext ctx_;
    ReshapePhases phases_;
    Datatype element_;
    std::unique_ptr<Transport> transport_;
    Buffer send_, recv_, host_send_, host_recv_, host_src_, host_dst_;
};

}  // namespace fftune
