// Microbenchmark of the fused x-stage (Google Benchmark), one process: each
// backend's column convolution at the shape zero_skipping_fused gives it on
// an N³ free-boundary problem at one rank (L = 2N, kept = N, columns =
// 2N·(N+1)), both precisions, with the bytes it must move (moved_bytes) as
// bytes_per_second; beside it the backend's multiply_real on the whole
// padded spectrum, a streaming kernel whose rate is the floor's bandwidth.
// Timed by the backend's clock (CUDA events on cuda). Before timing, each
// length is checked on a few columns against a direct DFT convolution.
//   fftune_poisson_bench [--benchmark_filter=...] [--benchmark_min_time=0.1]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <numbers>
#include <random>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/parallel.hpp"
#include "core/testing/backend_bench.hpp"
#include "families/poisson/column_convolution.hpp"

namespace fftune::poisson {
namespace {

using cd = std::complex<double>;

// The x-stage of an N³ free-boundary solve: L = 2N, N kept, the y-slab's
// 2N·(N+1) columns; above 512³ the columns are capped at 2^17 (the host fills
// the arrays: 3 GB instead of 24 GB at 720³), the rate per byte is what compares.
ColumnProblem x_stage(index_t n, Precision precision) {
    return {2 * n, n, n > 512 ? index_t(1) << 17 : 2 * n * (n + 1), precision};
}

std::vector<double> random_values(std::size_t count, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(count);
    for (auto& x : v) x = u(gen);
    return v;
}

// Values in [-1, 1) from an integer hash, the first `nonzero` of `count`
// (the rest 0): fast enough for the 10⁹ values of the largest shapes, where
// the timing only needs finite, varied data. Filled over the host threads:
// the setup of a 512³ benchmark fills ~13 GB, serially most of its time.
std::vector<double> pattern_values(std::size_t count, std::size_t nonzero, std::uint32_t seed) {
    std::vector<double> v(count);
    parallel_for(0, std::int64_t(count), [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i)
            v[std::size_t(i)] = std::size_t(i) < nonzero
                                    ? double((std::uint32_t(i) * 2654435761u + seed * 40503u) % 2000u) / 1000.0 - 1.0
                                    : 0.0;
    }, host_threads(), 1 << 20);
    return v;
}

// `v` in backend memory, in the precision.
Buffer upload(Backend& backend, const std::vector<double>& v, Precision precision) {
    Buffer b(backend, v.size() * real_bytes(precision));
    if (precision == Precision::single) {
        std::vector<float> f(v.size());
        parallel_for(0, std::int64_t(v.size()), [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t i = lo; i < hi; ++i) f[std::size_t(i)] = float(v[std::size_t(i)]);
        }, host_threads(), 1 << 20);
        backend.copy_from_host(b.data(), f.data(), b.bytes());
    } else {
        backend.copy_from_host(b.data(), v.data(), b.bytes());
    }
    backend.synchronize();
    return b;
}

std::vector<double> download(Backend& backend, const Buffer& b, Precision precision) {
    std::vector<double> v(b.bytes() / real_bytes(precision));
    if (precision == Precision::single) {
        std::vector<float> f(v.size());
        backend.copy_to_host(f.data(), b.data(), b.bytes());
        backend.synchronize();
        v.assign(f.begin(), f.end());
    } else {
        backend.copy_to_host(v.data(), b.data(), b.bytes());
        backend.synchronize();
    }
    return v;
}

// max |conv − direct| / max |direct| over 5 columns of the shape's length
// (direct O(L²) DFT convolution on the host).
double check(Backend& backend, const std::string& be, const ColumnProblem& shape) {
    const ColumnProblem p{shape.length, shape.kept, 5, shape.precision};
    auto conv = Registry<ColumnConvolution>::instance().create(be);
    conv->setup(backend, p);
    const index_t l = p.length, n = p.columns;
    auto in = random_values(std::size_t(2 * l * n), 1);
    std::fill(in.begin() + 2 * p.kept * n, in.end(), 0.0);  // rows from kept on are zero
    const auto k = random_values(std::size_t(l * n), 2);
    Buffer bin = upload(backend, in, p.precision), raw = upload(backend, k, p.precision), bk(backend, raw.bytes());
    arrange_kernel(backend, *conv, p, raw.data(), bk.data());
    Buffer bout(backend, bin.bytes());
    conv->run(bin.data(), bk.data(), bout.data());
    const auto got = download(backend, bout, p.precision);
    auto at = [&](const std::vector<double>& v, index_t x, index_t c) { return cd(v[2 * (x * n + c)], v[2 * (x * n + c) + 1]); };
    auto w = [&](index_t m, double sign) { return std::polar(1.0, sign * 2 * std::numbers::pi * double(m % l) / double(l)); };
    double diff = 0, scale = 0;
    for (index_t c = 0; c < n; ++c) {
        std::vector<cd> spec(l);
        for (index_t q = 0; q < l; ++q) {
            cd s = 0;
            for (index_t x = 0; x < p.kept; ++x) s += at(in, x, c) * w(q * x, -1);
            spec[q] = s * k[q * n + c];
        }
        for (index_t x = 0; x < p.kept; ++x) {
            cd s = 0;
            for (index_t q = 0; q < l; ++q) s += spec[q] * w(q * x, +1);
            diff = std::max(diff, std::abs(at(got, x, c) - s)), scale = std::max(scale, std::abs(s));
        }
    }
    return diff / scale;
}

void column_convolution(benchmark::State& state, const std::string& be, Precision precision) {
    auto backend = Registry<Backend>::instance().create(be);
    const ColumnProblem p = x_stage(state.range(0), precision);
    if (const double e = check(*backend, be, p); !(e < (precision == Precision::single ? 2e-5 : 1e-12)))
        return state.SkipWithError(fmt::format("column convolution error {} at L {}", e, p.length).c_str());
    auto conv = Registry<ColumnConvolution>::instance().create(be);
    conv->setup(*backend, p);
    const std::size_t values = std::size_t(p.length * p.columns);
    // `in` holds L rows as the solver's array (those from kept on unread).
    Buffer in = upload(*backend, pattern_values(2 * values, std::size_t(2 * p.kept * p.columns), 3), precision);
    Buffer k = upload(*backend, pattern_values(values, values, 4), precision);
    Buffer out(*backend, in.bytes());
    testing::time_by_backend_clock(state, *backend, conv->moved_bytes(), [&] { conv->run(in.data(), k.data(), out.data()); });
    state.counters["columns"] = double(p.columns);
    state.counters["length"] = double(p.length);
}

// The streaming reference: spectrum ×= K over the padded spectrum (complex
// read and written, K read), as the unfused stage's multiply.
void multiply(benchmark::State& state, const std::string& be, Precision precision) {
    auto backend = Registry<Backend>::instance().create(be);
    const ColumnProblem p = x_stage(state.range(0), precision);
    const index_t values = p.length * p.columns;
    Buffer data = upload(*backend, pattern_values(std::size_t(2 * values), std::size_t(2 * values), 5), precision);
    Buffer k = upload(*backend, pattern_values(std::size_t(values), std::size_t(values), 6), precision);
    testing::time_by_backend_clock(state, *backend, std::size_t(values) * (2 * complex_bytes(precision) + real_bytes(precision)),
          [&] { backend->multiply_real(data.data(), k.data(), values, precision); });
}

// Per usable backend with a column convolution: N = 32, 64 on the CPU; 128-512 and 720 on a GPU.
void register_all() {
    for (const auto& be : Registry<ColumnConvolution>::instance().names()) {
        if (!Registry<Backend>::instance().contains(be)) continue;
        const auto backend = Registry<Backend>::instance().create(be);
        if (backend->unavailable()) continue;
        const std::vector<std::int64_t> sizes = backend->device_memory() ? std::vector<std::int64_t>{128, 256, 384, 512, 720}
                                                                         : std::vector<std::int64_t>{32, 64};
        for (auto precision : {Precision::double_, Precision::single}) {
            auto add = [&](const std::string& name, auto fn) {
                auto* b = benchmark::RegisterBenchmark(fmt::format("{}/{}/{}", be, name, to_string(precision)).c_str(), fn)
                              ->UseManualTime()
                              ->Unit(benchmark::kMillisecond);
                for (auto n : sizes) b->Arg(n);
            };
            add("column_convolution", [be, precision](benchmark::State& s) { column_convolution(s, be, precision); });
            add("multiply_real", [be, precision](benchmark::State& s) { multiply(s, be, precision); });
        }
    }
}

}  // namespace
}  // namespace fftune::poisson

int main(int argc, char** argv) { return fftune::testing::bench_main(argc, argv, fftune::poisson::register_all); }
