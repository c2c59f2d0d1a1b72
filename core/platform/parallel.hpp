// Host-side loops over large grids (test fields, validation) split over
// threads. A rank's share of the node's cores: hardware threads divided by the
// ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
// SLURM_NTASKS_PER_NODE), at most the cores the process is bound to, or
// FFTUNE_HOST_THREADS when set.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace fftune {

// Threads one rank may use for host loops (at least 1).
int host_threads();

// Starts the kept worker threads a parallel_for over `threads` threads would
// use, so that no point's first loop pays for them (about 0.2 ms a thread on
// a GPU node). Returns how many worker threads the process keeps.
int start_host_threads(int threads = host_threads());

// Calls body(lo, hi) on disjoint chunks that cover [begin, end) exactly once,
// concurrently on up to `threads` threads, one chunk each: the caller's and
// the process's kept worker threads; serial when the range is shorter than
// `min_per_thread` per thread, or when called from inside a chunk. A second
// caller while the workers are busy starts threads of its own. The first
// exception a chunk throws is rethrown here after every chunk has finished.
void parallel_for(std::int64_t begin, std::int64_t end, const std::function<void(std::int64_t, std::int64_t)>& body,
                  int threads = host_threads(), std::int64_t min_per_thread = 1);

}  // namespace fftune
