// Kernel-only timings of the krylov family's CUDA launchers (Google
// Benchmark, one process, the cuda backend's stream and CUDA events).
// fftune_krylov_bench times the KernelsT calls, whose reductions bring their
// sum back to the host: a copy and a wait inside the timing, which the
// iteration pays but the kernel does not. Here a launch is timed alone (with
// the zeroing of its sum), with the bytes its kernel must move, so a fused
// kernel's bandwidth is the kernel's. Before timing, each launch's output is
// checked against host loops (the stencil oracle, the dot, the folded update,
// the one-pass iteration).
// `copy` is the device's copy rate on one vector, the kernels' reference.
//   fftune_krylov_launch_bench [--benchmark_filter=...] [--benchmark_min_time=0.2]
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/testing/backend_bench.hpp"
#include "families/krylov/cuda_launch.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {
namespace {

// The one-pass benchmark's α (tiny) and β (0.5: p_next stays bounded over the repetitions).
constexpr double one_pass_alpha = 1e-9, one_pass_beta = 0.5;
// poisson7 on an n^3 grid (one rank) in CSR and ELL on the device, and the vectors; made once per n.
struct Fixture {
    std::unique_ptr<Backend> backend = Registry<Backend>::instance().create("cuda");
    LocalMatrix host;
    std::vector<double> xh, rh, ph, qh;  // haloed host copies (x: the SpMV input; r, p: the folded one's; q: one pass)
    Buffer row_ptr, col, val, ell_col, ell_val, x, y, r, p, pn, xs, q, sum, partials;
    Buffer qhalo, rn, qn, scalars;  // one pass: haloed q, r_next, q_next; α, β, α2 (KrylovScalars)
    KrylovRows g{};
    cudaStream_t stream = nullptr;

    explicit Fixture(index_t n) {
        host = assemble_poisson7(slab_of(n, 1, 0));
        const Slab& s = host.slab;
        g = {s.rows(), s.nx, s.ny, s.nz, s.plane(), s.z0};
        stream = static_cast<cudaStream_t>(backend->native_stream());
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(-1, 1);
        auto haloed = [&] {  // the halos stay 0 (one rank)
            std::vector<double> v(static_cast<std::size_t>(s.haloed()), 0.0);
            for (index_t i = s.plane(); i < s.rows() + s.plane(); ++i) v[i] = u(rng);
            return v;
        };
        xh = haloed(), rh = haloed(), ph = haloed(), qh = haloed();
        row_ptr = upload(host.row_ptr), col = upload(host.col), val = upload(host.val);
        ell_col = upload(host.ell_col), ell_val = upload(host.ell_val);
        x = upload(xh), r = upload(rh), p = upload(ph), pn = upload(ph);
        qhalo = upload(qh), rn = upload(rh), qn = upload(qh);
        // inv_beta2 = 1/β: x's older direction reconstructed (no read of p2), as in a solve
        scalars = upload(std::vector<KrylovScalars<double>>{{one_pass_alpha, one_pass_beta, one_pass_alpha, 1 / one_pass_beta, 0, 0}});
        std::vector<double> rows(static_cast<std::size_t>(s.rows()));
        for (auto& v : rows) v = u(rng);
        y = upload(rows), xs = upload(rows), q = upload(rows);
        sum = Buffer(*backend, 8 * sizeof(double));
        partials = Buffer(*backend, static_cast<std::size_t>(s.haloed() / 32 + 4096) * sizeof(double));
    }
    template <class T>
    Buffer upload(const std::vector<T>& v) {
        Buffer b(*backend, v.size() * sizeof(T));
        backend->copy_from_host(b.data(), v.data(), b.bytes());
        return b;
    }
    std::vector<double> download(const Buffer& b, std::size_t count) {
        std::vector<double> v(count);
        backend->copy_to_host(v.data(), b.data(), count * sizeof(double));
        backend->synchronize();
        return v;
    }
    KrylovSum zeroed_sum(int count = 1) {
        cudaMemsetAsync(sum.data(), 0, count * sizeof(double), stream);
        return {sum.as<double>(), partials.as<double>(), static_cast<long long>(partials.bytes() / sizeof(double))};
    }
    double result() { return download(sum, 1)[0]; }
    index_t rows() const { return host.slab.rows(); }
    // Rows per thread (0: the kernels' default): the stencil's y-rows, or the sparse formats' rows blockDim apart.
    KrylovRows rows_with(int rows) const {
        KrylovRows r = g;
        r.stencil_rows = r.sparse_rows = rows;
        return r;
    }
    std::size_t vector_bytes() const { return static_cast<std::size_t>(rows()) * 8; }
};
Fixture& fixture(index_t n) {
    static std::map<index_t, std::unique_ptr<Fixture>> made;
    auto& f = made[n];
    if (!f) f = std::make_unique<Fixture>(n);
    return *f;
}

// The launcher's kind and matrix arrays of a format (matrix_free: none).
struct Matrix {
    int kind;
    const long long* row_ptr;
    const int* col;
    const double* val;
    int width;
};
Matrix matrix_of(Fixture& f, Format format) {
    if (format == Format::csr) return {0, f.row_ptr.as<long long>(), f.col.as<int>(), f.val.as<double>(), 0};
    if (format == Format::ell) return {1, nullptr, f.ell_col.as<int>(), f.ell_val.as<double>(), f.host.ell_width};
    return {2, nullptr, nullptr, nullptr, 0};
}

double relative(double got, double want, double scale) { return std::abs(got - want) / std::max(scale, 1e-300); }

// y = A x (dot: and (x, y)); checked against the stencil oracle and the host dot.
void spmv(benchmark::State& state, Format format, int rows, bool dot) {
    Fixture& f = fixture(state.range(0));
    const Matrix m = matrix_of(f, format);
    const KrylovRows g = f.rows_with(rows);
    auto launch = [&] {
        return launch_spmv(m.kind, g, m.row_ptr, m.col, m.val, m.width, f.x.as<double>(), f.y.as<double>(),
                           dot ? f.zeroed_sum() : KrylovSum{}, f.stream);
    };
    if (launch() != cudaSuccess) return state.SkipWithError("launch failed");
    std::vector<double> want(static_cast<std::size_t>(f.rows()));
    poisson7_reference(f.host.slab, f.xh.data(), want.data());
    const auto got = f.download(f.y, want.size());
    double err = 0, scale = 0, d = 0, dscale = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::abs(got[i] - want[i])), scale = std::max(scale, std::abs(want[i]));
        d += f.xh[i + f.host.slab.plane()] * want[i], dscale += std::abs(f.xh[i + f.host.slab.plane()] * want[i]);
    }
    if (!(err <= 1e-14 * scale)) return state.SkipWithError(fmt::format("SpMV error {}", err / scale).c_str());
    if (dot && !(relative(f.result(), d, dscale) < 1e-12)) return state.SkipWithError("dot differs from the host's");
    testing::time_by_backend_clock(state, *f.backend, spmv_bytes(format, f.host), launch);
}

// The folded SpMV (β = 0.5, α tiny; KrylovFolded): p_next, x and q against host loops.
void spmv_folded(benchmark::State& state, Format format, int rows) {
    Fixture& f = fixture(state.range(0));
    const Matrix m = matrix_of(f, format);
    const KrylovRows g = f.rows_with(rows);
    const double alpha = 1e-9, beta = 0.5;
    auto launch = [&] {
        const KrylovFolded<double> fo{alpha, beta, f.r.as<double>(), nullptr, f.p.as<double>(), f.pn.as<double>(),
                                      f.xs.as<double>(), f.q.as<double>()};
        return launch_spmv_folded(m.kind, g, m.row_ptr, m.col, m.val, m.width, fo, f.zeroed_sum(), f.stream);
    };
    if (launch() != cudaSuccess) return state.SkipWithError("launch failed");
    const Slab& s = f.host.slab;
    std::vector<double> pn(f.rh.size()), q(static_cast<std::size_t>(s.rows()));
    for (std::size_t h = 0; h < pn.size(); ++h) pn[h] = f.rh[h] + beta * f.ph[h];
    poisson7_reference(s, pn.data(), q.data());
    const auto got_pn = f.download(f.pn, pn.size()), got_q = f.download(f.q, q.size());
    double err = 0, scale = 0, d = 0, dscale = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
        err = std::max({err, std::abs(got_q[i] - q[i]), std::abs(got_pn[i + s.plane()] - pn[i + s.plane()])});
        scale = std::max(scale, std::abs(q[i]));
        d += pn[i + s.plane()] * q[i], dscale += std::abs(pn[i + s.plane()] * q[i]);
    }
    if (!(err <= 1e-14 * scale)) return state.SkipWithError(fmt::format("folded SpMV error {}", err / scale).c_str());
    if (!(relative(f.result(), d, dscale) < 1e-12)) return state.SkipWithError("(p_next, q) differs from the host's");
    const std::size_t v = f.vector_bytes(), vh = static_cast<std::size_t>(s.haloed()) * 8;
    // The workload's model: the matrix, r and p read and p_next written on the haloed rows, x read and written, q written.
    testing::time_by_backend_clock(state, *f.backend, spmv_bytes(format, f.host) - 2 * v + 3 * vh + 3 * v, launch);
}

// The one-pass SpMV (α tiny, β = 0.5, no Jacobi; KrylovOnePass): r_next and p_next on the haloed
// rows, q_next on the own rows and the four sums against host loops. with_x: the pass that adds
// two directions to x (every other one in a solve).
void spmv_one_pass(benchmark::State& state, Format format, int rows, bool with_x) {
    Fixture& f = fixture(state.range(0));
    const Matrix m = matrix_of(f, format);
    const KrylovRows g = f.rows_with(rows);
    const double alpha = one_pass_alpha, beta = one_pass_beta;
    auto launch = [&] {
        const KrylovOnePass<double> o{f.scalars.as<KrylovScalars<double>>(), f.r.as<double>(), f.qhalo.as<double>(),
                                      f.p.as<double>(), nullptr, f.rn.as<double>(), f.qn.as<double>(), f.pn.as<double>(),
                                      with_x ? f.xs.as<double>() : nullptr, f.x.as<double>()};
        return launch_spmv_one_pass(m.kind, g, m.row_ptr, m.col, m.val, m.width, o, f.zeroed_sum(4), f.stream);
    };
    if (launch() != cudaSuccess) return state.SkipWithError("launch failed");
    const Slab& s = f.host.slab;
    const std::size_t haloed = f.rh.size();
    std::vector<double> rn(haloed), pn(haloed), q(static_cast<std::size_t>(s.rows()));
    for (std::size_t h = 0; h < haloed; ++h) rn[h] = f.rh[h] - alpha * f.qh[h], pn[h] = rn[h] + beta * f.ph[h];
    poisson7_reference(s, pn.data(), q.data());
    const auto got_rn = f.download(f.rn, haloed), got_pn = f.download(f.pn, haloed), got_q = f.download(f.qn, haloed);
    const auto got_sums = f.download(f.sum, 4);
    double err = 0, scale = 0, want[4] = {}, scales[4] = {};
    for (std::size_t i = 0; i < q.size(); ++i) {
        const std::size_t h = i + static_cast<std::size_t>(s.plane());
        err = std::max({err, std::abs(got_q[h] - q[i]), std::abs(got_pn[h] - pn[h]), std::abs(got_rn[h] - rn[h])});
        scale = std::max(scale, std::abs(q[i]));
        const double terms[4] = {pn[h] * q[i], rn[h] * rn[h], q[i] * rn[h], q[i] * q[i]};
        for (int t = 0; t < 4; ++t) want[t] += terms[t], scales[t] += std::abs(terms[t]);
    }
    if (!(err <= 1e-14 * scale)) return state.SkipWithError(fmt::format("one-pass SpMV error {}", err / scale).c_str());
    for (int t = 0; t < 4; ++t)
        if (!(relative(got_sums[t], want[t], scales[t]) < 1e-12))
            return state.SkipWithError(fmt::format("one-pass sum {} differs from the host's", t).c_str());
    const std::size_t v = f.vector_bytes(), vh = haloed * 8;
    // The workload's model: the matrix, r, q and p read and r_next, p_next written on the haloed rows, q_next
    // written; with x: x read and written (the older direction reconstructed).
    testing::time_by_backend_clock(state, *f.backend, spmv_bytes(format, f.host) - 2 * v + 5 * vh + (with_x ? 3 : 1) * v,
                                   launch);
}

// The fused update (x += αp, r -= αq, (r, r)) and the folded one (r -= αq, (r, r)), α tiny; their sums checked.
void update(benchmark::State& state, bool folded) {
    Fixture& f = fixture(state.range(0));
    const double alpha = 1e-9;
    double* rr = f.r.as<double>() + f.host.slab.plane();
    auto launch = [&] {
        if (folded) return launch_update_residual(alpha, f.q.as<double>(), rr, nullptr, f.rows(), f.zeroed_sum(), f.stream);
        return launch_fused_update(alpha, f.y.as<double>(), f.q.as<double>(), f.xs.as<double>(), rr, nullptr, rr, f.rows(),
                                   f.zeroed_sum(), f.stream);
    };
    if (launch() != cudaSuccess) return state.SkipWithError("launch failed");
    const auto r = f.download(f.r, f.rh.size());
    double want = 0;
    for (index_t i = 0; i < f.rows(); ++i) want += r[i + f.host.slab.plane()] * r[i + f.host.slab.plane()];
    if (!(relative(f.result(), want, want) < 1e-12)) return state.SkipWithError("(r, r) differs from the host's");
    testing::time_by_backend_clock(state, *f.backend, (folded ? 3 : 6) * f.vector_bytes(), launch);
}

// The device's copy rate on one vector (read + write), the reference for the kernels' rates in the same run.
void copy(benchmark::State& state) {
    Fixture& f = fixture(state.range(0));
    testing::time_by_backend_clock(state, *f.backend, 2 * f.vector_bytes(), [&] {
        return cudaMemcpyAsync(f.q.data(), f.y.data(), f.vector_bytes(), cudaMemcpyDeviceToDevice, f.stream);
    });
}

void register_all() {
    auto backend = Registry<Backend>::instance().create("cuda");
    if (backend->unavailable()) return;
    auto add = [](const std::string& name, auto fn) {
        benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Unit(benchmark::kMicrosecond)->Arg(128)->Arg(256);
    };
    for (const Format format : {Format::csr, Format::ell}) {
        add(fmt::format("spmv/{}", format_names()[int(format)]), [format](benchmark::State& s) { spmv(s, format, 0, false); });
        for (int rows : {1, 2, 4, 8}) {
            auto name = [&](const char* kernel) { return fmt::format("{}/{}_r{}", kernel, format_names()[int(format)], rows); };
            add(name("spmv_dot"), [format, rows](benchmark::State& s) { spmv(s, format, rows, true); });
            add(name("spmv_folded"), [format, rows](benchmark::State& s) { spmv_folded(s, format, rows); });
            add(name("spmv_one_pass"), [format, rows](benchmark::State& s) { spmv_one_pass(s, format, rows, false); });
            add(name("spmv_one_pass_x"), [format, rows](benchmark::State& s) { spmv_one_pass(s, format, rows, true); });
        }
    }
    for (int rows : {1, 2, 4, 8}) {
        auto name = [rows](const char* kernel) { return fmt::format("{}/matrix_free_r{}", kernel, rows); };
        add(name("spmv"), [rows](benchmark::State& s) { spmv(s, Format::matrix_free, rows, false); });
        add(name("spmv_dot"), [rows](benchmark::State& s) { spmv(s, Format::matrix_free, rows, true); });
        add(name("spmv_folded"), [rows](benchmark::State& s) { spmv_folded(s, Format::matrix_free, rows); });
        add(name("spmv_one_pass"), [rows](benchmark::State& s) { spmv_one_pass(s, Format::matrix_free, rows, false); });
        add(name("spmv_one_pass_x"), [rows](benchmark::State& s) { spmv_one_pass(s, Format::matrix_free, rows, true); });
    }
    add("copy", copy);
    add("fused_update", [](benchmark::State& s) { update(s, false); });
    add("update_residual", [](benchmark::State& s) { update(s, true); });
}

}  // namespace
}  // namespace fftune::krylov

int main(int argc, char** argv) { return fftune::testing::bench_main(argc, argv, fftune::krylov::register_all); }
