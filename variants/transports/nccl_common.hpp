// NCCL plumbing shared by the device-direct transports: a communicator per
// phase communicator (unique id broadcast over MPI), and completion polling
// with a timeout so that a hang becomes an error instead of a stuck job.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <optional>
#include <string>

#include "core/backend.hpp"
#include "core/reshape.hpp"

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

private:
    ncclComm_t comm_ = nullptr;
};

void check(ncclResult_t r, const char* what);

// The communicator for `mpi_comm`, shared by every transport of a plan that
// uses that phase communicator (forward and inverse): one ncclCommInitRank per
// phase communicator instead of one per reshape. Collective on first use.
std::shared_ptr<Comm> shared_comm(MPI_Comm mpi_comm);

// Waits until `stream` is idle, polling ncclCommGetAsyncError; aborts the
// communicator and throws after FFTUNE_NCCL_TIMEOUT_S seconds (default 300).
void wait(const Comm& comm, cudaStream_t stream, const char* what);

// NCCL needs device buffers; MPI's gpu_aware flag does not apply to it.
std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware);

}  // namespace fftune::nccl
