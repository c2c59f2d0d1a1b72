// NCCL plumbing shared by the device-direct transports: a communicator per
// phase communicator (unique id broadcast over MPI), completion polling with a
// timeout so that a hang becomes an error instead of a stuck job, and a base
// class (TransportBase) holding what every NCCL transport does the same way,
// so that each transport file keeps only its exchange schedule.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <optional>
#include <string>

#include "core/platform/backend.hpp"
#include "core/engine/reshape.hpp"
#include "core/platform/settings.hpp"
#include "core/engine/transport.hpp"

namespace fftune::nccl {

class Comm {
public:
    Comm() = default;
    // Collective over `mpi_comm`; the current CUDA device must be the backend's.
    explicit Comm(MPI_Comm mpi_comm);
    ~Comm();
    Comm(const Comm&) = delete;
    Comm& operator=(const Comm&) = delete;
    ncclComm_t get() const { return comm_; }
    // ncclCommAbort (after an error or a timeout): the communicator is unusable
    // and is not destroyed again; shared_comm makes a new one for its group.
    void abort();
    bool aborted() const { return comm_ == nullptr; }

private:
    ncclComm_t comm_ = nullptr;
};

void check(ncclResult_t r, const char* what);

// The communicator for the ranks of `mpi_comm` on this device, made once per
// process: every transport, plan and sweep point on the same group of ranks
// shares it, since ncclCommInitRank costs ~0.4 s even at one rank and a sweep
// makes a plan per point. Collective over `mpi_comm` (one MPI_Allreduce when
// cached); cached communicators are destroyed in MPI_Finalize.
std::shared_ptr<Comm> shared_comm(MPI_Comm mpi_comm);
// Communicators this process has initialised (ncclCommInitRank calls).
int communicators_made();

// One exchange of a few MiB with every member of `mpi_comm` through `comm`
// (its communicator): NCCL connects a pair of ranks on their first send and
// receive, which would otherwise fall in the first steps that use the pair.
// Collective; the current CUDA device must be the communicator's.
void connect_peers(Comm& comm, MPI_Comm mpi_comm, double timeout_s);

// Waits until `stream` is idle, polling ncclCommGetAsyncError; aborts the
// communicator and throws after `timeout_s` seconds.
void wait(Comm& comm, cudaStream_t stream, const char* what, double timeout_s);

// ncclGroupStart, the calls `f` makes, ncclGroupEnd. When `f` throws (an NCCL
// call in it failed), the group is still ended, so that the thread's later
// NCCL calls are not swallowed into it: NCCL then cancels every call of the
// group (a failed call makes the whole group fail), and `f`'s error is thrown.
template <class F>
void group(F&& f) {
    check(ncclGroupStart(), "ncclGroupStart");
    try {
        f();
    } catch (...) {
        (void)ncclGroupEnd();
        throw;
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
}

// NCCL needs device buffers; MPI's gpu_aware flag does not apply to it.
std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware);
// NCCL refuses two ranks of one communicator on one GPU (ncclInvalidUsage):
// more ranks on this node than GPUs (from the launcher's environment).
std::optional<std::string> not_runnable_here(const Backend& backend);

// Base of the NCCL transports: applicability, the shared communicator (set up
// per reshape), the backend's stream, the send/receive calls of one peer pair
// and the completion wait. Derived classes write execute() from these, in the
// order their schedule needs.
class TransportBase : public fftune::Transport {
public:
    bool uses_mpi() const override { return false; }
    std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const override {
        return nccl::not_applicable(backend, gpu_aware);
    }
    std::optional<std::string> not_runnable_here(const Backend& backend) const override {
        return nccl::not_runnable_here(backend);
    }
    // Reads FFTUNE_NCCL_TIMEOUT_S (core/platform/settings.hpp) here, so that a bad value
    // fails the plan before any transfer.
    void setup(const ReshapeContext& ctx) override {
        timeout_s_ = nccl_timeout_s();
        comm_ = shared_comm(ctx.comm);
    }
    // The communicator of the job's ranks, and a first exchange with every
    // peer (connect_peers): what the job's first NCCL point paid before.
    void start_job(MPI_Comm comm, const Backend& backend) override;

protected:
    // The queue everything runs on: the backend's stream.
    static cudaStream_t stream(const ReshapeContext& ctx) {
        return static_cast<cudaStream_t>(ctx.backend->native_stream());
    }
    // ncclSend of this rank's block for `to` and ncclRecv of the block from
    // `from`, each only when it is not empty; call inside nccl::group().
    void post(const ReshapeContext& ctx, int to, int from, const void* src, void* dst, cudaStream_t stream) const;
    ncclComm_t comm() const { return comm_->get(); }
    // nccl::wait on this transport's communicator.
    void wait(cudaStream_t stream, const char* what) const { nccl::wait(*comm_, stream, what, timeout_s_); }

private:
    std::shared_ptr<Comm> comm_;
    double timeout_s_ = 300;
};

}  // namespace fftune::nccl
