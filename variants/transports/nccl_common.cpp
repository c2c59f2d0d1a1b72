#include "variants/transports/nccl_common.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "core/mpi_util.hpp"

namespace fftune::nccl {

void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess && r != ncclInProgress)
        throw std::runtime_error(fmt::format("{}: NCCL error: {}", what, ncclGetErrorString(r)));
}

Comm::Comm(MPI_Comm mpi_comm) {
    int rank = 0, size = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(mpi_comm, &rank));
    FFTUNE_MPI_CHECK(MPI_Comm_size(mpi_comm, &size));
    ncclUniqueId id{};
    if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    FFTUNE_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi_comm));
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
}

std::shared_ptr<Comm> shared_comm(MPI_Comm mpi_comm) {
    // Keyed by handle; a freed and reused handle finds its old entry expired.
    static std::map<MPI_Comm, std::weak_ptr<Comm>> cache;
    if (auto c = cache[mpi_comm].lock()) return c;
    auto c = std::make_shared<Comm>(mpi_comm);
    cache[mpi_comm] = c;
    return c;
}

Comm::~Comm() {
    if (comm_) ncclCommDestroy(comm_);
}

void wait(const Comm& comm, cudaStream_t stream, const char* what) {
    static const double timeout_s = [] {
        const char* v = std::getenv("FFTUNE_NCCL_TIMEOUT_S");
        return v ? std::atof(v) : 300.0;
    }();
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        const cudaError_t q = cudaStreamQuery(stream);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(q)));
        ncclResult_t async = ncclSuccess;
        check(ncclCommGetAsyncError(comm.get(), &async), "ncclCommGetAsyncError");
        if (async != ncclSuccess && async != ncclInProgress) {
            ncclCommAbort(comm.get());
            throw std::runtime_error(fmt::format("{}: NCCL asynchronous error: {}", what, ncclGetErrorString(async)));
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
            ncclCommAbort(comm.get());
            throw std::runtime_error(fmt::format("{}: no completion after {} s (FFTUNE_NCCL_TIMEOUT_S); communicator aborted",
                                                 what, timeout_s));
        }
        std::this_thread::yield();
    }
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
    // NCCL refuses two ranks of one communicator on one GPU (ncclInvalidUsage).
    int devices = 0;
    const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!local_size) local_size = std::getenv("SLURM_NTASKS_PER_NODE");
    if (local_size && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 && std::atoi(local_size) > devices)
        return fmt::format("{} ranks share {} GPU{} on this node; NCCL needs one GPU per rank", local_size, devices,
                           devices == 1 ? "" : "s");
    return std::nullopt;
}

}  // namespace fftune::nccl
