// CUDA IPC pull exchange between the GPUs of one node: each rank packs its
// peers' blocks into its send buffer, maps every peer's send buffer into its
// own address space once (cudaIpcGetMemHandle / cudaIpcOpenMemHandle, handles
// swapped over MPI), and after a barrier copies each incoming block straight
// from the peer's send buffer into place in its destination array: transfer
// and unpack are one copy (copy engines for contiguous blocks, the copy kernel
// over NVLink for strided ones), and no receive buffer exists. Peers' copies
// run on side queues so that they overlap. A second barrier, after the copies,
// keeps a rank from repacking while peers still read. MPI moves no data, only
// handles and barriers, so it needs no host staging. Timed as pack.k (packing)
// and exchange.k (barriers and copies); unpack.k is empty.
#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/platform/mpi_util.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(fmt::format("cuda_ipc: {}: {}", what, cudaGetErrorString(e)));
}

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

class CudaIpc final : public Transport {
public:
    bool separate_pack_phases() const override { return true; }
    bool uses_recv_buffer() const override { return false; }
    bool uses_mpi() const override { return false; }  // no data through MPI: no host staging
    bool maps_peer_memory() const override { return true; }
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
        SharedHandle mine{};
        int device = -1;
        all_or_none(ctx.comm, [&] {  // no rank may stop alone before the exchange below
            check(cudaGetDevice(&device), "cudaGetDevice");
            check(cudaDeviceGetPCIBusId(mine.device_bus, sizeof mine.device_bus, device), "cudaDeviceGetPCIBusId");
            if (ctx.send_buffer && plan.send_total > 0) {
                check(cudaIpcGetMemHandle(&mine.handle, ctx.send_buffer), "cudaIpcGetMemHandle");
                mine.valid = 1;
            }
        });
        std::vector<SharedHandle> all(n);
        FFTUNE_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, ctx.comm));
        // Every rank must reach every GPU it copies from; one that cannot makes all refuse.
        std::optional<std::string> why;
        for (int p = 0; p < n && !why; ++p)
            if (p != plan.self && plan.peers[p].recv_count > 0)
                why = unreachable(p, device, mine.device_bus, all[p].device_bus);
        if (auto e = agree_error(ctx.comm, why.value_or(""))) throw Unsupported("cuda_ipc: " + *e);
        peers_.assign(n, nullptr);
        blocks_.assign(n, nullptr);
        for (int p = 0; p < n; ++p) {
            if (p == plan.self || plan.peers[p].recv_count == 0) continue;
            if (!all[p].valid) throw std::logic_error(fmt::format("cuda_ipc: rank {} sends a block but has no send buffer", p));
            peers_[p] = open_shared(all[p].handle);
            // Where peer p packs the block for this rank: its own plan's displacement.
            const ReshapePlan theirs = make_reshape_plan(plan.phase, p, plan.all_before, plan.all_after, plan.elem_bytes,
                                                       plan.moving_before, plan.moving_after);
            blocks_[p] = static_cast<const char*>(peers_[p]->get()) + theirs.peers[plan.self].send_displ * plan.elem_bytes;
        }
    }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        Backend& backend = *ctx.backend;
        const int n = static_cast<int>(plan.peers.size());
        {
            PhaseScope scope(timer, ph.pack);
            for (int p = 0; p < n; ++p)  // always packed: peers read the send buffer at fixed places
                if (p != plan.self) pack_peer(ctx, p, src);
        }
        {
            PhaseScope scope(timer, ph.exchange);
            backend.synchronize();  // packed blocks complete before any peer reads them
            FFTUNE_MPI_CHECK(MPI_Barrier(ctx.comm));
            fork_queues(backend);
            std::size_t k = 0;
            for (int p = 0; p < n; ++p)
                if (blocks_[p]) unpack_block(ctx, p, dst, blocks_[p], side_queue(backend, k++));
            copy_self(ctx, src, dst, side_queue(backend, k));
            join_queues(backend);
            backend.synchronize();  // done reading the peers' buffers ...
            FFTUNE_MPI_CHECK(MPI_Barrier(ctx.comm));  // ... on every rank, before anyone repacks
        }
        { PhaseScope scope(timer, ph.unpack); }
    }

private:
    std::vector<std::shared_ptr<Mapping>> peers_;
    std::vector<const void*> blocks_;  // peer p's block for this rank, in p's send buffer
};

const bool registered = register_variant<Transport, CudaIpc>("cuda_ipc");

}  // namespace
}  // namespace fftune
