// Shared parts of the families' Google Benchmark binaries: a call timed by
// the backend's own clock (CUDA events on cuda, never a host clock around
// async work) with the bytes it must move, and the main() that registers a
// family's benchmarks after static initialisation filled the registries.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

#include "core/platform/backend.hpp"

namespace fftune::testing {

// One warm call, then one timed call per iteration; bytes_per_second from `bytes`.
template <class Op>
void time_by_backend_clock(benchmark::State& state, Backend& backend, std::size_t bytes, Op op) {
    auto clock = backend.make_clock();
    op();
    for (auto _ : state) {
        clock->reset();
        clock->start();
        op();
        clock->stop();
        state.SetIterationTime(clock->elapsed_ms() / 1e3);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

// main(): register_all(), then Google Benchmark's command line and run.
inline int bench_main(int argc, char** argv, void (*register_all)()) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

}  // namespace fftune::testing
