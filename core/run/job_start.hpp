// What a job makes once, before its first point, for every point that then
// shares it: a transport's per-process state (Transport::start_job: NCCL's
// communicator and its peer connections, 0.5-0.6 s on 2 H100s, where the
// job's first NCCL point used to pay it in its set-up and first steps), and
// a backend's first plans and kernels of a precision (Backend::warm_up:
// cuFFT's 2-4 ms in the first slab point of one H200's job), and the host
// loops' worker threads (start_host_threads: 3 ms on 2 H200s, where an
// octree point's first check paid it). Its
// time is the job's start-up, recorded beside every point's own parts
// (the record's "job" field), not hidden in none and not charged to one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/run/family.hpp"

namespace fftune {

// The (backend, transport) pairs the points name: every string of a
// point's configuration that names a registered transport, with the
// point's backend. Sorted, each once.
std::vector<std::pair<std::string, std::string>> transports_named(const std::vector<const Point*>& points);

// The (backend, precision) pairs the points name: a point's backend with
// each of its family's Family::precisions (a kind no family registered: its
// problem's "precision" where that names a Precision). Sorted, each once.
std::vector<std::pair<std::string, Precision>> precisions_named(const std::vector<const Point*>& points);

// Warms each (backend, precision) pair up (Backend::warm_up), then starts each pair's transport (Transport::start_job) on `comm`, in order,
// skipping the pairs whose backend is unavailable or whose transport does not
// apply to it on some rank. Collective. Never throws for a warm-up or a
// transport: one that fails is reported, and its points meet the same failure
// in their own set-up. Returns {"startup_ms": wall, "parts_ms":
// {"host_threads": ms, "BACKEND/TRANSPORT": ms, "BACKEND/warm_up/PRECISION": ms}, "failed": {same
// keys: error}} (the last only when one failed).
nlohmann::json start_job(MPI_Comm comm, const std::vector<const Point*>& points);

}  // namespace fftune
