#include "variants/transports/nccl_common.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/platform/mpi_util.hpp"

namespace fftune::nccl {

namespace {
int made = 0;
}  // namespace

void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess && r != ncclInProgress)
        throw std::runtime_error(fmt::format("{}: NCCL error: {}", what, ncclGetErrorString(r)));
}

Comm::Comm(MPI_Comm mpi_comm) {
    int rank = 0, size = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(mpi_comm, &rank));
    FFTUNE_MPI_CHECK(MPI_Comm_size(mpi_comm, &size));
    ncclUniqueId id{};
    all_or_none(mpi_comm, [&] {  // the others would wait in the broadcast for a rank 0 that failed
        if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    });
    FFTUNE_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi_comm));
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    ++made;
}

int communicators_made() { return made; }

void Comm::abort() {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
}

Comm::~Comm() {
    if (comm_) ncclCommDestroy(comm_);
}

namespace {

// A group of ranks as their MPI_COMM_WORLD ranks in `mpi_comm`'s order, and
// this rank's device: equal on every member for congruent communicators,
// whatever their handles.
struct GroupKey {
    std::vector<int> world_ranks;
    int device = -1;
    auto operator<=>(const GroupKey&) const = default;
};

GroupKey group_key(MPI_Comm mpi_comm) {
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    FFTUNE_MPI_CHECK(MPI_Comm_group(mpi_comm, &group));
    FFTUNE_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int size = 0;
    FFTUNE_MPI_CHECK(MPI_Group_size(group, &size));
    std::vector<int> ranks(static_cast<std::size_t>(size));
    std::iota(ranks.begin(), ranks.end(), 0);
    GroupKey key{std::vector<int>(ranks.size()), -1};
    FFTUNE_MPI_CHECK(MPI_Group_translate_ranks(group, size, ranks.data(), world, key.world_ranks.data()));
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    if (cudaGetDevice(&key.device) != cudaSuccess) throw std::runtime_error("NCCL communicator: cudaGetDevice failed");
    return key;
}

// Never destroyed by static destructors (they run after MPI_Finalize, maybe
// after the CUDA runtime is gone): emptied by a delete callback on
// MPI_COMM_SELF, which MPI_Finalize runs first. The map's order is the same on
// every rank, so the members of a communicator destroy it in the same turn.
std::map<GroupKey, std::shared_ptr<Comm>>& cache() {
    static auto* map = new std::map<GroupKey, std::shared_ptr<Comm>>;
    return *map;
}

int release_cache(MPI_Comm, int, void*, void*) {
    cache().clear();
    return MPI_SUCCESS;
}

void release_at_finalize() {
    static const bool registered = [] {
        int keyval = MPI_KEYVAL_INVALID;
        FFTUNE_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_cache, &keyval, nullptr));
        FFTUNE_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr));
        return true;
    }();
    (void)registered;
}

}  // namespace

std::shared_ptr<Comm> shared_comm(MPI_Comm mpi_comm) {
    release_at_finalize();
    std::shared_ptr<Comm>* found = nullptr;
    all_or_none(mpi_comm, [&] { found = &cache()[group_key(mpi_comm)]; });
    auto& slot = *found;
    // Reuse only where every member can: one that aborted its copy (or never
    // made one) makes them all initialise a new communicator together.
    int usable = slot && !slot->aborted(), all_usable = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, mpi_comm));
    if (!all_usable) {
        // A peer aborted its side: this copy is unusable too, and destroying it
        // could wait on that peer, so abort it (local) before replacing it.
        if (slot && !slot->aborted()) slot->abort();
        slot = std::make_shared<Comm>(mpi_comm);
    }
    return slot;
}

void wait(Comm& comm, cudaStream_t stream, const char* what, double timeout_s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        const cudaError_t q = cudaStreamQuery(stream);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(q)));
        ncclResult_t async = ncclSuccess;
        check(ncclCommGetAsyncError(comm.get(), &async), "ncclCommGetAsyncError");
        if (async != ncclSuccess && async != ncclInProgress) {
            comm.abort();
            throw std::runtime_error(fmt::format("{}: NCCL asynchronous error: {}", what, ncclGetErrorString(async)));
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
            comm.abort();
            throw std::runtime_error(fmt::format("{}: no completion after {} s (FFTUNE_NCCL_TIMEOUT_S); communicator aborted",
                                                 what, timeout_s));
        }
        std::this_thread::yield();
    }
}

void connect_peers(Comm& comm, MPI_Comm mpi_comm, double timeout_s) {
    int size = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_size(mpi_comm, &size));
    constexpr std::size_t per_peer = std::size_t{4} << 20;  // enough to use every channel of a pair
    struct Scratch {
        char* bytes = nullptr;
        cudaStream_t stream = nullptr;
        ~Scratch() {
            if (stream) cudaStreamDestroy(stream);
            if (bytes) cudaFree(bytes);
        }
    } s;
    all_or_none(mpi_comm, [&] {
        if (cudaMalloc(&s.bytes, 2 * per_peer * std::size_t(size)) != cudaSuccess ||
            cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking) != cudaSuccess)
            throw std::runtime_error(fmt::format("NCCL's first exchange: {}", cudaGetErrorString(cudaGetLastError())));
    });
    group([&] {
        for (int peer = 0; peer < size; ++peer) {
            check(ncclSend(s.bytes + std::size_t(peer) * per_peer, per_peer, ncclUint8, peer, comm.get(), s.stream),
                  "ncclSend");
            check(ncclRecv(s.bytes + std::size_t(size + peer) * per_peer, per_peer, ncclUint8, peer, comm.get(),
                           s.stream),
                  "ncclRecv");
        }
    });
    wait(comm, s.stream, "NCCL's first exchange", timeout_s);
}

void TransportBase::start_job(MPI_Comm comm, const Backend& backend) {
    (void)backend;  // made it this rank's device
    const auto shared = shared_comm(comm);
    connect_peers(*shared, comm, nccl_timeout_s());
}

void TransportBase::post(const ReshapeContext& ctx, int to, int from, const void* src, void* dst,
                         cudaStream_t stream) const {
    const ReshapePlan& plan = *ctx.plan;
    const std::size_t e = plan.elem_bytes;
    const PeerBlock &s = plan.peers[to], &r = plan.peers[from];
    if (s.send_count > 0)
        check(ncclSend(send_pointer(ctx, to, src), s.send_count * e, ncclUint8, to, comm_->get(), stream), "ncclSend");
    if (r.recv_count > 0)
        check(ncclRecv(recv_pointer(ctx, from, dst), r.recv_count * e, ncclUint8, from, comm_->get(), stream), "ncclRecv");
}

std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) {
    if (!backend.device_memory())
        return fmt::format("NCCL moves device memory; backend {} keeps data in host memory", backend.name());
    if (gpu_aware) return std::string("NCCL does not send through MPI; gpu_aware applies to MPI transports only");
    return std::nullopt;
}

std::optional<std::string> not_runnable_here(const Backend& backend) {
    if (!backend.device_memory()) return std::nullopt;  // not_applicable's answer
    int devices = 0;
    const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!local_size) local_size = std::getenv("SLURM_NTASKS_PER_NODE");
    if (local_size && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 && std::atoi(local_size) > devices)
        return fmt::format("{} ranks share {} GPU{} on this node; NCCL needs one GPU per rank", local_size, devices,
                           devices == 1 ? "" : "s");
    return std::nullopt;
}

}  // namespace fftune::nccl
