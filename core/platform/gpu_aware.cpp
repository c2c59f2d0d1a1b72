#include "core/platform/gpu_aware.hpp"

#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/platform/mpi_util.hpp"

namespace fftune {

std::optional<std::string> device_exchange_trial(Backend& backend, MPI_Comm comm) {
    constexpr int n = 1 << 16;  // 512 KiB: past the eager limit, so the rendezvous path is tried too
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    std::vector<double> pattern(n), back(n, 0.0);
    for (int i = 0; i < n; ++i) pattern[i] = 1000.0 * rank + i + 0.25;
    try {
        Buffer send(backend, n * sizeof(double)), recv(backend, n * sizeof(double));
        backend.copy_from_host(send.data(), pattern.data(), n * sizeof(double));
        backend.copy_from_host(recv.data(), back.data(), n * sizeof(double));
        backend.synchronize();
        const int rc = MPI_Sendrecv(send.data(), n, MPI_DOUBLE, to, 0, recv.data(), n, MPI_DOUBLE, from, 0, comm,
                                    MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return fmt::format("an MPI_Sendrecv of device buffers failed (error {})", rc);
        backend.copy_to_host(back.data(), recv.data(), n * sizeof(double));
    } catch (const std::exception& e) {
        return fmt::format("the device-buffer exchange trial failed: {}", e.what());
    }
    for (int i = 0; i < n; ++i)
        if (back[i] != 1000.0 * from + i + 0.25)
            return fmt::format("an MPI_Sendrecv of device buffers delivered wrong data (element {}: {} instead of {})",
                               i, back[i], 1000.0 * from + i + 0.25);
    return std::nullopt;
}

std::optional<std::string> gpu_aware_unavailable(Backend& backend) {
    if (!mpi_gpu_aware()) return "the MPI library is not GPU-aware (" + mpi_gpu_aware_evidence() + ")";
    static std::mutex mutex;
    static std::map<std::string, std::optional<std::string>> trials;
    std::lock_guard lock(mutex);
    auto it = trials.find(backend.name());
    if (it == trials.end()) {
        auto why = device_exchange_trial(backend, MPI_COMM_SELF);
        if (why) *why = mpi_gpu_aware_evidence() + ", but " + *why;
        it = trials.emplace(backend.name(), std::move(why)).first;
    }
    return it->second;
}

}  // namespace fftune
