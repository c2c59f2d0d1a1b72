// CUDA IPC pull exchange between the GPUs of one node. Every rank maps, once,
// the buffer each peer holds its block in (cudaIpcGetMemHandle /
// cudaIpcOpenMemHandle, handles swapped over MPI) and, after a barrier, copies
// each incoming block from there straight into place in its destination array:
// transfer and unpack are one copy (copy engines where the block is rows of a
// pitch, Backend::peer_copy_region_on; the copy kernel over NVLink otherwise),
// and no receive buffer exists. Peers' copies run on side queues so that they
// overlap. A second barrier, after the copies, keeps a rank from overwriting
// what peers still read. MPI moves no data, only handles and barriers, so it
// needs no host staging. A plan that keeps its arrays for the job's next plan
// keeps these mappings with them (peer_mappings, core/engine/kept_arrays.hpp):
// the next plan's handles are the same and open_shared finds them open.
//
// Variants:
// - cuda_ipc: each rank packs its peers' blocks into its send buffer, which
//   they map. Timed as pack.k (packing) and exchange.k (barriers and copies).
// - cuda_ipc_direct: peers map the rank's source array itself (a work array
//   of the plan, ReshapePlan::source_owned) and read their blocks where they
//   lie: no pack, no send buffer. Where the source is the caller's array it
//   packs as cuda_ipc does (a caller's array may be freed while mapped). All
//   timed as exchange.k.
// - cuda_ipc_push: the reverse. Peers map the rank's destination array
//   (ReshapePlan::destination_owned) and write their blocks into place there
//   with copy engines: NVLink carries writes, which need no round trip, where
//   the pulls above carry reads. Where the destination is the caller's array
//   it pulls as cuda_ipc_direct does.
// - cuda_ipc_push_sm: cuda_ipc_push with the copy kernel on SMs writing over
//   NVLink instead of copy engines (how NCCL moves data).
// - cuda_ipc_push_rounds: cuda_ipc_push with every peer's copy on one queue,
//   rank r writing to r + 1, r + 2, ... (mod P) in turn: each GPU sends to one
//   peer and receives from one at a time. On 4 x H100 one peer's copy ran at
//   355 GB/s and three at once at 190 GB/s together.
// - cuda_ipc_push_queued: cuda_ipc_push whose slices of an overlapped forward
//   stage are all queued at once, each behind its FFT slice (queues_slices):
//   ranks meet before the first slice and after the last only, where
//   cuda_ipc_push waits for every slice and meets twice per slice. On
//   4 x H100 it lost (1024^3 forward 9.6 against 7.3 ms): unmet, the ranks'
//   rotated copies drift and several GPUs write into one at once
//   (results/h100x4-2026-11-27-queued-slices).
// - cuda_ipc_push_lockstep: cuda_ipc_push_rounds with every slice queued at
//   once, kept in step on the devices: before each slice a rank's copy queue
//   waits for every peer's rounds of the slice before (interprocess events,
//   recorded behind each slice and opened by the peers), so slices do not
//   drift apart and no host waits for a GPU between the first slice and the
//   last. The hosts meet once per slice only to have every record queued
//   before any peer waits on it. It lands slices part-way (land_slices) for
//   Config::exchange_parts.
#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/platform/cuda_check.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {


// A peer's allocation mapped into this process. One mapping per handle per
// process (a handle may be opened once per process), shared by every reshape
// that reads that buffer.
class Mapping {
public:
    explicit Mapping(const cudaIpcMemHandle_t& h) {
        check(cudaIpcOpenMemHandle(&ptr_, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
    }
    ~Mapping() { cudaIpcCloseMemHandle(ptr_); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    const void* get() const { return ptr_; }

private:
    void* ptr_ = nullptr;
};

// A reshape's interprocess event, recorded behind its slice's rounds, and
// the peers' opened here, by phase rank (cuda_ipc_push_lockstep).
struct SliceEvents {
    cudaEvent_t mine = nullptr;
    std::vector<cudaEvent_t> peers;
    SliceEvents() = default;
    SliceEvents(const SliceEvents&) = delete;
    SliceEvents& operator=(const SliceEvents&) = delete;
    ~SliceEvents() {
        for (cudaEvent_t e : peers)
            if (e) cudaEventDestroy(e);
        if (mine) cudaEventDestroy(mine);
    }
};

// The slice a rank queued last, across the instances of one stage: the next
// slice waits for the peers' events of it. None before the first.
const SliceEvents*& last_slice() {
    static const SliceEvents* last = nullptr;
    return last;
}

std::shared_ptr<Mapping> open_shared(const cudaIpcMemHandle_t& h) {
    static std::mutex mutex;
    static std::map<std::array<char, sizeof(cudaIpcMemHandle_t)>, std::weak_ptr<Mapping>> cache;
    std::array<char, sizeof(cudaIpcMemHandle_t)> key;
    std::memcpy(key.data(), &h, sizeof h);
    std::lock_guard lock(mutex);
    if (auto m = cache[key].lock()) return m;
    auto m = std::make_shared<Mapping>(h);
    cache[key] = m;
    return m;
}

struct SharedHandle {
    cudaIpcMemHandle_t handle;
    int valid;            // 0: this rank has no send buffer (it sends nothing)
    char device_bus[32];  // its GPU's PCI bus id (ordinals differ under CUDA_VISIBLE_DEVICES)
};

// Why this rank cannot read the send buffer of a peer on the GPU with PCI bus
// id `theirs` from its own GPU `mine`, or nothing: the same GPU, one that
// cudaDeviceCanAccessPeer says it reaches, or one this process does not see
// (CUDA_VISIBLE_DEVICES per rank): cudaIpcOpenMemHandle may still open handles
// to invisible devices, so that case is left to it.
std::optional<std::string> unreachable(int peer, int mine, const char* my_bus, const char* theirs) {
    if (std::strcmp(my_bus, theirs) == 0) return std::nullopt;
    int device = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&device, theirs) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    if (const cudaError_t e = cudaDeviceCanAccessPeer(&can, mine, device); e != cudaSuccess) {
        cudaGetLastError();
        return fmt::format("cudaDeviceCanAccessPeer({} -> {}): {}", my_bus, theirs, cudaGetErrorString(e));
    }
    if (!can)
        return fmt::format("GPU {} cannot access GPU {} (rank {} of this redistribution) as a peer (no P2P path)",
                           my_bus, theirs, peer);
    return std::nullopt;
}

// How peers' blocks travel: pulled out of the packed send buffer or the
// source array, or pushed into the destination array by copy engines or SMs.
enum class IpcMode { packed, direct, push, push_sm, push_rounds };

class CudaIpc : public Transport {
public:
    CudaIpc(IpcMode mode, bool queued, bool lockstep = false) : mode_(mode), queued_(queued), lockstep_(lockstep) {}
    bool separate_pack_phases() const override { return mode_ == IpcMode::packed; }
    bool uses_staging_buffers() const override { return true; }
    index_t send_buffer_elems(const ReshapePlan& plan) const override {
        return pushes(plan) || reads_in_place(plan) ? 0 : plan.send_total;
    }
    bool uses_recv_buffer() const override { return false; }
    bool uses_mpi() const override { return false; }  // no data through MPI: no host staging
    bool maps_peer_memory() const override { return true; }
    std::vector<std::shared_ptr<const void>> peer_mappings() const override {
        return std::vector<std::shared_ptr<const void>>(peers_.begin(), peers_.end());
    }
    std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const override {
        if (!backend.device_memory())
            return fmt::format("CUDA IPC maps device memory; backend {} keeps data in host memory", backend.name());
        if (gpu_aware) return std::string("CUDA IPC does not send through MPI; gpu_aware applies to MPI transports only");
        return std::nullopt;
    }

    void setup(const ReshapeContext& ctx) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        // IPC reaches the GPUs of one node only; every rank reaches the same verdict.
        MPI_Comm node = MPI_COMM_NULL;
        FFTUNE_MPI_CHECK(MPI_Comm_split_type(ctx.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        int node_size = 0;
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
        if (node_size != n)
            throw Unsupported(fmt::format("cuda_ipc needs every rank of a redistribution on one node; "
                                          "this one spans {} ranks, {} of them on this node", n, node_size));
        // The array peers map: the destination they write into, or the source
        // itself or the packed send buffer they read from.
        push_ = pushes(plan);
        in_place_ = !push_ && reads_in_place(plan);
        const void* shared = push_ ? ctx.destination_array : in_place_ ? ctx.source_array : ctx.send_buffer;
        // Peers map it only where blocks pass through it: a rank that receives
        // nothing may hold an empty destination (no address; a pencil's empty box).
        const bool shares = (push_ ? plan.recv_total : plan.send_total) > 0;
        SharedHandle mine{};
        int device = -1;
        all_or_none(ctx.comm, [&] {  // no rank may stop alone before the exchange below
            if ((push_ || in_place_) && shares && !shared)
                throw std::logic_error("cuda_ipc: a plan-owned array without its address");
            check(cudaGetDevice(&device), "cudaGetDevice");
            check(cudaDeviceGetPCIBusId(mine.device_bus, sizeof mine.device_bus, device), "cudaDeviceGetPCIBusId");
            if (shared && shares) {
                check(cudaIpcGetMemHandle(&mine.handle, const_cast<void*>(shared)), "cudaIpcGetMemHandle");
                mine.valid = 1;
            }
        });
        std::vector<SharedHandle> all(n);
        FFTUNE_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, ctx.comm));
        // Every rank must reach every GPU it copies from; one that cannot makes all refuse.
        std::optional<std::string> why;
        // A rank pulls from the peers it receives from and pushes to those it sends to.
        auto talks_to = [&](int p) { return push_ ? plan.peers[p].send_count > 0 : plan.peers[p].recv_count > 0; };
        for (int p = 0; p < n && !why; ++p)
            if (p != plan.self && talks_to(p)) why = unreachable(p, device, mine.device_bus, all[p].device_bus);
        if (auto e = agree_error(ctx.comm, why.value_or(""))) throw Unsupported("cuda_ipc: " + *e);
        if (lockstep_) share_slice_events(ctx);
        peers_.assign(n, nullptr);
        blocks_.assign(n, nullptr);
        regions_.assign(n, StridedRegion{});
        for (int p = 0; p < n; ++p) {
            if (p == plan.self || !talks_to(p)) continue;
            if (!all[p].valid) throw std::logic_error(fmt::format("cuda_ipc: rank {} exchanges a block but shares no buffer", p));
            peers_[p] = open_shared(all[p].handle);
            // Where peer p holds the block for this rank, by its own plan: in its
            // source array (its send_src) or packed in its send buffer (its
            // displacement); pushing, where it wants this rank's block (its recv_dst).
            const ReshapePlan theirs = make_reshape_plan(plan.phase, p, plan.all_before, plan.all_after, plan.elem_bytes,
                                                       plan.moving_before, plan.moving_after);
            const char* base = static_cast<const char*>(peers_[p]->get());
            if (push_) {
                blocks_[p] = base;
                regions_[p] = theirs.peers[plan.self].recv_dst;
            } else if (in_place_) {
                blocks_[p] = base;
                regions_[p] = theirs.peers[plan.self].send_src;
            } else {
                blocks_[p] = base + theirs.peers[plan.self].send_displ * plan.elem_bytes;
            }
        }
    }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        if (in_place_ && src != ctx.source_array)
            throw std::logic_error("cuda_ipc_direct: the reshape reads another array than the one its peers mapped");
        if (push_ && dst != ctx.destination_array)
            throw std::logic_error("cuda_ipc_push: the reshape writes another array than the one its peers mapped");
        auto pack = [&] {
            if (!in_place_ && !push_)
                for (int p = 0; p < n; ++p)  // peers read the send buffer at fixed places
                    if (p != plan.self) pack_peer(ctx, p, src);
        };
        if (ph.pack >= 0) {
            PhaseScope scope(timer, ph.pack);
            pack();
        }
        {
            PhaseScope scope(timer, ph.exchange);
            if (ph.pack < 0) pack();  // cuda_ipc_direct has no pack phase: the exchange times it
            meet(ctx);                // blocks complete before any peer reads them
            queue_copies(ctx, src, dst);
            meet(ctx);  // done with the peers' arrays on every rank, before anyone overwrites them
        }
        { PhaseScope scope(timer, ph.unpack); }
    }

    // Pushing a slice needs no other rank: this rank's FFT slice wrote its
    // source, and peers read their destination arrays only after the stage.
    bool queues_slices(bool sources_written_by_slices) const override {
        return queued_ && push_ && sources_written_by_slices;
    }
    void open_slices(const ReshapeContext& ctx) override {
        meet(ctx);  // peers' destinations no longer read
        last_slice() = nullptr;
    }
    void queue_slice(const ReshapeContext& ctx, const void* src, void* dst) override {
        if (dst != ctx.destination_array)
            throw std::logic_error("cuda_ipc_push: the reshape writes another array than the one its peers mapped");
        if (lockstep_) queue_rounds(ctx, src, dst);
        else queue_copies(ctx, src, dst);
    }
    void close_slices(const ReshapeContext& ctx) override {
        if (lockstep_) land_slices(ctx);  // queue 0 waits; the next open_slices meets
        else meet(ctx);                   // every rank's slices are in place
    }
    bool lands_slices() const override { return lockstep_ && push_; }
    // Queue 0 waits for every peer's last queued slice: each peer's slices
    // run in order on one queue, so all its moves so far have ended.
    void land_slices(const ReshapeContext& ctx) override {
        const SliceEvents* last = last_slice();
        if (!last) return;
        auto* q0 = static_cast<cudaStream_t>(ctx.backend->native_stream_of(0));
        for (std::size_t e = 0; e < last->peers.size(); ++e)
            if (static_cast<int>(e) != ctx.plan->self)
                check(cudaStreamWaitEvent(q0, last->peers[e], 0), "cudaStreamWaitEvent (peer slice)");
    }

private:
    // Every rank's queue 0 has reached this point.
    static void meet(const ReshapeContext& ctx) {
        ctx.backend->synchronize();
        FFTUNE_MPI_CHECK(MPI_Barrier(ctx.comm));
    }
    // This rank's copies of the reshape, on side queues after queue 0's work,
    // peers in rotated order (rank r first copies with r + 1: in each round
    // every GPU sends to one peer and receives from one); queue 0 waits for them.
    void queue_copies(const ReshapeContext& ctx, const void* src, void* dst) {
        const ReshapePlan& plan = *ctx.plan;
        Backend& backend = *ctx.backend;
        const int n = static_cast<int>(plan.peers.size());
        fork_queues(backend);
        std::size_t k = 0;
        const bool rounds = push_ && mode_ == IpcMode::push_rounds;
        for (int r = 1; r <= n; ++r) {
            const int p = (plan.self + r) % n;
            if (!blocks_[p]) continue;
            if (push_)
                push_block(ctx, p, src, blocks_[p], regions_[p], side_queue(backend, rounds ? 0 : k++));
            else if (in_place_)
                pull_block(ctx, p, dst, blocks_[p], regions_[p], side_queue(backend, k++));
            else
                unpack_block(ctx, p, dst, blocks_[p], side_queue(backend, k++));
        }
        copy_self(ctx, src, dst, side_queue(backend, rounds ? 1 : k));  // beside the rounds
        join_queues(backend);
    }
    // cuda_ipc_push_lockstep's copies of one slice, in rounds on side queue 0
    // (round r writes to peer self + r) once every peer has ended its rounds
    // of the slice before; then this rank's event is recorded, and the hosts
    // meet so that no peer waits on a record not yet queued
    // (cudaStreamWaitEvent takes the latest one queued). In step per slice,
    // not per round: a first run waiting before every round lost 5-10% to
    // the waits (results/h200x4-2026-11-28-parted-exchange). The self block
    // moves on side queue 1 beside the rounds; queue 0 waits for both.
    void queue_rounds(const ReshapeContext& ctx, const void* src, void* dst) {
        const ReshapePlan& plan = *ctx.plan;
        Backend& backend = *ctx.backend;
        const int n = static_cast<int>(plan.peers.size());
        fork_queues(backend);
        const int q = side_queue(backend, 0);
        auto* stream = static_cast<cudaStream_t>(backend.native_stream_of(q));
        if (const SliceEvents* last = last_slice())
            for (int e = 0; e < n; ++e)
                if (e != plan.self) check(cudaStreamWaitEvent(stream, last->peers[e], 0), "cudaStreamWaitEvent (peer slice)");
        for (int r = 1; r < n; ++r) {
            const int p = (plan.self + r) % n;
            if (blocks_[p]) push_block(ctx, p, src, blocks_[p], regions_[p], q);
        }
        // One record per instance and transform: the next one comes after the
        // next open_slices, when every peer has queued its wait on this one.
        check(cudaEventRecord(events_->mine, stream), "cudaEventRecord (slice)");
        FFTUNE_MPI_CHECK(MPI_Barrier(ctx.comm));
        last_slice() = events_.get();
        copy_self(ctx, src, dst, side_queue(backend, 1));
        join_queues(backend);
    }
    // Makes this rank's slice event and opens every peer's (collective).
    void share_slice_events(const ReshapeContext& ctx) {
        const int n = static_cast<int>(ctx.plan->peers.size());
        events_ = std::make_unique<SliceEvents>();
        cudaIpcEventHandle_t mine{};
        all_or_none(ctx.comm, [&] {
            check(cudaEventCreateWithFlags(&events_->mine, cudaEventDisableTiming | cudaEventInterprocess),
                  "cudaEventCreate (interprocess)");
            check(cudaIpcGetEventHandle(&mine, events_->mine), "cudaIpcGetEventHandle");
        });
        std::vector<cudaIpcEventHandle_t> all(n);
        FFTUNE_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, ctx.comm));
        events_->peers.assign(n, nullptr);
        all_or_none(ctx.comm, [&] {
            for (int p = 0; p < n; ++p)
                if (p != ctx.plan->self) check(cudaIpcOpenEventHandle(&events_->peers[p], all[p]), "cudaIpcOpenEventHandle");
        });
    }
    // Whether peers read this reshape's blocks in the source array itself.
    bool reads_in_place(const ReshapePlan& plan) const { return mode_ != IpcMode::packed && plan.source_owned; }
    // Whether this rank writes its blocks into the peers' destination arrays.
    bool pushes(const ReshapePlan& plan) const {
        return mode_ >= IpcMode::push && plan.destination_owned;
    }
    // This rank's block for peer p, from where it lies in `src` to where p
    // wants it in its destination array (mapped at `peer_dst`).
    void push_block(const ReshapeContext& ctx, int p, const void* src, const void* peer_dst, const StridedRegion& there,
                    int queue) const {
        const ReshapePlan& plan = *ctx.plan;
        if (plan.peers[p].send_count == 0) return;
        void* to = const_cast<void*>(peer_dst);
        if (mode_ == IpcMode::push_sm)
            ctx.backend->copy_region_on(queue, to, there, src, plan.peers[p].send_src, plan.elem_bytes);
        else
            ctx.backend->peer_copy_region_on(queue, to, there, src, plan.peers[p].send_src, plan.elem_bytes);
    }

    IpcMode mode_;
    bool queued_;    // slices of an overlapped stage queued (queues_slices)
    bool lockstep_;  // queued slices kept in step by the peers' events (queue_rounds)
    std::unique_ptr<SliceEvents> events_;
    bool push_ = false;
    bool in_place_ = false;
    std::vector<std::shared_ptr<Mapping>> peers_;
    std::vector<const void*> blocks_;      // peer p's mapped array (in place, push) or its packed block for this rank
    std::vector<StridedRegion> regions_;  // where the block lies in peer p's source (in place) or destination (push)
};

template <IpcMode M, bool Queued = false, bool Lockstep = false>
struct CudaIpcIn final : CudaIpc {
    CudaIpcIn() : CudaIpc(M, Queued, Lockstep) {}
};

const bool registered = register_variant<Transport, CudaIpcIn<IpcMode::packed>>("cuda_ipc");
const bool registered_direct = register_variant<Transport, CudaIpcIn<IpcMode::direct>>("cuda_ipc_direct");
const bool registered_push = register_variant<Transport, CudaIpcIn<IpcMode::push>>("cuda_ipc_push");
const bool registered_push_sm = register_variant<Transport, CudaIpcIn<IpcMode::push_sm>>("cuda_ipc_push_sm");
const bool registered_push_rounds =
    register_variant<Transport, CudaIpcIn<IpcMode::push_rounds>>("cuda_ipc_push_rounds");
const bool registered_push_queued =
    register_variant<Transport, CudaIpcIn<IpcMode::push, true>>("cuda_ipc_push_queued");
const bool registered_push_lockstep =
    register_variant<Transport, CudaIpcIn<IpcMode::push_rounds, true, true>>("cuda_ipc_push_lockstep");

}  // namespace
}  // namespace fftune
