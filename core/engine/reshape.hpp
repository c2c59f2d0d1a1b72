// Reshape (global redistribution) between two box distributions that share a
// memory order. The pack plan lists, per peer of the phase communicator, which
// sub-box goes where; a message always holds its sub-box densely in that memory
// order, so pack and unpack agree without negotiation. Transports execute it.
#pragma once

#include <vector>

#include "core/platform/backend.hpp"
#include "core/base/box.hpp"
#include "core/platform/mpi_util.hpp"

namespace fftune {

struct PeerBlock {
    index_t send_count = 0;   // elements this rank sends to the peer
    index_t recv_count = 0;   // elements this rank receives from the peer
    StridedRegion send_src;   // where the outgoing sub-box lies in the source array
    StridedRegion recv_dst;   // where the incoming sub-box goes in the destination array
    index_t send_displ = 0;   // offset in the packed send buffer (elements)
    index_t recv_displ = 0;   // offset in the packed receive buffer (elements)
};

struct ReshapePlan {
    int phase = 0;                 // 0 for the first redistribution of a transform, 1 for the next
    Layout before;                 // this rank's layout before the reshape
    Layout after;                  // and after it
    std::vector<Layout> all_before;  // every phase-communicator rank's layout, by phase rank
    std::vector<Layout> all_after;
    // The part of each rank's before / after box this reshape moves: the whole
    // box, or one slice of it when an overlapped stage reshapes slice by slice.
    std::vector<Box3> moving_before;
    std::vector<Box3> moving_after;
    std::vector<PeerBlock> peers;  // by phase-communicator rank
    int self = 0;                  // this rank in the phase communicator
    // The self block is in the destination already (the FFT before the
    // reshape stored it there, Config::fft_stores_kept): copy_self does nothing.
    bool self_in_place = false;
    // The source array is a work array of the plan, an allocation of its own
    // that lives as long as the plan: peers may map it once and read their
    // blocks in place (cuda_ipc_direct). False where it is the caller's input.
    bool source_owned = false;
    // The same for the destination array: peers may map it and write their
    // blocks into it (cuda_ipc_push).
    bool destination_owned = false;
    std::size_t elem_bytes = 0;
    index_t send_total = 0;        // elements in the packed send buffer: every peer's but the self block
    index_t recv_total = 0;

    // The global box phase rank `from` sends to phase rank `to`.
    Box3 block(int from, int to) const;
    // Pack needed when any outgoing sub-box is scattered in the source array.
    bool any_send_scattered() const;
    bool any_recv_scattered() const;
};

// The least traffic one rank's reshape can cost, in bytes: on its device, every
// scattered outgoing block read and packed (pack), every scattered incoming one
// unpacked (unpack), the self block copied (self_copy; none when it is in
// place already), each counted read +
// write; between ranks, what it sends and receives. Blocks already contiguous
// travel in place. Floors of the pack/exchange/unpack phases (results/README.md).
struct ReshapeTraffic {
    std::size_t pack = 0, unpack = 0, self_copy = 0;
    std::size_t sent = 0, received = 0;
};
ReshapeTraffic traffic(const ReshapePlan& plan);

// Builds the pack plan from every phase rank's before/after layouts (computed
// identically on all ranks, no communication needed). `moving_before` /
// `moving_after` (one box per rank, inside its layout's box; empty: the whole
// boxes) restrict it to the elements of one slice; regions still address the
// whole arrays.
ReshapePlan make_reshape_plan(int phase, int self, const std::vector<Layout>& all_before,
                              const std::vector<Layout>& all_after, std::size_t elem_bytes,
                              const std::vector<Box3>& moving_before = {},
                              const std::vector<Box3>& moving_after = {});

// Everything a transport needs to move one reshape's bytes.
struct ReshapeContext {
    const ReshapePlan* plan = nullptr;
    MPI_Comm comm = MPI_COMM_NULL;   // the phase communicator
    Backend* backend = nullptr;
    MPI_Datatype element = MPI_DATATYPE_NULL;  // one element as MPI_BYTEs
    void* send_buffer = nullptr;     // packed send staging (send_total elements)
    void* recv_buffer = nullptr;     // packed receive staging (recv_total elements)
    // The source array where plan->source_owned (the start of its allocation), else null.
    const void* source_array = nullptr;
    // The destination array where plan->destination_owned, else null.
    void* destination_array = nullptr;
    // Host staging for MPI that cannot read device memory (set only then, pinned):
    // packed transports pack straight into host_send and unpack from host_recv;
    // whole-array transports (derived datatypes) use mirrors of source and destination.
    void* host_send = nullptr;
    void* host_recv = nullptr;
    void* host_src_mirror = nullptr;
    void* host_dst_mirror = nullptr;
    bool host_staged() const { return host_send != nullptr || host_src_mirror != nullptr; }
};

// Pack/unpack helpers shared by the transports, on backend queue `queue`.
void pack_peer(const ReshapeContext& ctx, int peer, const void* src, int queue = 0);
void unpack_peer(const ReshapeContext& ctx, int peer, void* dst, int queue = 0);
// Pack the block for `peer` densely at `block` (its first element), e.g. a
// fixed-size slot of an equal-count collective.
void pack_block(const ReshapeContext& ctx, int peer, const void* src, void* block, int queue = 0);
// Unpack the peer's block from the peer's own send buffer, mapped into this
// process (`block`: its first element; Backend::peer_copy_region_on).
void unpack_block(const ReshapeContext& ctx, int peer, void* dst, const void* block, int queue = 0);
// Copy the peer's block for this rank straight out of the peer's source array,
// mapped into this process at `peer_source`, where it lies at `region` (the
// peer's send_src for this rank), into place: no pack, no receive buffer.
void pull_block(const ReshapeContext& ctx, int peer, void* dst, const void* peer_source, const StridedRegion& region,
                int queue = 0);
// Self block: source region straight into the destination region.
void copy_self(const ReshapeContext& ctx, const void* src, void* dst, int queue = 0);

// Side queues (1 ..) start after the main queue's work so far (its source is
// ready); join: the main queue continues after all of theirs, so the phase's
// clock and the next stage see the whole reshape.
void fork_queues(Backend& backend);
void join_queues(Backend& backend);
// The side queue for the k-th of several independent pieces of work
// (round robin over 1 .., or 0 when the backend has no other).
int side_queue(const Backend& backend, std::size_t k);

// Whether a peer's block needs packing / unpacking: when it is scattered in its
// array, or always when MPI reads host staging buffers.
bool must_pack(const ReshapeContext& ctx, int peer);
bool must_unpack(const ReshapeContext& ctx, int peer);
// Pointers that a message is sent from / received into: the array itself when
// the region is contiguous, the packed (or host-staged) buffer otherwise.
const void* send_pointer(const ReshapeContext& ctx, int peer, const void* src);
void* recv_pointer(const ReshapeContext& ctx, int peer, void* dst);
// Whole-array staging: the host mirror of the source (copied now) or `src`
// itself; the destination to hand to MPI; and the copy back after the exchange.
const void* staged_source(const ReshapeContext& ctx, const void* src);
void* staged_destination(const ReshapeContext& ctx, void* dst);
void finish_staged_destination(const ReshapeContext& ctx, void* dst);

}  // namespace fftune
