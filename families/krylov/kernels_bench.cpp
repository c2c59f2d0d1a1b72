// Microbenchmarks of the Krylov kernels (Google Benchmark), one process: each
// format's SpMV (with and without its fused dot, folded: with CG's
// direction and x updates, and one pass: with the residual's update too), the fused updates and the BLAS-1 kernels (the
// stencil at each of its y-rows per thread, timed alone: launch_bench.cpp),
// per backend with Krylov kernels that is usable here, with
// the bytes each call must move as bytes_per_second, so that a kernel's
// bandwidth can be checked without a sweep. Timed by the backend's clock (CUDA
// events on cuda). Every SpMV is first checked against the stencil oracle.
//   fftune_krylov_bench [--benchmark_filter=...] [--benchmark_min_time=0.1]
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/testing/backend_bench.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune::krylov {
namespace {

// One backend's kernels bound to poisson7 on an n^3 grid (one rank) in one format.
struct Fixture {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<KrylovKernels> kernels;
    LocalMatrix host;
    DeviceMatrix a;
    Buffer row_ptr, col, val, x, y, r, z, inv_diag, q, xs;
    Buffer rh, ph, pn, dh;  // haloed r, p, p_next, D^-1 (folded)
    Buffer qh, rn, qn;      // haloed q, r_next, q_next (one pass)
    Buffer scalars, sums;   // one pass: α, β, α2 (OnePassScalars) and the pass's sums

    Fixture(const std::string& be, Format f, index_t n) {
        backend = Registry<Backend>::instance().create(be);
        kernels = Registry<KrylovKernels>::instance().create(be);
        host = assemble_poisson7(slab_of(n, 1, 0), f != Format::matrix_free);  // the stencil needs no matrix
        a.format = f;
        a.slab = host.slab;
        if (f == Format::csr) row_ptr = upload(host.row_ptr);
        if (f == Format::cusparse_csr)
            row_ptr = upload(std::vector<std::int32_t>(host.row_ptr.begin(), host.row_ptr.end()));
        if (f == Format::csr || f == Format::cusparse_csr) col = upload(host.col), val = upload(host.val);
        if (f == Format::ell) col = upload(host.ell_col), val = upload(host.ell_val), a.ell_width = host.ell_width;
        a.row_ptr = static_cast<const std::int64_t*>(row_ptr.data());
        a.row_ptr32 = static_cast<const std::int32_t*>(row_ptr.data());
        a.col = static_cast<const std::int32_t*>(col.data());
        a.val = static_cast<const double*>(val.data());
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> xh(static_cast<std::size_t>(host.slab.haloed()), 0.0);
        for (index_t i = host.slab.plane(); i < host.slab.rows() + host.slab.plane(); ++i) xh[i] = u(rng);
        x = upload(xh);  // haloed; the halos stay 0 (one rank)
        rh = upload(xh), ph = upload(xh), pn = upload(xh), qh = upload(xh), rn = upload(xh), qn = upload(xh);
        OnePassScalars<double> sc;
        sc.alpha = sc.alpha2 = 1e-9, sc.beta = 0.5, sc.inv_beta2 = 2;  // β = 0.5: p_next stays bounded; α tiny
        scalars = upload(std::vector<OnePassScalars<double>>{sc});
        sums = upload(std::vector<double>(static_cast<std::size_t>(one_pass_sum_count<double>(true)), 0.0));
        for (index_t i = host.slab.plane(); i < host.slab.rows() + host.slab.plane(); ++i) xh[i] = 1.0 / 6;
        dh = upload(xh);
        std::vector<double> rows(static_cast<std::size_t>(host.slab.rows()));
        for (auto& v : rows) v = u(rng);
        y = upload(rows), r = upload(rows), z = upload(rows), q = upload(rows), xs = upload(rows);
        for (auto& v : rows) v = 1.0 / 6;
        inv_diag = upload(rows);
        kernels->bind(*backend, a);
    }
    template <class T>
    Buffer upload(const std::vector<T>& v) {
        Buffer b(*backend, v.size() * sizeof(T));
        if (!v.empty()) backend->copy_from_host(b.data(), v.data(), v.size() * sizeof(T));
        return b;
    }
    index_t rows() const { return host.slab.rows(); }
    double* d(Buffer& b) { return static_cast<double*>(b.data()); }
    // max |A x - oracle| / max |oracle|
    double spmv_error() {
        std::vector<double> xh(static_cast<std::size_t>(host.slab.haloed())), want(rows()), got(rows());
        backend->copy_to_host(xh.data(), x.data(), xh.size() * 8);
        poisson7_reference(host.slab, xh.data(), want.data());
        kernels->spmv(a, d(x), d(y), false);
        backend->copy_to_host(got.data(), y.data(), got.size() * 8);
        backend->synchronize();
        double e = 0, m = 0;
        for (std::size_t i = 0; i < got.size(); ++i) e = std::max(e, std::abs(got[i] - want[i])), m = std::max(m, std::abs(want[i]));
        return e / m;
    }
};

// Times `op` by the backend's clock, `bytes` per call.
template <class Op>
void timed(benchmark::State& state, Fixture& f, std::size_t bytes, Op op) {
    testing::time_by_backend_clock(state, *f.backend, bytes, op);
    state.counters["rows"] = double(f.rows());
}

void spmv(benchmark::State& state, const std::string& be, Format format, bool dot) {
    Fixture f(be, format, state.range(0));
    if (const double e = f.spmv_error(); !(e < 1e-14)) return state.SkipWithError(fmt::format("SpMV error {}", e).c_str());
    timed(state, f, spmv_bytes(format, f.host), [&] { f.kernels->spmv(f.a, f.d(f.x), f.d(f.y), dot); });
}
// The folded SpMV (β = 0.5: p_next stays bounded over the repetitions; α tiny):
// the matrix, r, p (and D^-1) read and p_next written on the haloed rows, x
// read and written, q written (the workload's traffic model).
void spmv_folded(benchmark::State& state, const std::string& be, Format format, bool jacobi) {
    Fixture f(be, format, state.range(0));
    if (const double e = f.spmv_error(); !(e < 1e-14)) return state.SkipWithError(fmt::format("SpMV error {}", e).c_str());
    const std::size_t v = static_cast<std::size_t>(f.rows()) * 8, vh = static_cast<std::size_t>(f.host.slab.haloed()) * 8;
    timed(state, f, spmv_bytes(format, f.host) - 2 * v + (jacobi ? 4 : 3) * vh + 3 * v, [&] {
        f.kernels->spmv_folded(f.a, 0.5, 1e-9, f.d(f.rh), jacobi ? f.d(f.dh) : nullptr, f.d(f.ph), f.d(f.pn), f.d(f.xs),
                               f.d(f.q));
    });
}
// The one-pass SpMV (its scalars on the device, nothing waits): the matrix, r, q, p (and D^-1) read and r_next, p_next
// written on the haloed rows, q_next written (the workload's traffic model); the pass that adds
// two directions to x reads and writes x (the older direction reconstructed, inv_beta2 set).
void spmv_one_pass(benchmark::State& state, const std::string& be, Format format, bool jacobi) {
    Fixture f(be, format, state.range(0));
    if (const double e = f.spmv_error(); !(e < 1e-14)) return state.SkipWithError(fmt::format("SpMV error {}", e).c_str());
    const std::size_t v = static_cast<std::size_t>(f.rows()) * 8, vh = static_cast<std::size_t>(f.host.slab.haloed()) * 8;
    timed(state, f, spmv_bytes(format, f.host) - 2 * v + (jacobi ? 6 : 5) * vh + 3 * v, [&] {
        f.kernels->spmv_one_pass(f.a, f.scalars.as<OnePassScalars<double>>(), f.d(f.rh), f.d(f.qh), f.d(f.ph),
                                 jacobi ? f.d(f.dh) : nullptr, f.d(f.rn), f.d(f.qn), f.d(f.pn), f.d(f.xs),
                                 f.d(f.dh), f.sums.as<double>());  // p2: any haloed vector
    });
}
void fused_update(benchmark::State& state, const std::string& be, bool jacobi) {
    Fixture f(be, Format::matrix_free, state.range(0));
    const std::size_t v = static_cast<std::size_t>(f.rows()) * 8;
    // p, q, x, r read; x, r written; Jacobi: the diagonal read, z written.
    timed(state, f, 6 * v + (jacobi ? 2 * v : 0), [&] {  // p = y, q, x = xs, r, z: five arrays
        f.kernels->fused_update(1e-9, f.d(f.y), f.d(f.q), f.d(f.xs), f.d(f.r), jacobi ? f.d(f.inv_diag) : nullptr,
                                f.d(f.z), f.rows());
    });
}
void update_residual(benchmark::State& state, const std::string& be, bool jacobi) {
    Fixture f(be, Format::matrix_free, state.range(0));
    const std::size_t v = static_cast<std::size_t>(f.rows()) * 8;
    timed(state, f, 3 * v + (jacobi ? v : 0), [&] {  // r, q (and D^-1) read; r written
        f.kernels->update_residual(1e-9, f.d(f.q), f.d(f.r), jacobi ? f.d(f.inv_diag) : nullptr, f.rows());
    });
}
void blas1(benchmark::State& state, const std::string& be, int which) {
    Fixture f(be, Format::matrix_free, state.range(0));
    const std::size_t v = static_cast<std::size_t>(f.rows()) * 8;
    if (which == 0) timed(state, f, 2 * v, [&] { benchmark::DoNotOptimize(f.kernels->dot(f.d(f.r), f.d(f.z), f.rows())); });
    if (which == 1) timed(state, f, 3 * v, [&] { f.kernels->axpy(1e-9, f.d(f.r), f.d(f.z), f.rows()); });
    if (which == 2) timed(state, f, 3 * v, [&] { f.kernels->xpay(f.d(f.r), 0.5, f.d(f.z), f.rows()); });
}

// Registered per usable backend: 64^3 and 128^3 on the CPU, 128^3 and 256^3 on a GPU.
// From main: the backend registries fill during static initialisation.
void register_all() {
    for (const auto& be : Registry<KrylovKernels>::instance().names()) {
        if (!Registry<Backend>::instance().contains(be)) continue;
        const auto backend = Registry<Backend>::instance().create(be);
        if (backend->unavailable()) continue;
        const std::vector<std::int64_t> sizes = backend->device_memory() ? std::vector<std::int64_t>{128, 256}
                                                                         : std::vector<std::int64_t>{64, 128};
        auto add = [&](const std::string& name, auto fn) {
            auto* b = benchmark::RegisterBenchmark(fmt::format("{}/{}", be, name).c_str(), fn)->UseManualTime()->Unit(benchmark::kMicrosecond);
            for (auto n : sizes) b->Arg(n);
        };
        for (const auto& fname : format_names()) {
            const Format f = parse_format(fname);
            if (f == Format::cusparse_csr && be != "cuda") continue;
            add("spmv/" + fname, [be, f](benchmark::State& s) { spmv(s, be, f, false); });
            if (f == Format::cusparse_csr) continue;
            add("spmv_dot/" + fname, [be, f](benchmark::State& s) { spmv(s, be, f, true); });
            add("spmv_folded/" + fname, [be, f](benchmark::State& s) { spmv_folded(s, be, f, false); });
            add("spmv_folded_jacobi/" + fname, [be, f](benchmark::State& s) { spmv_folded(s, be, f, true); });
            add("spmv_one_pass/" + fname, [be, f](benchmark::State& s) { spmv_one_pass(s, be, f, false); });
            add("spmv_one_pass_jacobi/" + fname, [be, f](benchmark::State& s) { spmv_one_pass(s, be, f, true); });
        }
        add("fused_update", [be](benchmark::State& s) { fused_update(s, be, false); });
        add("fused_update_jacobi", [be](benchmark::State& s) { fused_update(s, be, true); });
        add("update_residual", [be](benchmark::State& s) { update_residual(s, be, false); });
        add("update_residual_jacobi", [be](benchmark::State& s) { update_residual(s, be, true); });
        add("dot", [be](benchmark::State& s) { blas1(s, be, 0); });
        add("axpy", [be](benchmark::State& s) { blas1(s, be, 1); });
        add("xpay", [be](benchmark::State& s) { blas1(s, be, 2); });
    }
}

}  // namespace
}  // namespace fftune::krylov

int main(int argc, char** argv) { return fftune::testing::bench_main(argc, argv, fftune::krylov::register_all); }
