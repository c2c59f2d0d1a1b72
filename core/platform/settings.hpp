// Run-time settings read from the environment. Unset or empty means the
// default; any other value must be a whole number in range, or the reader
// throws std::invalid_argument naming the variable, its value and what is
// allowed. check_settings() reads them all, so that the CLI refuses a bad
// value before any work starts instead of where the setting is first used.
#pragma once

#include <cstddef>
#include <optional>

namespace fftune {

// FFTUNE_HOST_THREADS: threads for host loops (core/platform/parallel.hpp), 1..4096.
std::optional<int> host_threads_setting();
// FFTUNE_NCCL_TIMEOUT_S: seconds an NCCL transfer may take before its
// communicator is aborted (default 300), a number > 0.
double nccl_timeout_s();
// FFTUNE_DEVICE_POOL_MIB: MiB of freed device memory a process keeps per
// device for its next allocations of the same sizes (core/platform/block_pool.hpp),
// a whole number 0..16777216; 0 turns the pool off (e.g. under compute-sanitizer,
// which cannot see a use after free of a kept block). Unset: the backend's default.
std::optional<std::size_t> device_pool_mib_setting();
// FFTUNE_HOST_POOL_MIB: MiB of freed pinned host memory (the staging of MPI
// traffic) a process keeps for its next allocations of the same sizes, the
// same range; 0 turns that pool off. Unset: the backend's default.
std::optional<std::size_t> host_pool_mib_setting();

// Every setting above; throws the first one's error.
void check_settings();

}  // namespace fftune
