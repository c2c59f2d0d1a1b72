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
//   waits for every peer's rounds of the slice before (a word each peer
//   writes into this rank's flag block behind its copies, waited for with a
//   stream memory operation), so slices do not drift apart and no host waits
//   for a GPU or another host between the first slice and the last. It lands
//   slices part-way (land_slices) for Config::exchange_parts.
#include <cuda.h>  // types of the stream memory operations only (no libcuda linked)
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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

// cuda_ipc_push_lockstep's flags: every process holds one block of 32-bit
// words in device memory that its peers map. A lockstep reshape owns `n`
// words of it at the same place on every rank (its slot); after its copies of
// a slice, rank e writes the slice's count into word e of the slot in every
// peer's block, and a peer's copy queue waits for its own words to reach it
// (stream memory operations: the GPUs' front ends wait, no host and no SM).
constexpr std::size_t kFlagWords = std::size_t{1} << 18;  // 1 MiB

struct FlagBlock {
    std::uint32_t* words = nullptr;
    cudaIpcMemHandle_t handle{};
    std::size_t next = 0;  // the next free word (slots wrap around)
};
FlagBlock& flag_block() {
    static FlagBlock block;
    if (!block.words) {  // never freed: peers may map it as long as the process lives
        check(cudaMalloc(&block.words, kFlagWords * sizeof(std::uint32_t)), "cudaMalloc (lockstep flags)");
        check(cudaMemset(block.words, 0, kFlagWords * sizeof(std::uint32_t)), "cudaMemset (lockstep flags)");
        check(cudaIpcGetMemHandle(&block.handle, block.words), "cudaIpcGetMemHandle (lockstep flags)");
    }
    return block;
}

// cuStreamWaitValue32 / cuStreamWriteValue32, from the driver at run time (the
// library links no libcuda, which machines without a GPU lack).
struct StreamMemOps {
    using Op = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
    Op wait = nullptr, write = nullptr;
};
const StreamMemOps& stream_memops() {
    static const StreamMemOps ops = [] {
        StreamMemOps m;
        cudaDriverEntryPointQueryResult found{};
        check(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", reinterpret_cast<void**>(&m.wait), 12000,
                                               cudaEnableDefault, &found),
              "cudaGetDriverEntryPointByVersion (cuStreamWaitValue32)");
        check(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", reinterpret_cast<void**>(&m.write), 12000,
                                               cudaEnableDefault, &found),
              "cudaGetDriverEntryPointByVersion (cuStreamWriteValue32)");
        if (!m.wait || !m.write) throw std::runtime_error("the CUDA driver has no stream memory operations");
        return m;
    }();
    return ops;
}
void check_cu(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) throw std::runtime_error(fmt::format("{}: CUresult {}", what, static_cast<int>(r)));
}

// The slice a rank queued last in the stage under way: the next slice's
// copies wait for every peer's word of its slot to reach its count.
struct LastSlice {
    std::size_t slot = 0;
    std::uint32_t count = 0;  // 0: none (the first slice after open_slices)
};
LastSlice& last_slice() {
    static LastSlice last;
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
        if (lockstep_) share_flags(ctx);
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
        last_slice() = {};
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
        wait_for_peers(ctx, static_cast<cudaStream_t>(ctx.backend->native_stream_of(0)), last_slice());
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
    // of the slice before; then this rank's word of the slot in every peer's
    // flag block takes the slice's count. In step per slice, not per round: a
    // first run waiting before every round (on interprocess events) lost 5-10%
    // (results/h200x4-2026-11-28-parted-exchange). The self block moves on
    // side queue 1 beside the rounds; queue 0 waits for both.
    void queue_rounds(const ReshapeContext& ctx, const void* src, void* dst) {
        const ReshapePlan& plan = *ctx.plan;
        Backend& backend = *ctx.backend;
        const int n = static_cast<int>(plan.peers.size());
        fork_queues(backend);
        const int q = side_queue(backend, 0);
        auto* stream = static_cast<cudaStream_t>(backend.native_stream_of(q));
        wait_for_peers(ctx, stream, last_slice());
        for (int r = 1; r < n; ++r) {
            const int p = (plan.self + r) % n;
            if (blocks_[p]) push_block(ctx, p, src, blocks_[p], regions_[p], q);
        }
        // The same count on every rank: each queues the same slices.
        const std::uint32_t count = ++slices_queued_;
        for (int e = 0; e < n; ++e)
            if (e != plan.self)  // after the copies, with a fence before the write (the default)
                check_cu(stream_memops().write(stream, word(peer_flags_[e], plan.self), count, 0), "cuStreamWriteValue32");
        last_slice() = {slot_, count};
        copy_self(ctx, src, dst, side_queue(backend, 1));
        join_queues(backend);
    }
    // `stream` waits until every peer has written at least `last.count` into
    // its word of slot `last.slot` in this rank's flag block.
    void wait_for_peers(const ReshapeContext& ctx, cudaStream_t stream, const LastSlice& last) const {
        if (last.count == 0) return;
        std::uint32_t* mine = flag_block().words;
        const int n = static_cast<int>(ctx.plan->peers.size());
        for (int e = 0; e < n; ++e)
            if (e != ctx.plan->self)
                check_cu(stream_memops().wait(stream, reinterpret_cast<CUdeviceptr>(mine + last.slot + e), last.count,
                                              CU_STREAM_WAIT_VALUE_GEQ),
                         "cuStreamWaitValue32");
    }
    CUdeviceptr word(const void* block, int e) const {
        return reinterpret_cast<CUdeviceptr>(static_cast<const std::uint32_t*>(block) + slot_ + e);
    }
    // This reshape's slot, the same on every rank (the largest free one), its
    // words zeroed before any peer can write them, and every peer's block
    // mapped (collective).
    void share_flags(const ReshapeContext& ctx) {
        const int n = static_cast<int>(ctx.plan->peers.size());
        std::uint64_t next = 0;
        all_or_none(ctx.comm, [&] { next = flag_block().next; });
        std::uint64_t agreed = 0;
        FFTUNE_MPI_CHECK(MPI_Allreduce(&next, &agreed, 1, MPI_UINT64_T, MPI_MAX, ctx.comm));
        if (agreed + n > kFlagWords) agreed = 0;  // wrap: a slot is reused once its stage has gone
        slot_ = agreed;
        FlagBlock& block = flag_block();
        block.next = agreed + n;
        all_or_none(ctx.comm, [&] {
            check(cudaMemset(block.words + slot_, 0, n * sizeof(std::uint32_t)), "cudaMemset (lockstep slot)");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (lockstep slot)");
        });
        std::vector<cudaIpcMemHandle_t> all(n);
        FFTUNE_MPI_CHECK(MPI_Allgather(&block.handle, sizeof block.handle, MPI_BYTE, all.data(), sizeof block.handle,
                                       MPI_BYTE, ctx.comm));
        flag_maps_.assign(n, nullptr);
        peer_flags_.assign(n, nullptr);
        all_or_none(ctx.comm, [&] {
            for (int p = 0; p < n; ++p)
                if (p != ctx.plan->self) {
                    flag_maps_[p] = open_shared(all[p]);
                    peer_flags_[p] = flag_maps_[p]->get();
                }
        });
        slices_queued_ = 0;
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
    bool lockstep_;  // queued slices kept in step by flags in the peers' memory (queue_rounds)
    std::size_t slot_ = 0;               // this reshape's words in every rank's flag block
    std::uint32_t slices_queued_ = 0;    // slices this reshape has queued (the count it writes)
    std::vector<std::shared_ptr<Mapping>> flag_maps_;  // peers' flag blocks, mapped
    std::vector<const void*> peer_flags_;
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
