// The convolution family (README.md beside this file): y = x * g on an
// Nx×Ny×Nz grid, aperiodic (on the padded 2Nx×2Ny×2Nz grid), by the engine's
// distributed FFT convolution (`exact`) or domain-locally with octree-sampled
// exchange (`octree`, Kulkarni et al.): each rank convolves its own x-slab of
// the input at full resolution on a padded grid of its own, sends every other
// rank samples of its contribution to that rank's slab (one all-to-all), and
// sums its own part with the interpolated ones it receives.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/transport.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/parallel.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/run/family.hpp"
#include "families/convolution/sampling.hpp"
#include "core/run/engine_axes.hpp"

namespace fftune::convolution {
namespace {

using json = nlohmann::json;
using Size = std::array<index_t, 3>;  // Nx, Ny, Nz

const std::vector<std::string> methods{"exact", "octree"};
const std::vector<std::string> kernels{"gaussian", "inverse_r"};
const std::vector<std::string> inputs{"blobs", "noise"};

// The kernel at the offset (i, j, l) in cells: a Gaussian of width 2 cells, or
// the softened long-range 1/sqrt(r² + 1).
double kernel_value(const std::string& k, index_t i, index_t j, index_t l) {
    const double r2 = double(i * i + j * j + l * l);
    return k == "gaussian" ? std::exp(-r2 / 8.0) : 1.0 / std::sqrt(r2 + 1.0);
}
// The input at grid point (i, j, l) of n: three Gaussian blobs of width n/8
// along each axis, or uniform noise in [-1, 1] from the point's index.
double input_value(const std::string& in, const Size& n, index_t i, index_t j, index_t l) {
    if (in == "noise") {
        std::uint64_t h = std::uint64_t((i * n[1] + j) * n[2] + l) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
        return double(h >> 11) / double(1ull << 53) * 2 - 1;
    }
    const double c[3][3] = {{0.3, 0.4, 0.5}, {0.7, 0.6, 0.3}, {0.5, 0.2, 0.8}};
    const double wx = double(n[0]) / 8, wy = double(n[1]) / 8, wz = double(n[2]) / 8;
    double v = 0;
    for (const auto& p : c) {
        const double dx = (i - p[0] * n[0]) / wx, dy = (j - p[1] * n[1]) / wy, dz = (l - p[2] * n[2]) / wz;
        v += std::exp(-(dx * dx + dy * dy + dz * dz) / 2);
    }
    return v;
}
// The stored bound of the relative L2 error of `sampling` for a kernel and an
// input (measured at N = 16-20 and 1-4 ranks, README.md; about twice the worst;
// non-cubic grids measured under them, README.md).
double stored_bound(const std::string& sampling, const std::string& kernel, const std::string& input) {
    if (sampling == "full") return 1e-12;
    const bool fine = sampling == "fine";
    if (kernel == "gaussian") return input == "blobs" ? (fine ? 3e-3 : 3.5e-2) : (fine ? 5e-3 : 7e-2);
    return input == "blobs" ? (fine ? 2e-3 : 8e-3) : (fine ? 3e-3 : 2e-2);
}

struct ConvolutionAxes : FamilyAxes {
    std::vector<Size> sizes;
    std::vector<std::string> methods, kernels, inputs, samplings, backends, redistribution;
    std::optional<double> error_bound;
};

// A padded-grid Plan and the kernel's spectrum in its output layout (real: g is even).
struct PaddedConvolution {
    std::unique_ptr<Plan> plan;
    Buffer in, spectrum, out, kernel, window;
    double setup_ms = 0;

    PaddedConvolution(MPI_Comm comm, const Size& n, int ranks, const json& engine, const std::string& k) {
        const Size m{2 * n[0], 2 * n[1], 2 * n[2]};
        plan = std::make_unique<Plan>(comm, fftune::Problem{"fft3d", m, Precision::double_, Direction::forward, ranks},
                                      engine.get<Config>(), InverseInput::destroy);
        Backend& be = plan->backend();
        all_or_none(comm, [&] {
            in = plan->allocate_input();
            spectrum = plan->allocate_output();
            out = plan->allocate_input();
        });
        // g at the padded grid's signed offsets, transformed once; K = Re ĝ / (Mx My Mz).
        const auto t0 = std::chrono::steady_clock::now();
        const Layout& l = plan->input_layout();
        std::vector<double> g(static_cast<std::size_t>(l.box.count()), 0.0);
        auto signed_offset = [&](int a, index_t i) { return i < n[a] ? i : i - m[a]; };
        parallel_for(l.box.lo[0], std::min(l.box.hi[0], m[0]), [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = l.box.lo[1]; j < std::min(l.box.hi[1], m[1]); ++j)
                    for (index_t z = l.box.lo[2]; z < std::min(l.box.hi[2], m[2]); ++z)
                        g[l.offset_of({i, j, z})] =
                            kernel_value(k, signed_offset(0, i), signed_offset(1, j), signed_offset(2, z));
        });
        all_or_none(comm, [&] {
            if (!g.empty()) be.copy_from_host(in.data(), g.data(), g.size() * sizeof(double));
            be.synchronize();
        });
        // Host arrays one at a time (octree: every rank holds the whole padded
        // grid; at 640³ g is 16.8 GB and the spectrum's copy as much per rank).
        const std::size_t input_values = g.size();
        std::vector<double>().swap(g);
        plan->forward(in.data(), spectrum.data());
        all_or_none(comm, [&] {
            std::vector<double> re;
            {
                std::vector<std::complex<double>> s(static_cast<std::size_t>(plan->output_count()));
                if (!s.empty()) be.copy_to_host(s.data(), spectrum.data(), s.size() * sizeof(s[0]));
                be.synchronize();
                re.resize(s.size());
                parallel_for(0, std::int64_t(s.size()), [&](std::int64_t lo, std::int64_t hi) {
                    for (std::int64_t i = lo; i < hi; ++i) re[i] = s[i].real() / double(m[0] * m[1] * m[2]);
                });
            }
            kernel = Buffer(be, re.size() * sizeof(double));
            if (!re.empty()) be.copy_from_host(kernel.data(), re.data(), re.size() * sizeof(double));
            be.synchronize();
            std::vector<double>().swap(re);
            // The padding of the input stays zero from here on.
            const std::vector<double> zeros(input_values, 0.0);
            if (!zeros.empty()) be.copy_from_host(in.data(), zeros.data(), zeros.size() * sizeof(double));
            be.synchronize();
        });
        setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    // Values at the points of `region` (inside the plan's input box), x slowest, into the input.
    void load(const Box3& region, const std::function<double(index_t, index_t, index_t)>& x) {
        const Layout& l = plan->input_layout();
        std::vector<double> host(static_cast<std::size_t>(l.box.count()), 0.0);
        parallel_for(region.lo[0], region.hi[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = region.lo[1]; j < region.hi[1]; ++j)
                    for (index_t z = region.lo[2]; z < region.hi[2]; ++z) host[l.offset_of({i, j, z})] = x(i, j, z);
        });
        if (!host.empty()) plan->backend().copy_from_host(in.data(), host.data(), host.size() * sizeof(double));
        plan->backend().synchronize();
    }
    // The output over the plan's input box, on the host.
    std::vector<double> result() {
        std::vector<double> host(static_cast<std::size_t>(plan->input_layout().box.count()));
        if (!host.empty()) plan->backend().copy_to_host(host.data(), out.data(), host.size() * sizeof(double));
        plan->backend().synchronize();
        return host;
    }
    // Room for window_result(): `box` packed, in backend memory.
    void reserve_window(const Box3& box) { window = Buffer(plan->backend(), std::size_t(box.count()) * sizeof(double)); }
    // The output over `box` (inside the plan's input box), packed on the
    // device and then copied to `host` (resized; its layout: window_layout):
    // only the part the caller reads crosses to the host (octree: the
    // Nx×Ny×Nz domain, 1/8 of the padded grid).
    void window_result(const Box3& box, std::vector<double>& host) {
        const Layout& l = plan->input_layout();
        host.resize(static_cast<std::size_t>(box.count()));
        if (host.empty()) return;
        if (window.bytes() < host.size() * sizeof(double))
            throw std::logic_error("convolution: window_result() needs reserve_window() of its box first");
        Backend& be = plan->backend();
        be.copy_region(window.data(), packed_region(l, box, 0), out.data(), region_of(l, box), sizeof(double));
        be.copy_to_host(host.data(), window.data(), host.size() * sizeof(double));
        be.synchronize();
    }
    Layout window_layout(const Box3& box) const { return {box, plan->input_layout().order}; }
    // Its arrays and the plan's own workspace (Plan::backend_bytes would count the caller's arrays again).
    std::size_t bytes() const {
        return plan->workspace_bytes() + in.bytes() + spectrum.bytes() + out.bytes() + kernel.bytes() + window.bytes();
    }
};

class ConvolutionWorkload final : public Workload {
public:
    explicit ConvolutionWorkload(const Point& pt)
        : n_(pt.problem.at("size").get<Size>()),
          kernel_(pt.problem.at("kernel").get<std::string>()),
          input_(pt.problem.at("input").get<std::string>()),
          octree_(pt.config.at("method") == "octree"),
          sampling_(octree_ ? pt.config.at("sampling").get<std::string>() : "full"),
          config_(pt.config) {
        bound_ = pt.problem.contains("error_bound") ? pt.problem.at("error_bound").get<double>()
                                                    : stored_bound(sampling_, kernel_, input_);
    }

    void setup(MPI_Comm comm) override {
        FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
        FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
        comm_ = comm;
        own_ = slab(rank_);
        if (octree_) {  // one rank's padded grid on its own; the domain part of its output goes to the host
            // Its plan sees only this rank: the ranks sharing a device are
            // checked here, before anything is allocated (at 640³ two octree
            // ranks on one H200 ran out of memory in cudaMalloc instead).
            std::unique_ptr<Backend> probe;
            all_or_none(comm, [&] { probe = Registry<Backend>::instance().create(config_.at("backend").get<std::string>()); });
            require_device_memory(comm, *probe, octree_need());
            probe.reset();
            // Rank-local (its collectives are on MPI_COMM_SELF): a failure on one
            // rank is agreed on all before the next collective call.
            all_or_none(comm, [&] {
                conv_ = std::make_unique<PaddedConvolution>(MPI_COMM_SELF, n_, 1, local_engine(), kernel_);
                conv_->reserve_window(domain());
            });
        } else {
            conv_ = std::make_unique<PaddedConvolution>(comm, n_, ranks_, exact_engine(), kernel_);
            own_ = intersect(conv_->plan->input_layout().box, domain());
        }
        all_or_none(comm, [&] {
            timer_ = std::make_unique<PhaseTimer>(conv_->plan->backend());
            for (const char* p : {"forward", "kernel", "inverse"}) timer_->phase(p);
            if (octree_)
                for (const char* p : {"sample", "exchange", "interpolate"}) timer_->phase(p);
        });
    }
    Backend& backend() override { return conv_->plan->backend(); }
    void prepare(MPI_Comm comm) override {
        all_or_none(comm, [&] { conv_->load(own_, [&](index_t i, index_t j, index_t l) { return x(i, j, l); }); });
    }
    std::unique_ptr<PhaseClock> make_clock() override { return conv_->plan->make_clock(); }
    std::vector<std::string> phase_names() override { return timer_->names(); }
    void step() override {
        y_ = run(sampling_scheme(sampling_), true);
        if (octree_) apply_wrong_answer(y_, n_[2]);  // tests only (sampling.hpp)
    }
    std::vector<double> collect_phase_times() override { return timer_->collect(); }
    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = conv_->bytes();
        f.workspace_bytes = f.backend_bytes - conv_->in.bytes() - conv_->out.bytes();
        f.host_staging_bytes = conv_->plan->host_staging_bytes();
        return f;
    }
    std::vector<PhaseTraffic> traffic() const override {
        std::vector<PhaseTraffic> t(timer_->names().size());
        std::size_t fwd = 0, inv = 0, sent = 0, received = 0;
        for (const auto& p : conv_->plan->phase_traffic(Direction::forward)) fwd += p.device_bytes, sent += p.sent_bytes, received += p.received_bytes;
        for (const auto& p : conv_->plan->phase_traffic(Direction::inverse)) inv += p.device_bytes, sent += p.sent_bytes, received += p.received_bytes;
        t[0].device_bytes = fwd, t[2].device_bytes = inv;
        t[1].device_bytes = std::size_t(conv_->plan->output_count()) * (2 * 16 + 8);
        if (octree_) {
            t[4].sent_bytes = sent_values_ * sizeof(double), t[4].received_bytes = received_values_ * sizeof(double);
        } else {  // the engine's reshapes, attributed to the transforms' exchange
            t[0].sent_bytes = sent, t[0].received_bytes = received;
        }
        return t;
    }
    // The relative L2 error against the exact convolution (octree: the same
    // pipeline at full resolution, exact by linearity; exact: itself), and the
    // exact values at a point of each octree cell against a direct sum over the grid, the
    // difference relative to max |exact| (the FFT's round-off is relative to
    // the field's size: a point where the field is 1e-4 of its peak has 1e4×
    // the relative error; 1.6e-10 at 512³ on an H200).
    ValidationResult validate(MPI_Comm comm) override {
        if (!octree_) {  // the last step's result, read from backend memory: what the timed runs computed
            y_ = run(sampling_scheme("full"), false, false);
            apply_wrong_answer(y_, n_[2]);  // tests only (sampling.hpp)
        }
        const std::vector<double> exact = octree_ ? run(sampling_scheme("full"), false) : y_;
        double local[5] = {0, 0, 0, 0, 0};  // Σ (y - exact)², Σ exact², not finite, direct-sum error, max |exact|
        double scale = 0;
        for (std::size_t i = 0; i < y_.size(); ++i) {
            const double e = y_[i] - exact[i];
            if (!std::isfinite(e)) local[2] = 1;
            else local[0] += e * e, local[1] += exact[i] * exact[i];
            scale = std::max(scale, std::abs(exact[i]));
        }
        // Direct sums at one point of every octree cell of own_: a cell dropped
        // from the tiling is dropped from both runs above alike, so only a probe
        // inside it sees it. Each costs Nx Ny Nz kernel terms: every cell while
        // that totals at most 2^26 per rank (N ≤ 40 at one rank, 48 at four; 64
        // probes at 16³ on one rank), else one per block of 2^L cells, at most
        // max(16, 2^26 / (Nx Ny Nz)) of them (16 at 256³ and 512³, the cost of
        // the 16 random points before).
        const index_t nx = n_[0], points = n_[0] * n_[1] * n_[2];
        const auto probes = probe_points(own_, sampling_scheme("full").cell,
                                         std::max<std::size_t>(16, (std::size_t(1) << 26) / std::size_t(points)));
        // Σ over x-planes a of each plane's sum, in a's order whatever the threads.
        std::vector<double> plane(probes.size() * std::size_t(nx), 0.0);
        parallel_for(0, std::int64_t(plane.size()), [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t k = lo; k < hi; ++k) {
                const auto& p = probes[std::size_t(k / nx)];
                const index_t a = k % nx;
                double v = 0;
                for (index_t b = 0; b < n_[1]; ++b)
                    for (index_t c = 0; c < n_[2]; ++c) v += x(a, b, c) * kernel_value(kernel_, p[0] - a, p[1] - b, p[2] - c);
                plane[std::size_t(k)] = v;
            }
        });
        for (std::size_t s = 0; s < probes.size(); ++s) {
            const auto [i, j, l] = probes[s];
            double d = 0;
            for (index_t a = 0; a < nx; ++a) d += plane[s * std::size_t(nx) + std::size_t(a)];
            const double got = exact[static_cast<std::size_t>(((i - own_.lo[0]) * own_.extent(1) + (j - own_.lo[1])) *
                                                                  own_.extent(2) +
                                                              (l - own_.lo[2]))];
            local[3] = std::max(local[3], std::abs(got - d));
        }
        local[4] = scale;
        double sum[2], mx[3];
        FFTUNE_MPI_CHECK(MPI_Allreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, comm));
        FFTUNE_MPI_CHECK(MPI_Allreduce(local + 2, mx, 3, MPI_DOUBLE, MPI_MAX, comm));
        mx[1] /= std::max(mx[2], 1e-300);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double l2 = mx[0] > 0 ? nan : std::sqrt(sum[0] / std::max(sum[1], 1e-300));
        // exact: its values against the direct sum (the L2 against itself would be 0 by construction).
        Check direct = make_check("exact_vs_direct_sum", mx[1], 1e-10);
        if (!octree_) return {{direct}};
        Check c = make_check(fmt::format("l2_vs_exact_{}_{}_{}", sampling_, kernel_, input_), l2, bound_);
        c.l2_rel_error = l2;
        if (!c.passed)
            c.method += fmt::format(": relative L2 error {:.3g} exceeds the bound {:.3g}", l2, bound_);
        return {{c, direct}};
    }
    void annotate(MPI_Comm comm, json& record) override {
        unsigned long long mine[2] = {sent_values_ * sizeof(double), conv_->bytes()}, most[2];
        FFTUNE_MPI_CHECK(MPI_Allreduce(mine, most, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
        record["convolution"] = {{"kernel_setup_ms", conv_->setup_ms},
                                 {"sent_bytes_max_rank", most[0]},
                                 {"memory_bytes_max_rank", most[1]},
                                 {"memory_model_bytes", memory_model()},
                                 {"samples_sent", sent_values_},
                                 {"error_bound", bound_}};
        if (!octree_) {  // the engine's exchange, both transforms
            std::size_t sent = 0;
            for (auto d : {Direction::forward, Direction::inverse})
                for (const auto& p : conv_->plan->phase_traffic(d)) sent += p.sent_bytes;
            unsigned long long s = sent, m = 0;
            FFTUNE_MPI_CHECK(MPI_Allreduce(&s, &m, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
            record["convolution"]["sent_bytes_max_rank"] = m;
        }
    }

    // What one octree rank allocates, before its plan exists: memory_model()
    // with the FFT work area taken as the spectrum's size (cuFFT's 3D r2c
    // asks for up to its output).
    std::size_t octree_need() const { return octree_arrays(16); }

    // The predicted footprint of octree, from the grid alone: every rank holds
    // the whole padded grid M = 2N per axis, its input and output (Mx My Mz
    // reals), the r2c spectrum (Mx My (Mz/2 + 1) complex; z is halved) and the
    // kernel (as many reals), plus the plan's workspace. Exact: nothing
    // predicted (0).
    std::size_t memory_model() const { return octree_ ? octree_arrays(0) + conv_->plan->workspace_bytes() : 0; }

    // The octree's arrays, with `work` bytes per spectrum value for an FFT work area.
    std::size_t octree_arrays(std::size_t work) const {
        const std::size_t mx = std::size_t(2 * n_[0]), my = std::size_t(2 * n_[1]), mz = std::size_t(2 * n_[2]);
        const std::size_t spec = mx * my * (mz / 2 + 1), window = std::size_t(n_[0] * n_[1] * n_[2]);
        return 2 * mx * my * mz * sizeof(double) + spec * (16 + 8 + work) + window * sizeof(double);
    }

private:
    // Ranks own x-slabs of the grid (the exact engine's split too).
    Box3 slab(int r) const {
        return {{split_lo(n_[0], ranks_, r), 0, 0}, {split_hi(n_[0], ranks_, r), n_[1], n_[2]}};
    }
    Box3 domain() const { return {{0, 0, 0}, n_}; }
    // The cells this rank samples for each rank q (`to`: tiling q's slab, rated
    // by the distance from this one) and receives from it (`from`), per
    // scheme, made once: none for q = this rank.
    struct Tiling {
        std::vector<std::vector<Cell>> to, from;
        std::size_t sent = 0;
    };
    const Tiling& tiling(const SamplingScheme& s) {
        auto [it, fresh] = tilings_.try_emplace(s.name);
        if (fresh)
            for (int q = 0; q < ranks_; ++q) {
                it->second.to.push_back(q == rank_ ? std::vector<Cell>{} : tile(slab(q), own_, s));
                it->second.from.push_back(q == rank_ ? std::vector<Cell>{} : tile(own_, slab(q), s));
                it->second.sent += sample_count(it->second.to.back());
            }
        return it->second;
    }
    double x(index_t i, index_t j, index_t l) const { return input_value(input_, n_, i, j, l); }
    // One rank's whole transform on the point's backend (default_config would
    // pick the GPU whatever the point asked for).
    json local_engine() const {
        return {{"backend", config_.at("backend")}, {"decomposition", "reference_3d"}, {"layout", "default"},
                {"process_grid", {1, 1}},         {"redistribution", json::array()},    {"gpu_aware", false}};
    }
    json exact_engine() const {
        return {{"backend", config_.at("backend")},
                {"decomposition", "slab_2d1d"},
                {"layout", "default"},
                {"process_grid", {ranks_, 1}},
                {"redistribution", {config_.at("redistribution")}},
                {"gpu_aware", false}};
    }

    // One convolution; returns y over own_ (x slowest). Octree: sample with `s`.
    // `transform` false: only read back what the last one left (exact).
    std::vector<double> run(const SamplingScheme& s, bool timed, bool transform = true) {
        auto scope = [&](int ph) { return timed ? std::optional<PhaseScope>(std::in_place, *timer_, ph) : std::nullopt; };
        Backend& be = conv_->plan->backend();
        if (transform) {
            {
                auto t = scope(0);
                conv_->plan->forward(conv_->in.data(), conv_->spectrum.data());
            }
            {
                auto t = scope(1);
                be.multiply_real(conv_->spectrum.data(), conv_->kernel.data(), conv_->plan->output_count(),
                                 Precision::double_);
            }
            auto t = scope(2);
            conv_->plan->inverse(conv_->spectrum.data(), conv_->out.data());
        }
        // exact: the result stays in backend memory (validation reads it).
        if (!octree_ && timed) return {};
        std::vector<double> y(static_cast<std::size_t>(own_.count()));
        std::vector<double> send, recv;
        std::vector<int> sc(ranks_, 0), sd(ranks_, 0), rc(ranks_, 0), rd(ranks_, 0);
        {
            auto t = octree_ ? scope(3) : std::nullopt;
            Layout l = conv_->plan->input_layout();
            if (octree_) {
                conv_->window_result(domain(), window_);
                l = conv_->window_layout(domain());
            } else {
                window_ = conv_->result();
            }
            const GridView at{window_.data(), l.offset_of({0, 0, 0}), l.strides()};  // the strides from the origin
            std::size_t k = 0;
            for (index_t i = own_.lo[0]; i < own_.hi[0]; ++i)
                for (index_t j = own_.lo[1]; j < own_.hi[1]; ++j)
                    for (index_t z = own_.lo[2]; z < own_.hi[2]; ++z) y[k++] = at(i, j, z);
            if (octree_) {
                const Tiling& tl = tiling(s);
                send.reserve(tl.sent);
                for (int q = 0; q < ranks_; ++q) {
                    sd[q] = int(send.size());
                    sample(tl.to[q], at, send);
                    sc[q] = int(send.size()) - sd[q];
                    rd[q] = q ? rd[q - 1] + rc[q - 1] : 0;
                    rc[q] = int(sample_count(tl.from[q]));
                }
            }
        }
        if (!octree_) return y;
        recv.resize(std::size_t(rd[ranks_ - 1] + rc[ranks_ - 1]));
        {
            auto t = scope(4);
            FFTUNE_MPI_CHECK(MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_DOUBLE, recv.data(), rc.data(),
                                           rd.data(), MPI_DOUBLE, comm_));
        }
        {
            auto t = scope(5);
            const Tiling& tl = tiling(s);
            for (int q = 0; q < ranks_; ++q)
                if (q != rank_) interpolate_add(tl.from[q], recv.data() + rd[q], own_, y.data());
        }
        if (timed) sent_values_ = send.size(), received_values_ = recv.size();
        return y;
    }

    Size n_;
    std::string kernel_, input_;
    bool octree_;
    std::string sampling_;
    json config_;
    double bound_ = 0;
    int ranks_ = 1, rank_ = 0;
    MPI_Comm comm_ = MPI_COMM_NULL;
    Box3 own_;
    std::unique_ptr<PaddedConvolution> conv_;
    std::unique_ptr<PhaseTimer> timer_;
    std::vector<double> y_;
    std::size_t sent_values_ = 0, received_values_ = 0;
    std::map<std::string, Tiling> tilings_;
    std::vector<double> window_;  // the host copy run() samples (octree: the whole domain; exact: the local box)
};

class ConvolutionFamily final : public Family {
public:
    std::string name() const override { return "convolution"; }
    std::string summary() const override {
        return "aperiodic 3D convolution (Kulkarni et al.): the engine's distributed FFT convolution or domain-local "
               "with octree-sampled exchange";
    }
    std::vector<std::string> testcase_keys() const override {
        return {"sizes", "method", "kernel", "input", "sampling", "redistribution", "backend", "error_bound"};
    }
    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j, const std::vector<int>&) const override {
        auto a = std::make_shared<ConvolutionAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        a->sizes = ps.sizes(j.at("sizes"), "/sizes", index_t{1} << 33);
        a->methods = ps.names_axis(TestcaseParser::value_or(j, "method", "all"), "/method", methods);
        a->kernels = ps.names_axis(TestcaseParser::value_or(j, "kernel", "all"), "/kernel", kernels);
        a->inputs = ps.names_axis(TestcaseParser::value_or(j, "input", "blobs"), "/input", inputs);
        a->samplings = ps.names_axis(TestcaseParser::value_or(j, "sampling", "all"), "/sampling", sampling_names());
        a->redistribution = ps.names_axis(TestcaseParser::value_or(j, "redistribution", "a2a_sync"), "/redistribution",
                                          Registry<Transport>::instance().names());
        a->backends = ps.names_axis(TestcaseParser::value_or(j, "backend", "fftw"), "/backend",
                                    Registry<Backend>::instance().names());
        if (j.contains("error_bound")) {
            const json& b = j.at("error_bound");
            if (!b.is_number() || b.get<double>() <= 0)
                ps.fail("/error_bound", "a positive relative L2 error, replacing the stored bounds");
            a->error_bound = b.get<double>();
        }
        return a;
    }
    std::vector<Point> points(const FamilyAxes& any, int ranks) const override {
        const auto& a = dynamic_cast<const ConvolutionAxes&>(any);
        std::vector<Point> out;
        for (const Size& n : a.sizes)
            for (const auto& k : a.kernels)
                for (const auto& in : a.inputs)
                    for (const auto& m : a.methods)
                        for (const auto& be : a.backends) {
                            std::vector<json> configs;
                            if (m == "exact")
                                for (const auto& r : a.redistribution)
                                    configs.push_back({{"method", m}, {"redistribution", r}, {"backend", be}});
                            else
                                for (const auto& s : a.samplings)
                                    configs.push_back({{"method", m}, {"sampling", s}, {"backend", be}});
                            for (const auto& c : configs) {
                                Point pt;
                                pt.index = static_cast<int>(out.size());
                                pt.problem = {{"kind", "convolution"}, {"ranks", ranks}, {"size", n},
                                              {"kernel", k}, {"input", in}};
                                if (a.error_bound) pt.problem["error_bound"] = *a.error_bound;
                                pt.config = c;
                                pt.key = config_key(c);
                                pt.label = fmt::format("convolution {} {} {} {}", size_string(n), k, in, pt.key);
                                out.push_back(std::move(pt));
                            }
                        }
        return out;
    }
    std::optional<std::string> not_applicable(const json& problem, const json& config) const override {
        const Size n = problem.at("size").get<Size>();
        const index_t side = std::min({n[0], n[1], n[2]});
        const int p = problem.at("ranks").get<int>();
        if (n[0] < p) return fmt::format("{} x-planes over {} ranks: every rank needs a plane", n[0], p);
        // An extent of 1 makes the convolution 2D at most (at 1³ a product), and
        // along z an answer shifted by one point is the same answer.
        if (side < 2)
            return fmt::format("convolution grids need every extent >= 2, not {}", size_string(n));
        if (config.at("method") == "octree") {
            const auto& s = sampling_scheme(config.at("sampling").get<std::string>());
            if (side < s.smallest_side)
                return fmt::format("octree with {} sampling runs on grids whose smallest side is at least {}, not {}: "
                                   "below it its error exceeds the stored bound (README.md); use larger extents or "
                                   "method exact",
                                   s.name, s.smallest_side, size_string(n));
        }
        const std::string be = config.at("backend").get<std::string>();
        if (!Registry<Backend>::instance().contains(be)) throw std::invalid_argument("unknown backend '" + be + "'");
        if (auto why = Registry<Backend>::instance().create(be)->unavailable()) return why;
        if (config.at("method") == "exact") {
            const json e{{"backend", be}, {"decomposition", "slab_2d1d"}, {"layout", "default"}, {"process_grid", {p, 1}},
                         {"redistribution", {config.at("redistribution")}}, {"gpu_aware", false}};
            return check_applicable({"fft3d", {2 * n[0], 2 * n[1], 2 * n[2]}, Precision::double_, Direction::forward, p},
                                    e.get<Config>());
        }
        return std::nullopt;
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        return std::make_unique<ConvolutionWorkload>(point);
    }
    std::string config_key(const json& c) const override {
        const std::string m = c.at("method").get<std::string>();
        return fmt::format("{}/{}/{}", m, c.at(m == "exact" ? "redistribution" : "sampling").get<std::string>(),
                           c.at("backend").get<std::string>());
    }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        std::string sides;  // octree's smallest side per sampling
        for (const auto& s : sampling_schemes())
            if (s.smallest_side > 2) sides += fmt::format(", {} {}", s.smallest_side, s.name);
        return {{"size", Role::size, {}, "", 3,
                 "Nx Ny Nz: the grid, x-slabs over the ranks (every extent >= 2, Nx >= ranks; octree: smallest side >= " +
                     sides.substr(2) + ")"},
                {"kernel", Role::category, kernels, "gaussian", 0, "gaussian or inverse_r"},
                {"input", Role::category, inputs, "blobs", 0, "blobs or noise"}};
    }
    std::vector<std::string> config_axes() const override { return {"method", "sampling", "redistribution", "backend"}; }
    json default_config(const json&) const override {
        return {{"method", "exact"}, {"redistribution", "a2a_sync"}, {"backend", "fftw"}};
    }
};

const bool registered = register_variant<Family, ConvolutionFamily>("convolution");

}  // namespace
}  // namespace fftune::convolution
