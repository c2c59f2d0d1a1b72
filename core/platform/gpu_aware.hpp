// Whether MPI can take a backend's device buffers (gpu_aware: true points).
// Two pieces of evidence, both needed: the library says so
// (MPIX_Query_cuda_support, mpi_util.hpp), and a real exchange of device
// buffers on first use returns the right bytes. Only asked when the library
// says yes: handing a device pointer to an MPI that is not GPU-aware crashes
// it (DESIGN.md section 7).
#pragma once

#include <optional>
#include <string>

#include <mpi.h>

#include "core/platform/backend.hpp"

namespace fftune {

// Why gpu_aware points cannot run on `backend` here, or nothing. The exchange
// trial runs once per process and backend name; its answer is kept.
std::optional<std::string> gpu_aware_unavailable(Backend& backend);

// The trial itself: rank-to-rank (MPI_Sendrecv over `comm`, to itself on
// MPI_COMM_SELF) of a device buffer filled with a pattern, read back and
// compared. Why it failed, or nothing. Local (no collectives beyond `comm`).
std::optional<std::string> device_exchange_trial(Backend& backend, MPI_Comm comm);

}  // namespace fftune
