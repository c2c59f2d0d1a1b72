// Work arrays a plan hands on to the next plan of a job, with this rank's
// mappings of the peers' ones (cuda_ipc), so that the next point of a sweep
// with the same array sizes allocates nothing and opens no IPC handle: on
// 2 x H100 the opening alone took 18-21 ms per point from 512^3 double on
// (results/h100x2-2026-11-28-fixed-cost), a third of a 512^3 point.
//
//   run_job:  KeptArrays::Job job(comm);          // plans of fft3d points keep
//   a plan:   kept.prepare(comm, backend, wants);  // collective: reuse or let go
//             auto arrays = kept.take(wants);      // lent; given back when freed
//   ~Plan:    kept.hold_mappings(its transports' peer mappings);
//
// Letting go is collective: every rank first drops its mappings of peers'
// arrays and meets the others, then frees its own, since freeing an exported
// allocation that a peer still maps is undefined (cudaIpcOpenMemHandle).
#pragma once

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <mpi.h>

#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"

namespace fftune {

// One array of a plan: `bytes` of backend memory, or of pinned host memory
// (`host`: the staging of a device backend's MPI traffic).
struct ArrayRequest {
    std::size_t bytes = 0;
    bool host = false;
    bool operator==(const ArrayRequest&) const = default;
};

class KeptArrays {
public:
    // Process-wide: the arrays of the job's last plan. Never destroyed (no
    // MPI or CUDA call at exit); a job lets them go (Job) before it ends.
    static KeptArrays& instance();

    // While a Job lives, plans that ask (Plan's ArrayLifetime::kept) keep
    // their arrays; it lets them go, collectively over `comm`, when it ends.
    class Job {
    public:
        explicit Job(MPI_Comm comm);
        ~Job();
        Job(const Job&) = delete;
        Job& operator=(const Job&) = delete;

    private:
        MPI_Comm comm_;
        int unwinding_;  // exceptions in flight when the job began
    };
    bool in_job() const { return in_job_; }

    // Collective over `comm`. Where every rank keeps exactly `wanted` on a
    // backend named `backend`, take() lends those; otherwise every rank lets
    // go of what it keeps and take() allocates. Returns the bytes of backend
    // memory (not host) reused. Throws std::logic_error on every rank where
    // one rank's arrays are still lent or were kept on other ranks.
    std::size_t prepare(MPI_Comm comm, const std::string& backend, const std::vector<ArrayRequest>& wanted);
    // Rank-local, after prepare: the arrays in `wanted`'s order, empty
    // Buffers where a size is 0; freeing one gives it back.
    std::vector<Buffer> take(const std::vector<ArrayRequest>& wanted);
    // This rank's mappings of peers' kept arrays, held until those are let go.
    void hold_mappings(const std::vector<std::shared_ptr<const void>>& mappings);
    // Collective over `comm`: lets go of everything (mappings first, on every rank).
    void release(MPI_Comm comm);

    // This rank's kept backend memory (not host), lent or not.
    std::size_t kept_bytes() const;
    std::size_t mappings_held() const { return mappings_.size(); }

private:
    KeptArrays() = default;
    struct Entry {
        ArrayRequest what;
        void* ptr = nullptr;
        bool lent = false;
    };
    void free_entries();

    bool in_job_ = false;
    bool reuse_ = false;  // prepare's verdict, for take
    std::string backend_name_;
    std::unique_ptr<Backend> owner_;  // allocates and frees the entries
    std::vector<Entry> entries_;
    Communicator comm_;  // the ranks whose mappings may point here
    std::set<std::shared_ptr<const void>> mappings_;
};

}  // namespace fftune
