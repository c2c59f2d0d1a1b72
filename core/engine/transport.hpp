// Transport: moves the bytes of one reshape. Knows nothing about FFTs.
// One instance per reshape stage, so a transport may keep per-stage state
// (derived datatypes, requests) created in setup().
#pragma once

#include "core/base/registry.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/platform/phase_timer.hpp"
#include "core/engine/reshape.hpp"

namespace fftune {

// Phase ids this reshape records into (-1 when the transport has no such phase).
struct ReshapePhases {
    int pack = -1;
    int exchange = -1;
    int unpack = -1;
};

class Transport {
public:
    static constexpr const char* kind = "redistribution";
    virtual ~Transport() = default;

    // Whether this transport has separate pack and unpack phases; those that
    // fuse them (derived datatypes, pipelined p2p) time only "exchange.k".
    virtual bool separate_pack_phases() const = 0;
    // Whether it copies through the plan's packed send/receive buffers.
    virtual bool uses_staging_buffers() const { return separate_pack_phases(); }
    // Whether it needs the receive one too (a transport that reads the peers'
    // send buffers directly does not).
    virtual bool uses_recv_buffer() const { return uses_staging_buffers(); }
    // Elements of the packed send / receive buffers it needs (when it uses them):
    // every peer's block but the self block, unless its buffers have another shape.
    virtual index_t send_buffer_elems(const ReshapePlan& plan) const { return plan.send_total; }
    virtual index_t recv_buffer_elems(const ReshapePlan& plan) const { return plan.recv_total; }
    // Whether it hands whole arrays to MPI (derived datatypes): host staging
    // then mirrors the arrays instead of the packed buffers.
    virtual bool uses_whole_arrays() const { return false; }
    // Whether data moves through MPI (host staging applies when MPI is not GPU-aware).
    virtual bool uses_mpi() const { return true; }
    // Whether it maps peers' buffers into this process (CUDA IPC) until it is
    // destroyed: a rank may then free its buffers only once every peer has let
    // go (freeing an exported allocation before the importers close it is
    // undefined), so the plan waits for all ranks in between.
    virtual bool maps_peer_memory() const { return false; }
    // Its mappings of peers' arrays (after setup): a plan that keeps its
    // arrays for the next plan (core/engine/kept_arrays.hpp) keeps these too.
    virtual std::vector<std::shared_ptr<const void>> peer_mappings() const { return {}; }
    // Whether it must run even for a reshape that would only copy a rank's own
    // block onto itself (a rank alone in its phase, equal layouts), which the
    // plan otherwise leaves out: transports that check or instrument every
    // exchange (the tests' fault injectors).
    virtual bool runs_alone() const { return false; }
    // Why the transport cannot run with this backend, or nothing.
    virtual std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const {
        (void)backend;
        (void)gpu_aware;
        return std::nullopt;
    }
    // Why it cannot run in this process as the job placed its ranks (rank-local,
    // run-time evidence: ranks sharing a GPU), or nothing. Asked when a point
    // runs (check_applicable), never when points are enumerated: the launcher
    // and the job it starts must see the same points.
    virtual std::optional<std::string> not_runnable_here(const Backend& backend) const {
        (void)backend;
        return std::nullopt;
    }
    virtual void setup(const ReshapeContext& ctx) { (void)ctx; }
    // Collective over a job's communicator, once before the job's first point
    // (core/run/job_start.hpp), with a backend of the points': what the
    // transport makes once per process and its plans then share (NCCL's
    // communicator), made there so that no point's set-up pays it.
    virtual void start_job(MPI_Comm comm, const Backend& backend) {
        (void)comm;
        (void)backend;
    }
    virtual void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                         const ReshapePhases& phases) = 0;

    // Slices of an overlapped FFT + reshape stage (Config::overlap), one
    // instance per slice. Where FFT slices write the sources (forward), the
    // destination is read only after the stage; otherwise the source is whole
    // before it and FFT slices read each destination as it arrives. A transport
    // that can queue a slice's moves behind the work on queue 0 (queue 0 then
    // waits for them) and return at once, with no rank waiting for another
    // between slices, says so: the plan then calls open_slices on the first
    // slice's instance, queue_slice on each in turn and close_slices on the
    // last, which returns when every rank's slices have moved (or, where
    // lands_slices, has queue 0 wait for them). Otherwise each
    // slice runs execute, which returns when that slice has moved.
    virtual bool queues_slices(bool sources_written_by_slices) const {
        (void)sources_written_by_slices;
        return false;
    }
    virtual void open_slices(const ReshapeContext& ctx) { (void)ctx; }
    virtual void queue_slice(const ReshapeContext& ctx, const void* src, void* dst);
    virtual void close_slices(const ReshapeContext& ctx) { (void)ctx; }
    // A transport that queues slices and can also be waited for part-way on
    // the device says so: land_slices makes queue 0 wait until every move that
    // any rank has queued so far is in this rank's destination, without the
    // host waiting (Config::exchange_parts runs the last FFT's parts behind
    // it), and its close_slices may return before the moves have ended (queue
    // 0 waits for them). Otherwise a parted exchange runs execute per move.
    virtual bool lands_slices() const { return false; }
    virtual void land_slices(const ReshapeContext& ctx) { (void)ctx; }
};
FFTUNE_DECLARE_REGISTRY(Transport);

// One reshape's floor traffic (core/engine/reshape.hpp traffic()) by the phase
// that does the work: transports that pack inside the exchange get it all
// there, and one without a receive buffer (cuda_ipc) writes incoming blocks
// into place during the exchange. The self block's copy and the bytes between
// ranks are the exchange's.
struct ReshapePhaseTraffic {
    PhaseTraffic pack, exchange, unpack;
};
ReshapePhaseTraffic phase_traffic(const ReshapePlan& plan, const Transport& transport, const ReshapePhases& phases);

}  // namespace fftune
