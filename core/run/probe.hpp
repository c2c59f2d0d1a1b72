// Microbenchmarks that calibrate the alpha-beta cost model (thesis 2.5.3) on a
// machine, run inside one MPI job (every rank calls run_probe):
//
//  - exchange: for every divisor q >= 2 of the world size, the world splits
//    into world/q groups of q ranks that all exchange at once (as the rows of
//    a pencil grid do), m bytes per peer, through the registered Transport
//    (the same code the engine runs, host-staged on device backends whose MPI
//    is not GPU-aware). The message is a slab transpose's block: `runs`
//    scattered runs in the source (packed by transports that pack), one dense
//    run at the destination. Each exchange is checked element by element.
//    Model: t = alpha * (q - 1) + m * (q - 1) / beta.
//  - fft: batched 1D complex transforms of length n (points = n * batch)
//    through Backend::make_fft, contiguous (stride 1) and strided (stride =
//    batch) as the engine's stages are; rate = ms / (points * log2 n).
//
// Timing as in the runner: per iteration the max over ranks (a phase is done
// when the slowest rank is), then median and 99% CI over iterations
// (core/records/statistics.hpp). Records: results/README.md ("fftune.probe/1").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

namespace fftune {

struct ProbeOptions {
    std::vector<long long> bytes_per_peer;  // exchange message sizes (multiples of 8)
    std::vector<long long> fft_lengths;     // 1D transform lengths n
    long long fft_points = 1 << 20;         // n * batch per transform call
    std::vector<std::string> backends;      // empty: every available registered backend
    std::vector<std::string> transports;    // empty: every registered transport that applies
    int warmup = 5;
    int iterations = 20;
    double timeout_s = 600;                 // a probe still running after this ends the job; 0: no limit
    std::vector<std::string> argv;          // for provenance
};

// 8 B to 16 MiB by factors of 8; n = 4 to 4096 by factors of 2.
std::vector<long long> default_probe_bytes();
std::vector<long long> default_probe_fft_lengths();
// Why the options cannot run (naming the value and what is allowed), or "".
std::string check_probe_options(const ProbeOptions& options);

// Collective over `comm`. Calls `emit` on rank 0 with each record as soon as it
// is measured; returns the number of failed probes (records with status
// "failed", e.g. a transport that throws), the same on every rank.
int run_probe(MPI_Comm comm, const ProbeOptions& options, const std::function<void(const nlohmann::json&)>& emit);

}  // namespace fftune
