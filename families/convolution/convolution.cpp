// The convolution family (README.md beside this file): y = x * g on an
// Nx×Ny×Nz grid, aperiodic (on the padded 2Nx×2Ny×2Nz grid), by the engine's
// distributed FFT convolution (`exact`) or domain-locally with octree-sampled
// exchange (`octree`, Kulkarni et al.): each rank convolves its own x-slab of
// the input at full resolution on a padded grid of its own, sends every other
// rank samples of its contribution to that rank's slab (gathered, exchanged
// and interpolated in the backend's memory: ConvolutionKernels, the `redistribution`
// transport), and sums its own part with the interpolated ones it receives.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <optional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/redistribution.hpp"
#include "core/engine/transport.hpp"
#include "core/engine/validation.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/parallel.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/run/family.hpp"
#include "core/run/engine_axes.hpp"
#include "families/convolution/device_kernels.hpp"
#include "families/convolution/pruned_transform.hpp"
#include "families/convolution/sampling.hpp"

namespace fftune::convolution {
namespace {

using json = nlohmann::json;
using Size = std::array<index_t, 3>;  // Nx, Ny, Nz

const std::vector<std::string> methods{"exact", "octree"};
const std::vector<std::string> kernels{"gaussian", "inverse_r"};
const std::vector<std::string> inputs{"blobs", "noise"};
// The octree's local transform: the whole padded grid's (the engine's 1-rank
// plan), or pruned to the rows that are nonzero or read (pruned_transform.hpp).
const std::vector<std::string> local_transforms{"full", "pruned"};

// The stored bound of the relative L2 error of `sampling` for a kernel and an
// input (measured at N = 16-20 and 1-4 ranks, README.md; about twice the worst;
// non-cubic grids measured under them, README.md).
double stored_bound(const std::string& sampling, const std::string& kernel, const std::string& input) {
    if (sampling == "full") return 1e-12;
    const bool fine = sampling == "fine";
    if (kernel == "gaussian") return input == "blobs" ? (fine ? 3e-3 : 3.5e-2) : (fine ? 5e-3 : 7e-2);
    return input == "blobs" ? (fine ? 2e-3 : 8e-3) : (fine ? 3e-3 : 2e-2);
}

// apply_wrong_answer on `count` values in backend memory (tests only: through the host).
void apply_wrong_answer(Backend& be, double* y, std::size_t count, index_t nz) {
    if (!wrong_answer_for_testing() || count == 0) return;
    std::vector<double> host(count);
    be.copy_to_host(host.data(), y, count * sizeof(double));
    be.synchronize();
    convolution::apply_wrong_answer(host, nz);
    be.copy_from_host(y, host.data(), count * sizeof(double));
    be.synchronize();
}

struct ConvolutionAxes : FamilyAxes {
    std::vector<Size> sizes;
    std::vector<std::string> methods, kernels, inputs, samplings, local_transforms, backends, redistribution;
    std::optional<double> error_bound;
};

// A padded-grid Plan and the kernel's spectrum in its output layout (real: g is even).
// `reuse_input`: the inverse writes into the input array (no output array of
// its own: an octree rank holds one padded real grid, not two), and
// restore_input() puts the input back from a packed copy of its region.
// prune(): the transforms run as PrunedTransform's passes on the same arrays
// (the kernel spectrum is the plan's, made before).
struct PaddedConvolution {
    std::unique_ptr<Plan> plan;
    std::unique_ptr<PrunedTransform> pruned;
    Buffer in, spectrum, out, kernel;
    Buffer source;  // reuse_input: the loaded region, packed
    Box3 loaded;
    bool reuse_input = false;
    std::string kernel_name;  // the kernel K is of
    double setup_ms = 0;      // K's making, the last time

    PaddedConvolution(MPI_Comm comm, const Size& n, int ranks, const json& engine, const std::string& k, bool reuse)
        : reuse_input(reuse) {
        const Size m{2 * n[0], 2 * n[1], 2 * n[2]};
        plan = std::make_unique<Plan>(comm, fftune::Problem{"fft3d", m, Precision::double_, Direction::forward, ranks},
                                      engine.get<Config>(), InverseInput::destroy);
        all_or_none(comm, [&] {
            in = plan->allocate_input();
            spectrum = plan->allocate_output();
            if (!reuse_input) out = plan->allocate_input();
        });
        make_kernel(comm, n, k);
    }
    // K for the kernel `k`: Re ĝ / (Mx My Mz), g at the padded grid's signed
    // offsets (g is even: ĝ is real), packed in the output layout's order.
    // A kernel that factors per axis (gaussian) is written from its three 1D
    // spectra (separable_spectrum); another (inverse_r) is written as
    // g / (Mx My Mz) and transformed in backend memory, the real parts taken
    // by a strided copy. The input is zero after it. Collective over the
    // plan's communicator.
    void make_kernel(MPI_Comm comm, const Size& n, const std::string& k) {
        const Size m{2 * n[0], 2 * n[1], 2 * n[2]};
        const double scale = 1.0 / double(m[0] * m[1] * m[2]);
        Backend& be = plan->backend();
        const Layout& o = plan->output_layout();
        const auto t0 = std::chrono::steady_clock::now();
        const std::optional<SeparableTerms> factors = separable_spectrum(green_kernel(k), n, o.box, scale);
        all_or_none(comm, [&] {
            if (!kernel.data()) kernel = Buffer(be, std::max<std::size_t>(std::size_t(o.box.count()), 1) * sizeof(double));
            if (factors) be.fill_separable(kernel.data(), Layout{o.box, o.order}, *factors, Precision::double_);
            else kernels_for(be)->fill_green(be, in.as<double>(), plan->input_layout(), n, green_kernel(k), scale);
        });
        if (!factors) plan->forward(in.data(), spectrum.data());
        all_or_none(comm, [&] {
            if (!factors) {
                const std::array<index_t, 3> e{o.box.extent(o.order[0]), o.box.extent(o.order[1]),
                                               o.box.extent(o.order[2])};
                const StridedRegion re{e, {2 * e[1] * e[2], 2 * e[2], 2}, 0}, packed{e, {e[1] * e[2], e[2], 1}, 0};
                be.copy_region(kernel.data(), packed, spectrum.data(), re, sizeof(double));
            }
            be.zero(in.data(), in.bytes());  // the padding of the input stays zero from here on
            be.synchronize();
        });
        kernel_name = k;
        setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    // The input field at the points of `region` (inside the plan's input box)
    // into the input, whose other points are zero: written packed in backend
    // memory, then copied into place.
    void load(const Box3& region, const Size& n, InputField field) {
        if (pruned && region != pruned->own_box())
            throw std::logic_error("convolution: the pruned transform reads the input at " + pruned->own_box().str() +
                                   ", not " + region.str());
        loaded = region;
        if (region.empty()) return;
        Backend& be = plan->backend();
        const Layout& l = plan->input_layout();
        Buffer staged(be, std::size_t(region.count()) * sizeof(double));
        kernels_for(be)->fill_input(be, staged.as<double>(), Layout{region, l.order}, region, n, field);
        be.copy_region(in.data(), region_of(l, region), staged.data(), packed_region(l, region, 0), sizeof(double));
        be.synchronize();
        if (reuse_input) source = std::move(staged);
    }
    // The octree's own x-planes [x0, x1) of the grid n are its input's only nonzero ones.
    void prune(const Size& n, index_t x0, index_t x1) {
        pruned = std::make_unique<PrunedTransform>(plan->backend(), plan->input_layout(), plan->output_layout(), n,
                                                   x0, x1);
    }
    // The array the inverse writes.
    void* output() const { return reuse_input ? in.data() : out.data(); }
    void forward() {
        if (pruned) return pruned->forward(in.data(), spectrum.data());
        plan->forward(in.data(), spectrum.data());
    }
    void inverse() {
        if (pruned) return pruned->inverse(spectrum.data(), output());
        plan->inverse(spectrum.data(), output());
    }
    // reuse_input: the input as the forward reads it (zero but the loaded
    // region; pruned: on the rows it reads), queued.
    void restore_input() {
        if (!reuse_input) return;
        if (pruned) return pruned->restore(in.data(), source.data());
        Backend& be = plan->backend();
        const Layout& l = plan->input_layout();
        be.zero(in.data(), in.bytes());
        if (!loaded.empty())
            be.copy_region(in.data(), region_of(l, loaded), source.data(), packed_region(l, loaded, 0), sizeof(double));
    }
    // Its arrays and the plan's own workspace (Plan::backend_bytes would count the caller's arrays again).
    std::size_t bytes() const {
        return plan->workspace_bytes() + in.bytes() + spectrum.bytes() + out.bytes() + kernel.bytes() + source.bytes() +
               (pruned ? pruned->bytes() : 0);
    }
};

class ConvolutionWorkload final : public Workload {
public:
    explicit ConvolutionWorkload(const Point& pt)
        : n_(pt.problem.at("size").get<Size>()),
          kernel_(pt.problem.at("kernel").get<std::string>()),
          input_(pt.problem.at("input").get<std::string>()),
          green_(green_kernel(kernel_)),
          field_(input_field(input_)),
          octree_(pt.config.at("method") == "octree"),
          sampling_(octree_ ? pt.config.at("sampling").get<std::string>() : "full"),
          pruned_(octree_ && pt.config.value("local_transform", "full") == "pruned"),
          transport_(pt.config.at("redistribution").get<std::string>()),
          config_(pt.config) {
        bound_ = pt.problem.contains("error_bound") ? pt.problem.at("error_bound").get<double>()
                                                    : stored_bound(sampling_, kernel_, input_);
    }

    void setup(MPI_Comm comm) override {
        FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
        FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
        comm_ = comm;
        own_ = slab(rank_);
        last_mark_ = std::chrono::steady_clock::now();
        if (octree_) {  // one rank's padded grid on its own; samples of its output go to the others
            // Its plan sees only this rank: the ranks sharing a device are
            // checked here, before anything is allocated (at 640³ two octree
            // ranks on one H200 ran out of memory in cudaMalloc instead).
            const Tilings tiles = tilings(sampling_scheme(sampling_));
            mark(setup_parts_ms_, "tiling");
            std::unique_ptr<Backend> probe;
            all_or_none(comm, [&] { probe = Registry<Backend>::instance().create(config_.at("backend").get<std::string>()); });
            // The local convolution of the last octree point, where it is this
            // one's (kept_local); any other is let go before this one allocates.
            KeptLocal& kept = kept_local();
            if (kept.conv && kept.key != local_key()) kept.conv.reset();
            reused_local_ = bool(kept.conv);
            // Pruned: its plans' work area too, beside the plan's (their plans
            // made here once to ask, on the local plan's layouts).
            std::size_t pruned_work = 0;
            all_or_none(comm, [&] {
                if (!pruned_ || reused_local_) return;
                const auto chain = Registry<Decomposition>::instance().create("reference_3d")->chain(
                    local_problem(), local_engine().get<Config>(), 0);
                pruned_work = PrunedTransform::work_bytes(*probe, chain.layouts.front(), chain.layouts.back(), n_,
                                                          own_.lo[0], own_.hi[0]);
            });
            // A kept local convolution holds its arrays already: its result over own_ and the exchange are left.
            const std::size_t need = reused_local_ ? exchange_model(tiles) + std::size_t(own_.count()) * sizeof(double)
                                                   : octree_need(tiles) + pruned_work;
            ranks_on_device_ = require_device_memory(comm, *probe, need);
            probe.reset();
            // Rank-local (its collectives are on MPI_COMM_SELF): a failure on one
            // rank is agreed on all before the next collective call.
            all_or_none(comm, [&] {
                if (reused_local_) {
                    conv_ = kept.conv;
                    // Another kernel: its K in the kept arrays (at 512^3 on one H200
                    // shared by 2 ranks a new local convolution took 95-106 ms
                    // where the last one's arrays were freed first).
                    kernel_kept_ = conv_->kernel_name == kernel_;
                    if (!kernel_kept_) conv_->make_kernel(MPI_COMM_SELF, n_, kernel_);
                    // Zero but the loaded region, whatever the last point left (one that failed mid-step).
                    conv_->plan->backend().zero(conv_->in.data(), conv_->in.bytes());
                } else {
                    conv_ = std::make_shared<PaddedConvolution>(MPI_COMM_SELF, n_, 1, local_engine(), kernel_, true);
                    if (conv_->plan->input_layout().order != order_xyz)
                        throw std::logic_error("convolution: the octree reads its local plan's input x slowest");
                    if (pruned_) conv_->prune(n_, own_.lo[0], own_.hi[0]);
                    kept = {local_key(), n_, config_.at("backend").get<std::string>(), conv_};
                }
                kernels_ = kernels_for(conv_->plan->backend());
                y_dev_ = Buffer(conv_->plan->backend(), std::size_t(own_.count()) * sizeof(double));
            });
            mark(setup_parts_ms_, "plan_and_kernel");
            exchanges_[sampling_] = make_exchange(tiles, "", &setup_parts_ms_);
        } else {
            keep_local_beside_exact(comm);
            mark(setup_parts_ms_, "release_local");
            conv_ = std::make_shared<PaddedConvolution>(comm, n_, ranks_, exact_engine(), kernel_, false);
            mark(setup_parts_ms_, "plan_and_kernel");
            ranks_on_device_ = conv_->plan->ranks_on_device();
            own_ = intersect(conv_->plan->input_layout().box, domain());
        }
        all_or_none(comm, [&] {
            timer_ = std::make_unique<PhaseTimer>(conv_->plan->backend());
            if (!kernels_) kernels_ = kernels_for(conv_->plan->backend());  // exact: its check's gathers
            for (const char* p : {"forward", "kernel", "inverse"}) timer_->phase(p);
            if (octree_)
                for (const char* p : {"sample", "exchange", "interpolate", "restore"}) timer_->phase(p);
        });
    }
    Backend& backend() override { return conv_->plan->backend(); }
    void prepare(MPI_Comm comm) override {
        all_or_none(comm, [&] { conv_->load(own_, n_, field_); });
    }
    std::unique_ptr<PhaseClock> make_clock() override { return conv_->plan->make_clock(); }
    std::vector<std::string> phase_names() override { return timer_->names(); }
    // The result stays in backend memory (validation reads it back).
    void step() override { run(sampling_scheme(sampling_), true); }
    std::vector<double> collect_phase_times() override { return timer_->collect(); }
    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = conv_->bytes() + y_dev_.bytes() + (octree_ ? exchanges_.at(sampling_)->bytes() : 0);
        f.workspace_bytes = f.backend_bytes - conv_->in.bytes() - conv_->out.bytes();
        f.ranks_on_device = ranks_on_device_;
        f.host_staging_bytes = conv_->plan->host_staging_bytes();
        return f;
    }
    std::vector<PhaseTraffic> traffic() const override {
        std::vector<PhaseTraffic> t(timer_->names().size());
        std::size_t fwd = 0, inv = 0, sent = 0, received = 0;
        for (const auto& p : conv_->plan->phase_traffic(Direction::forward)) fwd += p.device_bytes, sent += p.sent_bytes, received += p.received_bytes;
        for (const auto& p : conv_->plan->phase_traffic(Direction::inverse)) inv += p.device_bytes, sent += p.sent_bytes, received += p.received_bytes;
        // Pruned: one read and write per 1D pass and the zeroing; full: one of its 3D transform.
        t[0].device_bytes = conv_->pruned ? conv_->pruned->forward_device_bytes() : fwd;
        t[2].device_bytes = conv_->pruned ? conv_->pruned->inverse_device_bytes() : inv;
        t[1].device_bytes = std::size_t(conv_->plan->output_count()) * (2 * 16 + 8);
        if (octree_) {  // own part copied and samples gathered; samples exchanged; each source's added
            const std::size_t own = std::size_t(own_.count());
            t[3].device_bytes = 2 * (own + sent_values_) * sizeof(double);
            t[4].sent_bytes = sent_values_ * sizeof(double), t[4].received_bytes = received_values_ * sizeof(double);
            t[5].device_bytes = (received_values_ + 2 * own * std::size_t(ranks_ - 1)) * sizeof(double);
        } else {  // the engine's reshapes, attributed to the transforms' exchange
            t[0].sent_bytes = sent, t[0].received_bytes = received;
        }
        return t;
    }
    // The relative L2 error against the exact convolution, and the exact
    // values at a point of each octree cell against a direct sum over the
    // grid, the difference relative to max |exact| (the FFT's round-off is
    // relative to the field's size: a point where the field is 1e-4 of its
    // peak has 1e4× the relative error; 1.6e-10 at 512³ on an H200).
    // Octree below 2^24 points: exact is the same pipeline at full resolution
    // (exact by linearity), over every point; from 2^24 points on, exact is
    // known at sampled points only (compare_sampled), a small part of the
    // timing. Exact: the direct sums check its own result.
    ValidationResult validate(MPI_Comm comm) override {
        // The last step's result, copied in backend memory: what the timed runs
        // computed. Compared there (only the sums and the probes' values cross).
        Backend& be = conv_->plan->backend();
        const std::size_t count = static_cast<std::size_t>(own_.count());
        last_mark_ = std::chrono::steady_clock::now();
        Buffer y(be, std::max<std::size_t>(count, 1) * sizeof(double));
        mark(validate_parts_ms_, "result_buffer");
        all_or_none(comm, [&] {
            copy_result(y.as<double>());
            apply_wrong_answer(be, y.as<double>(), count, n_[2]);  // tests only (sampling.hpp)
        });
        mark(validate_parts_ms_, "result_copy");  // queued: the copy itself lands in the next part that waits
        const auto probes = probe_points(own_, sampling_scheme("full").cell, max_probes());
        Comparison cmp;
        std::vector<double> got(probes.size());  // exact at the probes
        if (sampled_check()) {  // octree from 2^24 points on
            compare_sampled(comm, y.as<const double>(), cmp, got);
        } else {
            const double* exact = y.as<const double>();
            // Octree: the same pipeline at rate 1 into y_dev_ (its exchange freed
            // after), through the same local transform (pruned or full): the
            // direct sums check that transform's values at the probes, the L2 error
            // then is the sampling's alone.
            if (octree_) {
                if (sampling_ != "full") exchanges_["full"] = make_exchange(tilings(sampling_scheme("full")), reference_transport());
                mark(validate_parts_ms_, "full_exchange");
                run(sampling_scheme("full"), false);
                exact = y_dev_.as<const double>();
                if (sampling_ != "full") exchanges_.erase("full");
                be.synchronize();
                mark(validate_parts_ms_, "full_run");
            }
            all_or_none(comm, [&] { cmp = kernels_for(be)->compare(be, y.as<const double>(), exact, count); });
            all_or_none(comm, [&] {  // exact at the probes, read from backend memory
                for (std::size_t s = 0; s < probes.size(); ++s) {
                    const auto [i, j, l] = probes[s];
                    const auto at = static_cast<std::size_t>(((i - own_.lo[0]) * own_.extent(1) + (j - own_.lo[1])) *
                                                                 own_.extent(2) +
                                                             (l - own_.lo[2]));
                    be.copy_to_host(&got[s], exact + at, sizeof(double));
                }
                be.synchronize();
            });
            mark(validate_parts_ms_, "compare");
        }
        double local[5] = {cmp.sum_error2, cmp.sum_exact2, cmp.not_finite ? 1.0 : 0.0, 0, 0};  // …, direct-sum error, max |exact|
        const double scale = cmp.max_exact;
        // Direct sums at one point of every octree cell of own_ (probe_points;
        // a cell dropped from the tiling is dropped from the full-rate run
        // alike, so only a probe inside it sees it there). Each costs Nx Ny Nz
        // kernel terms (max_probes).
        const index_t nx = n_[0];
        // Each probe's sum per x-plane a, in backend memory (the whole input
        // there for the time of the sums); added over a in a's order here.
        std::vector<double> plane(probes.size() * std::size_t(nx), 0.0);
        if (exact_kept_) {
            // The exact values at the probes are the kept ones, which their
            // direct sums checked when they were computed: that error again.
            local[3] = kept_exact().direct_error;
        } else {
            all_or_none(comm, [&] {
                const Box3 all = domain();
                Buffer xs(be, std::size_t(all.count()) * sizeof(double)),
                    at(be, std::max<std::size_t>(probes.size(), 1) * 3 * sizeof(index_t)),
                    sums(be, std::max<std::size_t>(plane.size(), 1) * sizeof(double));
                std::vector<index_t> flat;
                for (const auto& p : probes) flat.insert(flat.end(), p.begin(), p.end());
                if (!flat.empty()) be.copy_from_host(at.data(), flat.data(), flat.size() * sizeof(index_t));
                const auto k = kernels_for(be);
                k->fill_input(be, xs.as<double>(), Layout{all, order_xyz}, all, n_, field_);
                k->direct_sums(be, xs.as<const double>(), n_, green_, at.as<const index_t>(), probes.size(),
                               sums.as<double>());
                if (!plane.empty()) be.copy_to_host(plane.data(), sums.data(), plane.size() * sizeof(double));
                be.synchronize();
            });
            mark(validate_parts_ms_, "direct_sums");
            for (std::size_t s = 0; s < probes.size(); ++s) {
                double d = 0;
                for (index_t a = 0; a < nx; ++a) d += plane[s * std::size_t(nx) + std::size_t(a)];
                local[3] = std::max(local[3], std::abs(got[s] - d));
            }
        }
        if (sampled_check() && !exact_kept_) kept_exact() = KeptExact{exact_key(), std::move(sampled_exact_), local[3]};
        local[4] = scale;
        double sum[2], mx[3];
        FFTUNE_MPI_CHECK(MPI_Allreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, comm));
        FFTUNE_MPI_CHECK(MPI_Allreduce(local + 2, mx, 3, MPI_DOUBLE, MPI_MAX, comm));
        mx[1] /= std::max(mx[2], 1e-300);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double l2 = mx[0] > 0 ? nan : std::sqrt(sum[0] / std::max(sum[1], 1e-300));
        // exact: its values against the direct sum (the L2 against itself would be 0 by construction).
        Check direct = make_check("exact_vs_direct_sum", mx[1], 1e-10);
        if (!octree_) {
            if (direct.passed && sampled_grid()) keep_exact_values(comm, y.as<const double>(), local[3]);
            return {{direct}};
        }
        Check c = make_check(fmt::format("l2_vs_exact_{}_{}_{}", sampling_, kernel_, input_), l2, bound_);
        c.l2_rel_error = l2;
        if (sampled_check()) c.method += fmt::format(" (at {} sampled points)", check_points_count_);
        if (!c.passed)
            c.method += fmt::format(": relative L2 error {:.3g} exceeds the bound {:.3g}", l2, bound_);
        return {{c, direct}};
    }
    void annotate(MPI_Comm comm, json& record) override {
        unsigned long long mine[2] = {sent_values_ * sizeof(double), conv_->bytes()}, most[2];
        FFTUNE_MPI_CHECK(MPI_Allreduce(mine, most, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
        record["convolution"] = {{"kernel_setup_ms", conv_->setup_ms},
                                 {"local_kept", reused_local_},
                                 {"kernel_kept", reused_local_ && kernel_kept_},
                                 {"exact_kept", exact_kept_},
                                 {"sent_bytes_max_rank", most[0]},
                                 {"memory_bytes_max_rank", most[1]},
                                 {"memory_model_bytes", memory_model()},
                                 {"samples_sent", sent_values_},
                                 {"error_bound", bound_},
                                 {"setup_parts_ms", setup_parts_ms_},
                                 {"validate_parts_ms", validate_parts_ms_}};
        if (octree_)  // the local transform's 1D FFT work over the whole padded grid's (pruned_transform.hpp)
            record["convolution"]["fft_work_fraction"] = {
                {"forward", conv_->pruned ? conv_->pruned->forward_work_fraction() : 1.0},
                {"inverse", conv_->pruned ? conv_->pruned->inverse_work_fraction() : 1.0}};
        if (!octree_) {  // the engine's exchange, both transforms
            std::size_t sent = 0;
            for (auto d : {Direction::forward, Direction::inverse})
                for (const auto& p : conv_->plan->phase_traffic(d)) sent += p.sent_bytes;
            unsigned long long s = sent, m = 0;
            FFTUNE_MPI_CHECK(MPI_Allreduce(&s, &m, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
            record["convolution"]["sent_bytes_max_rank"] = m;
        }
    }

    // The cells this rank samples for each rank q (`to`: tiling q's slab,
    // rated by the distance from this one) and receives from it (`from`):
    // none for q = this rank. Their numbers only (Tiling): the cells are made
    // where they are used (make_exchange).
    struct Tilings {
        std::vector<Tiling> to, from;
        std::size_t sent = 0, received = 0;  // samples
        std::size_t table_bytes = 0;         // of their DeviceTilings
    };
    Tilings tilings(const SamplingScheme& s) const {
        Tilings h;
        for (int q = 0; q < ranks_; ++q) {
            h.to.push_back(q == rank_ ? Tiling{} : tiling(slab(q), own_, s));
            h.from.push_back(q == rank_ ? Tiling{} : tiling(own_, slab(q), s));
            if (q == rank_) continue;
            h.sent += h.to.back().samples(), h.received += h.from.back().samples();
            h.table_bytes += DeviceTiling::bytes_for(h.to.back()) + DeviceTiling::bytes_for(h.from.back());
        }
        return h;
    }

    // What one octree rank allocates, before its plan exists: memory_model()
    // with the plan's FFT work area taken as the spectrum's size (cuFFT's 3D
    // r2c asks for up to its output); the pruned transform's the caller adds.
    std::size_t octree_need(const Tilings& h) const { return octree_arrays(16) + exchange_model(h); }

    // The predicted footprint of octree, from the grid alone: every rank holds
    // the whole padded grid M = 2N per axis, its input, which the inverse
    // overwrites (Mx My Mz reals), the r2c spectrum (Mx My (Mz/2 + 1) complex;
    // z is halved) and the kernel (as many reals), plus the plan's workspace;
    // its own slab's input (to restore the input from) and result; the
    // samples it sends and receives (twice where the transport packs into
    // staging buffers of its own) and the cell tables; pruned: its plans'
    // work area and one zero element (PrunedTransform::bytes), no array.
    // Exact: nothing predicted (0).
    std::size_t memory_model() const {
        if (!octree_) return 0;
        return octree_arrays(0) + conv_->plan->workspace_bytes() + (conv_->pruned ? conv_->pruned->bytes() : 0) +
               exchange_model(tilings(sampling_scheme(sampling_)));
    }
    // The octree's padded-grid arrays and its own slab's input and result,
    // with `work` bytes per spectrum value for an FFT work area.
    std::size_t octree_arrays(std::size_t work) const {
        const std::size_t mx = std::size_t(2 * n_[0]), my = std::size_t(2 * n_[1]), mz = std::size_t(2 * n_[2]);
        const std::size_t spec = mx * my * (mz / 2 + 1);
        return mx * my * mz * sizeof(double) + spec * (16 + 8 + work) + 2 * std::size_t(own_.count()) * sizeof(double);
    }
    // The sample exchange's buffers (SampleExchange) as its transport allocates them.
    std::size_t exchange_model(const Tilings& h) const {
        const auto t = Registry<Transport>::instance().create(transport_);
        const std::size_t staged = t->uses_staging_buffers() ? h.sent + (t->uses_recv_buffer() ? h.received : 0) : 0;
        return (std::max<std::size_t>(h.sent, 1) + std::max<std::size_t>(h.received, 1) + staged) * sizeof(double) +
               h.table_bytes;
    }

private:
    // The octree's local convolution (its plan on MPI_COMM_SELF, its padded
    // arrays, the kernel's spectrum), kept for the next point with the same
    // key: a sweep's octree points of one size differ in sampling and
    // transport, which it does not depend on, and in kernel, whose spectrum
    // is made again in its arrays (its plan and kernel took 45-70 ms per
    // point at 512^3 on 2 GPUs, against 320 ms timed). One is
    // kept, in the process (a runner's process runs one testcase); a point
    // with another key lets it go before allocating, and so does an exact
    // point unless it is of the same size and backend and fits beside it.
    // Never destroyed by static destructors (they run after MPI_Finalize).
    struct KeptLocal {
        std::string key;
        Size n{};             // the grid and backend it is for (in key too)
        std::string backend;
        std::shared_ptr<PaddedConvolution> conv;
    };
    // An exact point: the kept local convolution of its grid and backend stays,
    // for the octree points after it, where this point's plan fits beside it
    // (exact_need); any other is let go before the plan allocates. Collective.
    void keep_local_beside_exact(MPI_Comm comm) {
        KeptLocal& kept = kept_local();
        const bool ours = all_ok(comm, kept.conv && kept.n == n_ && kept.backend == config_.at("backend").get<std::string>());
        if (!ours || !fits_in_device_memory(comm, kept.conv->plan->backend(), exact_need())) kept.conv.reset();
    }
    // The exact point's padded plan per rank, over-estimated: 80 bytes per
    // padded point (M = 8 N^3 over the ranks) for its input, output, spectrum,
    // kernel, work arrays, FFT work area and staging; 52 were measured at 512^3
    // on 2 H200s (28 GB a rank, nccl_a2a).
    std::size_t exact_need() const {
        const std::size_t m = std::size_t(2 * n_[0]) * std::size_t(2 * n_[1]) * std::size_t(2 * n_[2]);
        return m / std::size_t(ranks_) * 80;
    }
    static KeptLocal& kept_local() {
        static auto* kept = new KeptLocal;
        return *kept;
    }
    // The sampled check's points (check_points()): every slab's probes, made
    // on the host and kept per grid, ranks and probes, then 2^16 random ones,
    // which check_values makes where it reads them; and which of them all lie
    // in this rank's slab, the ones its octree check compares (kept too:
    // asking per point took 1.9-2.5 ms of every octree point's check).
    struct CheckProbes {
        std::string key;
        std::vector<index_t> given;  // every slab's probes, x y z each
        std::size_t first = 0;       // this rank's among them
        std::vector<std::size_t> owned;  // indices of the points in slab(rank), in order
        bool owned_made = false;         // owned_check_points()
        std::size_t count() const { return given.size() / 3; }
    };
    static constexpr std::size_t random_check_points = std::size_t(1) << 16;
    // The sampled check's exact values at its check points (the rate-1 local
    // runs added over ranks) and this rank's error of them against the direct
    // sums at its probes, kept in host memory for the next octree point with
    // the same key: they depend on neither the sampling nor the transport,
    // and a sweep has four such points per size and kernel. The rate-1 run
    // and the direct sums took 6-9 and 1.4 ms of a 256^3 point whose 1 + 5
    // steps took 28 ms on one H200, 43-47 and 7-8 ms of 250 ms at 512^3.
    struct KeptExact {
        std::string key;
        std::vector<double> exact;
        double direct_error = 0;
    };
    static KeptExact& kept_exact() {
        static auto* kept = new KeptExact;
        return *kept;
    }
    // What they depend on: the grid, kernel, input, ranks, backend and local
    // transform (its rounding), and the check points.
    std::string exact_key() const {
        return fmt::format("{} {} {} {} {} {} {}", n_, kernel_, input_, ranks_, config_.at("backend").get<std::string>(),
                           pruned_, max_probes());
    }
    // The same values from the exact method's point (keep_exact_values): any local transform's.
    std::string exact_method_key() const {
        return fmt::format("{} {} {} {} {} exact {}", n_, kernel_, input_, ranks_, config_.at("backend").get<std::string>(),
                           max_probes());
    }
    // What the local convolution's plan and arrays depend on: the grid, the
    // backend, the local transform and this rank's slab (its kernel's
    // spectrum is made again for another kernel).
    std::string local_key() const {
        return fmt::format("{} {} {} {} {}", n_, config_.at("backend").get<std::string>(), pruned_, own_.str(), rank_);
    }

    // Ranks own x-slabs of the grid (the exact engine's split too).
    Box3 slab(int r) const {
        return {{split_lo(n_[0], ranks_, r), 0, 0}, {split_hi(n_[0], ranks_, r), n_[1], n_[2]}};
    }
    Box3 domain() const { return {{0, 0, 0}, n_}; }
    // One rank's whole transform on the point's backend (default_config would
    // pick the GPU whatever the point asked for).
    fftune::Problem local_problem() const {
        return {"fft3d", {2 * n_[0], 2 * n_[1], 2 * n_[2]}, Precision::double_, Direction::forward, 1};
    }
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

    // The octree's sample exchange of one sampling scheme: the tilings in
    // backend memory, the packed samples, and P − 1 rounds: in round d every
    // rank sends its block to rank + d (mod P) through the point's transport,
    // a Redistribution of a 1D index space on which the round's blocks lie end
    // to end (so any transport moves exactly the samples, no padding).
    struct SampleExchange {
        std::vector<DeviceTiling> to, from;         // by rank (empty for this one)
        std::vector<std::size_t> send_at, recv_at;  // by rank, in samples
        Buffer send, recv;
        std::unique_ptr<PhaseTimer> timer;  // the rounds' own phases (not reported: the family times "exchange")
        std::vector<std::unique_ptr<Redistribution>> rounds;
        std::size_t sent = 0, received = 0;
        std::size_t bytes() const {
            std::size_t b = send.bytes() + recv.bytes();
            for (const auto& t : to) b += t.bytes();
            for (const auto& t : from) b += t.bytes();
            for (const auto& r : rounds) b += r->device_bytes();
            return b;
        }
    };
    // The check's full-rate run moves the same values through any transport:
    // NCCL where the backend has it (at 512^3 on 2 ranks host-staged a2a_sync
    // took 0.7-0.9 s to set that exchange up and 0.4-0.5 s to run it, NCCL
    // 0.2 s and 0.05 s), else the point's own.
    std::string reference_transport() const {
        const Backend& be = conv_->plan->backend();
        if (be.device_memory() && !Redistribution::not_applicable("nccl_a2a", be)) return "nccl_a2a";
        return transport_;
    }
    // Collective over comm_; through `transport` (default: the point's). Its
    // tables and buffers, then its rounds, marked in `parts` where given.
    std::unique_ptr<SampleExchange> make_exchange(const Tilings& h, std::string transport = "", json* parts = nullptr) {
        if (transport.empty()) transport = transport_;
        auto ex = std::make_unique<SampleExchange>();
        Backend& be = conv_->plan->backend();
        const auto P = std::size_t(ranks_);
        // counts[f·P + t]: the samples rank f sends rank t.
        std::vector<unsigned long long> mine(P, 0), counts(P * P, 0);
        for (std::size_t q = 0; q < P; ++q) mine[q] = h.to[q].samples();
        FFTUNE_MPI_CHECK(MPI_Allgather(mine.data(), int(P), MPI_UNSIGNED_LONG_LONG, counts.data(), int(P),
                                       MPI_UNSIGNED_LONG_LONG, comm_));
        all_or_none(comm_, [&] {
            for (std::size_t q = 0; q < P; ++q) {
                if (h.from[q].samples() != counts[q * P + std::size_t(rank_)])
                    throw std::logic_error("convolution: a sender and its receiver tile a slab differently");
                ex->send_at.push_back(ex->sent), ex->recv_at.push_back(ex->received);
                ex->sent += mine[q], ex->received += counts[q * P + std::size_t(rank_)];
                if (q == std::size_t(rank_)) {
                    ex->to.emplace_back(), ex->from.emplace_back();
                } else {
                    ex->to.emplace_back(be, *kernels_, h.to[q]);
                    ex->from.emplace_back(be, *kernels_, h.from[q]);
                }
            }
            ex->send = Buffer(be, std::max<std::size_t>(ex->sent, 1) * sizeof(double));
            ex->recv = Buffer(be, std::max<std::size_t>(ex->received, 1) * sizeof(double));
            ex->timer = std::make_unique<PhaseTimer>(be);
        });
        if (parts) mark(*parts, "exchange_tables");
        for (std::size_t d = 1; d < P; ++d) {
            std::vector<Layout> before(P), after(P);
            index_t at = 0;
            for (std::size_t f = 0; f < P; ++f) {
                const auto c = index_t(counts[f * P + (f + d) % P]);
                before[f] = Layout{{{0, 0, at}, {1, 1, at + c}}, order_xyz};
                at += c;
            }
            for (std::size_t t = 0; t < P; ++t) after[t] = before[(t + P - d) % P];
            ex->rounds.push_back(std::make_unique<Redistribution>(comm_, be, transport, int(d - 1), before, after,
                                                                  sizeof(double), *ex->timer));
        }
        if (parts) mark(*parts, "exchange_rounds");
        return ex;
    }

    // Probes for the direct sums: one per octree cell while they total at
    // most 2^26 kernel terms per rank (N ≤ 40 at one rank, 48 at four; 64 at
    // 16³ on one rank), else one per block of 2^L cells, at most
    // max(16, 2^26 / (Nx Ny Nz)) of them (16 at 256³ and 512³).
    std::size_t max_probes() const {
        const auto points = std::size_t(n_[0] * n_[1] * n_[2]);
        return std::max<std::size_t>(16, (std::size_t(1) << 26) / points);
    }
    // Whether the grid is large enough for the octree's sampled check, and
    // whether this point's check is that one (compare_sampled).
    bool sampled_grid() const {
        const index_t from = sampled_check_from_for_testing().value_or(sampled_validation_min_points);
        return n_[0] * n_[1] * n_[2] >= from;
    }
    bool sampled_check() const { return octree_ && sampled_grid(); }
    // Exact, on a grid the octree checks at sampled points, once its direct
    // sums passed: its result at the check points (gathered over ranks) and
    // this rank's direct-sum error are kept for the octree points of the
    // same grid, kernel and input after it, whose check then needs neither
    // a rate-1 run nor sums (42 + 7 ms at 512^3 on one H200). Exact comes
    // from another pipeline than the octree's, so a fault of the octree's
    // local transform also shows in the L2 error.
    void keep_exact_values(MPI_Comm comm, const double* y, double direct_error) {
        std::vector<double> all;
        all_or_none(comm, [&] { all = check_values(own_view(y), own_); });
        FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, all.data(), int(all.size()), MPI_DOUBLE, MPI_SUM, comm));
        kept_exact() = KeptExact{exact_method_key(), std::move(all), direct_error};
        mark(validate_parts_ms_, "keep_exact");
    }
    // y over own_ (x slowest) as a view of global points.
    GridView own_view(const double* y) const {
        const index_t sy = own_.extent(1) * own_.extent(2), sz = own_.extent(2);
        return GridView{y, -(own_.lo[0] * sy + own_.lo[1] * sz + own_.lo[2]), {sy, sz, 1}};
    }
    // The values of `v` at every check point inside `region` (0 at the
    // others), made and gathered in backend memory (ConvolutionKernels::check_values), to the host.
    std::vector<double> check_values(const GridView& v, const Box3& region) {
        const CheckProbes& c = check_probes();
        std::vector<double> out(c.count() + random_check_points);
        Backend& be = conv_->plan->backend();
        Buffer given(be, std::max<std::size_t>(c.given.size(), 1) * sizeof(index_t)), values(be, out.size() * sizeof(double));
        if (!c.given.empty()) be.copy_from_host(given.data(), c.given.data(), c.given.size() * sizeof(index_t));
        kernels_->check_values(be, v, region, given.as<const index_t>(), c.count(), domain(), random_check_points,
                               values.as<double>());
        be.copy_to_host(out.data(), values.data(), values.bytes());
        be.synchronize();
        return out;
    }
    // Check point k (check_points()' k-th), on the host.
    std::array<index_t, 3> check_point(const CheckProbes& c, std::size_t k) const {
        if (k < c.count()) return {c.given[3 * k], c.given[3 * k + 1], c.given[3 * k + 2]};
        return random_check_point(domain(), k - c.count());
    }
    CheckProbes& check_probes() {
        static auto* kept = new CheckProbes;
        const std::string key = fmt::format("{} {} {} {}", n_, ranks_, rank_, max_probes());
        if (kept->key == key) return *kept;
        *kept = CheckProbes{};
        for (int q = 0; q < ranks_; ++q) {
            if (q == rank_) kept->first = kept->count();
            for (const auto& p : probe_points(slab(q), sampling_scheme("full").cell, max_probes()))
                kept->given.insert(kept->given.end(), p.begin(), p.end());
        }
        kept->key = key;
        return *kept;
    }
    // check_probes() with its `owned` list, made on the first call that needs
    // it (an octree check; an exact point's keep_exact does not).
    const CheckProbes& owned_check_points() {
        CheckProbes& c = check_probes();
        if (c.owned_made) return c;
        const Box3 mine = slab(rank_);
        const std::size_t count = c.count() + random_check_points;
        if (intersect(mine, domain()) == domain()) {  // one rank: every point
            c.owned.resize(count);
            std::iota(c.owned.begin(), c.owned.end(), std::size_t(0));
        } else {
            // A random point is in the x-slab where its x is: one 64-bit
            // remainder, not three (the list took 1.4-1.5 ms on one thread at 2
            // ranks on 2 H200s, 0.9-1.3 ms on 16; on this project's VM x alone
            // is 0.74 ms against 1.75). On the kept host threads, then packed
            // without a branch.
            const Box3 all = domain();
            if (mine.lo[1] != all.lo[1] || mine.hi[1] != all.hi[1] || mine.lo[2] != all.lo[2] || mine.hi[2] != all.hi[2])
                throw std::logic_error("convolution: the owned check points take x-slabs spanning y and z, not " +
                                       mine.str());
            std::vector<char> in(count);
            parallel_for(0, std::int64_t(count), [&](std::int64_t lo, std::int64_t hi) {
                for (auto k = std::size_t(lo); k < std::size_t(hi); ++k) {
                    const index_t x = k < c.count() ? c.given[3 * k] : random_check_coordinate(all, k - c.count(), 0);
                    in[k] = x >= mine.lo[0] && x < mine.hi[0];
                }
            }, host_threads(), 4096);
            c.owned.resize(count);
            std::size_t m = 0;
            for (std::size_t k = 0; k < count; ++k) c.owned[m] = k, m += std::size_t(in[k]);
            c.owned.resize(m);
        }
        c.owned_made = true;
        return c;
    }
    // The octree's sampled check: exact at check_points() (every slab's
    // probes, then 2^16 points over the grid) is, by linearity, the sum over
    // ranks of each one's own contribution there: its padded-grid transform at
    // rate 1, without exchange, gathered at the points and added by one
    // MPI_Allreduce (or kept_exact()'s, from an earlier point). y against it
    // at this rank's points; `at_probes`: exact at this rank's probes (the
    // first of its points). At 512³ on 2 ranks the full-rate check took
    // 0.2-0.5 s against 0.27 s timed.
    void compare_sampled(MPI_Comm comm, const double* y, Comparison& cmp, std::vector<double>& at_probes) {
        Backend& be = conv_->plan->backend();
        const CheckProbes& t = owned_check_points();
        const std::size_t count = t.count() + random_check_points;
        check_points_count_ = count;
        mark(validate_parts_ms_, "check_points");
        std::vector<double> exact(count);
        KeptExact& kept = kept_exact();
        const std::string key = exact_key();
        exact_kept_ = all_ok(comm, (kept.key == key || kept.key == exact_method_key()) && kept.exact.size() == count);
        if (exact_kept_) {
            exact = kept.exact;
        } else {
            kept = KeptExact{};
            std::vector<double> mine;
            all_or_none(comm, [&] {
                transform_local();
                const Layout& l = conv_->plan->input_layout();
                mine = check_values(GridView{static_cast<const double*>(conv_->output()), l.offset_of({0, 0, 0}),
                                             l.strides()},
                                    domain());
                conv_->restore_input();
                be.synchronize();
            });
            mark(validate_parts_ms_, "local_run");
            FFTUNE_MPI_CHECK(MPI_Allreduce(mine.data(), exact.data(), int(count), MPI_DOUBLE, MPI_SUM, comm));
        }
        std::vector<double> got;
        all_or_none(comm, [&] { got = check_values(own_view(y), own_); });
        mark(validate_parts_ms_, "check_values");
        if (own_ != slab(rank_)) throw std::logic_error("convolution: the octree's check compares another box than its slab");
        cmp = compare_points(got.data(), exact.data(), t.owned);
        for (std::size_t s = 0; s < at_probes.size(); ++s) at_probes[s] = exact[t.first + s];
        if (!exact_kept_) sampled_exact_ = std::move(exact);  // kept once its direct sums are in (validate)
        mark(validate_parts_ms_, "compare");
    }

    // This rank's padded-grid transform: forward, the kernel, inverse into conv_->output().
    void transform_local(bool timed = false) {
        Backend& be = conv_->plan->backend();
        auto in = [&](int ph) { return timed ? std::optional<PhaseScope>(std::in_place, *timer_, ph) : std::nullopt; };
        {
            auto t = in(0);
            conv_->forward();
        }
        {
            auto t = in(1);
            be.multiply_real(conv_->spectrum.data(), conv_->kernel.data(), conv_->plan->output_count(),
                             Precision::double_);
        }
        {
            auto t = in(2);
            conv_->inverse();
        }
    }

    // One convolution. Exact: the result stays in the plan's output. Octree:
    // its own slab of the output plus the interpolated samples of every other
    // rank's, sampled with `s`, into y_dev_ (x slowest).
    void run(const SamplingScheme& s, bool timed) {
        auto scope = [&](int ph) { return timed ? std::optional<PhaseScope>(std::in_place, *timer_, ph) : std::nullopt; };
        Backend& be = conv_->plan->backend();
        transform_local(timed);
        if (!octree_) return;
        SampleExchange& ex = *exchanges_.at(s.name);
        const Layout& l = conv_->plan->input_layout();
        const GridView at{static_cast<const double*>(conv_->output()), l.offset_of({0, 0, 0}), l.strides()};
        double* send = ex.send.as<double>();
        double* recv = ex.recv.as<double>();
        double* y = y_dev_.as<double>();
        {
            auto t = scope(3);
            be.copy_region(y, packed_region(l, own_, 0), conv_->output(), region_of(l, own_), sizeof(double));
            for (int q = 0; q < ranks_; ++q)
                if (q != rank_) kernels_->sample(be, ex.to[std::size_t(q)], at, send + ex.send_at[std::size_t(q)]);
        }
        {
            auto t = scope(4);
            for (int d = 1; d < ranks_; ++d)
                ex.rounds[std::size_t(d - 1)]->execute(send + ex.send_at[std::size_t((rank_ + d) % ranks_)],
                                                        recv + ex.recv_at[std::size_t((rank_ - d + ranks_) % ranks_)]);
        }
        {
            auto t = scope(5);
            for (int q = 0; q < ranks_; ++q)
                if (q != rank_)
                    kernels_->interpolate_add(be, ex.from[std::size_t(q)], recv + ex.recv_at[std::size_t(q)], own_, y);
        }
        {  // the inverse wrote over the input (reuse_input): the next run's input back
            auto t = scope(6);
            conv_->restore_input();
        }
        if (timed) sent_values_ = ex.sent, received_values_ = ex.received;
    }
    // The last run's y over own_ (x slowest) into `out` (backend memory), queued.
    void copy_result(double* out) {
        Backend& be = conv_->plan->backend();
        if (own_.empty()) return;
        if (octree_) {
            be.copy_region(out, packed_region(Layout{own_, order_xyz}, own_, 0), y_dev_.data(),
                           packed_region(Layout{own_, order_xyz}, own_, 0), sizeof(double));
            return;
        }
        const Layout& l = conv_->plan->input_layout();
        StridedRegion packed = packed_region(l, own_, 0);
        const auto st = Layout{own_, order_xyz}.strides();
        for (int d = 0; d < 3; ++d) packed.stride[d] = st[l.order[d]];
        be.copy_region(out, packed, conv_->output(), region_of(l, own_), sizeof(double));
    }

    // This rank's host wall time of a part since the last mark, into `parts`.
    void mark(json& parts, const char* part) {
        const auto now = std::chrono::steady_clock::now();
        parts[part] = std::chrono::duration<double, std::milli>(now - last_mark_).count();
        last_mark_ = now;
    }

    json setup_parts_ms_ = json::object(), validate_parts_ms_ = json::object();
    std::chrono::steady_clock::time_point last_mark_;
    Size n_;
    std::string kernel_, input_;
    GreenKernel green_;
    InputField field_;
    bool octree_;
    std::string sampling_;
    bool pruned_;  // octree: its local transform
    std::string transport_;
    json config_;
    double bound_ = 0;
    int ranks_ = 1, rank_ = 0, ranks_on_device_ = 1;
    MPI_Comm comm_ = MPI_COMM_NULL;
    Box3 own_;
    std::shared_ptr<PaddedConvolution> conv_;
    bool reused_local_ = false;  // octree: conv_ kept from the last point (kept_local)
    bool kernel_kept_ = false;   // and its kernel's spectrum with it (the same kernel)
    std::unique_ptr<PhaseTimer> timer_;
    std::unique_ptr<ConvolutionKernels> kernels_;
    Buffer y_dev_;  // octree: the result over own_
    std::map<std::string, std::unique_ptr<SampleExchange>> exchanges_;  // by sampling
    std::size_t sent_values_ = 0, received_values_ = 0;
    std::size_t check_points_count_ = 0;  // the sampled check's, all ranks'
    bool exact_kept_ = false;             // the sampled check's exact values were kept_exact()'s
    std::vector<double> sampled_exact_;   // computed by this point's check, kept once it ends
};

class ConvolutionFamily final : public Family {
public:
    std::string name() const override { return "convolution"; }
    std::string summary() const override {
        return "aperiodic 3D convolution (Kulkarni et al.): the engine's distributed FFT convolution or domain-local "
               "with octree-sampled exchange";
    }
    std::vector<std::string> testcase_keys() const override {
        return {"sizes", "method", "kernel", "input", "sampling", "local_transform", "redistribution", "backend", "error_bound"};
    }
    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j, const std::vector<int>&) const override {
        auto a = std::make_shared<ConvolutionAxes>();
        if (!j.contains("sizes")) ps.fail("/sizes", "missing required key");
        a->sizes = ps.sizes(j.at("sizes"), "/sizes", index_t{1} << 33);
        a->methods = ps.names_axis(TestcaseParser::value_or(j, "method", "all"), "/method", methods);
        a->kernels = ps.names_axis(TestcaseParser::value_or(j, "kernel", "all"), "/kernel", kernels);
        a->inputs = ps.names_axis(TestcaseParser::value_or(j, "input", "blobs"), "/input", inputs);
        a->samplings = ps.names_axis(TestcaseParser::value_or(j, "sampling", "all"), "/sampling", sampling_names());
        a->local_transforms = ps.names_axis(TestcaseParser::value_or(j, "local_transform", "full"), "/local_transform",
                                            local_transforms);
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
                            for (const auto& r : a.redistribution)
                                if (m == "exact")
                                    configs.push_back({{"method", m}, {"redistribution", r}, {"backend", be}});
                                else
                                    for (const auto& s : a.samplings)
                                        for (const auto& t : a.local_transforms) {
                                            json c{{"method", m}, {"sampling", s}, {"redistribution", r}, {"backend", be}};
                                            if (t != "full") c["local_transform"] = t;  // full: as records before it
                                            configs.push_back(std::move(c));
                                        }
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
        const std::string transform = config.value("local_transform", "full");
        if (std::find(local_transforms.begin(), local_transforms.end(), transform) == local_transforms.end())
            throw std::invalid_argument(fmt::format("unknown local_transform '{}' (allowed: {})", transform,
                                                    fmt::join(local_transforms, ", ")));
        if (config.at("method") == "exact" && transform != "full")
            return fmt::format("local_transform {} is the octree's; exact transforms the padded grid distributed",
                               transform);
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
        if (config.at("method") == "octree") {  // its sample exchange's transport
            const auto backend = Registry<Backend>::instance().create(be);
            if (auto why = Redistribution::not_applicable(config.at("redistribution").get<std::string>(), *backend))
                return why;
        }
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
    // exact/TRANSPORT/BACKEND, octree/SAMPLING/TRANSPORT/BACKEND, and
    // /LOCAL_TRANSFORM after it where that is not full (records from before
    // the octree exchanged in backend memory have no transport: their samples
    // went through host MPI, as a2a_sync's do; records without a
    // local_transform transformed the full grid).
    std::string config_key(const json& c) const override {
        const std::string m = c.at("method").get<std::string>();
        const std::string r = c.value("redistribution", "a2a_sync"), be = c.at("backend").get<std::string>();
        if (m == "exact") return fmt::format("exact/{}/{}", r, be);
        const std::string t = c.value("local_transform", "full");
        return fmt::format("octree/{}/{}/{}{}", c.at("sampling").get<std::string>(), r, be, t == "full" ? "" : "/" + t);
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
    std::vector<std::string> config_axes() const override {
        return {"method", "sampling", "local_transform", "redistribution", "backend"};
    }
    json default_config(const json&) const override {
        return {{"method", "exact"}, {"redistribution", "a2a_sync"}, {"backend", "fftw"}};
    }
    // Every transform and kernel is double.
    std::vector<Precision> precisions(const Point&) const override { return {Precision::double_}; }
};

const bool registered = register_variant<Family, ConvolutionFamily>("convolution");

}  // namespace
}  // namespace fftune::convolution
