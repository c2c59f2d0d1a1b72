// The zero-skipping algorithm (Dugan et al. section 3): the padded grid's
// transform as three passes of batched 1D FFTs that skip what is known to be
// zero. Forward, along z the rows with x < Nx and y < Ny only (the rest of the
// padded input is zero), along y the rows with x < Nx, along x all of them;
// the inverse in reverse order computes only what the next pass reads. With
// every axis free that is (1/4 + 1/2 + 1)/3 = 7/12 of the padded transform's
// 1D FFT work (other boundaries: README.md). The
// padding is zeroed once and never written. Along z, ρ and φ are stored in
// rows of M_z (the z-passes read and write them directly); along y the z-FFT
// writes into and reads from the padded array directly; along x the spread and the
// truncation are the slab reshape's: it moves only x < Nx (a rank's x-slab in
// real space, its y-slab of the padded grid in Fourier space), so the padding
// is never sent. At one rank there is no reshape: the y-passes write and read
// the x-padded arrays in place.
//
// zero_skipping_fused: the same, with the x-stage (forward x-pass, kernel
// multiply, inverse x-pass) one column convolution (column_convolution.hpp):
// on the GPU one kernel that reads the x < Nx rows and the kernel and writes
// the x < Nx rows, instead of three passes over the whole padded spectrum.
// Its y-passes are column transforms too, which read only the y < Ny rows
// (forward) and write only them (inverse): the z-passes then read and write a
// compact array [x][y < Ny][kz], all their rows one batch (the y-padded array
// makes them two batch dimensions: on cuFFT a loop of calls over x).
#include <chrono>
#include <functional>

#include <fmt/format.h>

#include "core/engine/plan.hpp"
#include "core/engine/redistribution.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/parallel.hpp"
#include "families/poisson/column_convolution.hpp"
#include "families/poisson/solver.hpp"

namespace fftune::poisson {
namespace {

using json = nlohmann::json;

// An array of extents {a0, a1, a2}, x slowest, z fastest.
struct Shape {
    index_t a0 = 0, a1 = 0, a2 = 0;
    index_t count() const { return a0 * a1 * a2; }
};

// The pipeline's axes (X: sliced and transformed last, Z: the r2c axis) as
// physical ones: pipeline axis a is physical axis perm[a]. A free axis goes
// last in the forward passes (X), so that its padding is skipped by both
// earlier passes: surface (free z) runs as (z, y, x); the others as they are
// (wire's periodic z is already first).
struct Geometry {
    std::array<int, 3> perm{0, 1, 2};
    Size n{0, 0, 0}, m{0, 0, 0};  // pipeline sizes: the grid's and the padded one's
};

Geometry geometry(const Problem& p) {
    Geometry g;
    if (p.boundary == Boundary::surface) g.perm = {2, 1, 0};  // the free axis z to the pipeline's X
    const Size m = padded_size(p.n, p.boundary);
    for (int a = 0; a < 3; ++a) g.n[a] = p.n[g.perm[a]], g.m[a] = m[g.perm[a]];
    return g;
}

class ZeroSkipping : public Solver {
public:
    explicit ZeroSkipping(bool fused = false) : fused_(fused) {}
    std::optional<std::string> not_applicable(const Problem& p, const json& c) const override {
        const Geometry g = geometry(p);
        if (g.n[0] < p.ranks || g.m[1] < p.ranks)
            return fmt::format("zero_skipping splits {} (N = {}) and the padded y (M = {}) over the {} ranks: too few "
                               "planes",
                               axis_name(g.perm[0]), g.n[0], g.m[1], p.ranks);
        const std::string be = c.at("backend").get<std::string>();
        if (!Registry<Backend>::instance().contains(be)) throw std::invalid_argument("unknown backend '" + be + "'");
        const auto backend = Registry<Backend>::instance().create(be);
        if (auto why = backend->unavailable()) return why;
        if (fused_) {
            if (!Registry<ColumnConvolution>::instance().contains(be))
                return fmt::format("zero_skipping_fused has no column convolution for backend {}", be);
            const index_t kz = g.m[2] / 2 + 1;
            const ColumnProblem x{g.m[0], g.n[0], (g.m[1] + p.ranks - 1) / p.ranks * kz, p.precision},
                y{g.m[1], g.n[1], kz, p.precision, ColumnMode::forward, g.m[1]};
            const auto conv = Registry<ColumnConvolution>::instance().create(be);
            if (auto why = conv->not_applicable(x)) return why;
            if (auto why = conv->not_applicable(y)) return why;
        }
        if (p.ranks == 1) return std::nullopt;  // no reshape
        if (method(c).empty()) return fmt::format("zero_skipping at {} ranks needs a redistribution method", p.ranks);
        return Redistribution::not_applicable(method(c), *backend);
    }
    // "backend/method", or the backend alone at one rank (no reshape).
    std::string key(const json& c) const override {
        const std::string m = method(c);
        return c.at("backend").get<std::string>() + (m.empty() ? "" : "/" + m);
    }

    void setup(MPI_Comm comm, const Problem& p, const json& c) override {
        problem_ = p;
        geo_ = geometry(p);
        FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
        int size = 0;
        FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &size));
        if (size != p.ranks)
            throw std::invalid_argument(fmt::format("the problem has {} ranks, the communicator {}", p.ranks, size));
        last_mark_ = std::chrono::steady_clock::now();
        all_or_none(comm, [&] {
            backend_ = Registry<Backend>::instance().create(c.at("backend").get<std::string>());
            if (auto why = backend_->unavailable()) throw Unsupported(*why);
        });
        mark("backend");
        build(comm, method(c));
    }
    Backend& backend() override { return *backend_; }
    // The pipeline's X-slab of the N grid, in physical coordinates.
    Box3 physical_box() const override {
        const Box3 s = x_slab(rank_);
        Box3 b;
        for (int a = 0; a < 3; ++a) b.lo[geo_.perm[a]] = s.lo[a], b.hi[geo_.perm[a]] = s.hi[a];
        return b;
    }

    // ρ and φ are stored in z rows of M_z, the first N_z used (as FFTW pads the
    // rows of an in-place r2c): the z-passes read and write them directly. The
    // padding of ρ's rows is zero: solve() never writes ρ.
    // The physical box in the pipeline array (physical axis perm[a] has
    // pipeline axis a's stride: x Ny·row, y row, z 1; rows of Mz + 2 reals)
    // and packed as ρ and φ come (x slowest): what load_rho() and phi() copy,
    // so that only the physical points cross to and from the host.
    std::pair<StridedRegion, StridedRegion> physical_regions() const {
        const Box3 box = physical_box(), s = x_slab(rank_);
        const index_t pipeline[3] = {geo_.n[1] * row(), row(), 1};
        StridedRegion in_pipeline{{box.extent(0), box.extent(1), box.extent(2)}, {0, 0, 0}, 0},
            packed{in_pipeline.extent, {box.extent(1) * box.extent(2), box.extent(2), 1}, 0};
        for (int a = 0; a < 3; ++a) {
            in_pipeline.stride[geo_.perm[a]] = pipeline[a];
            in_pipeline.offset += (box.lo[geo_.perm[a]] - (a == 0 ? s.lo[0] : 0)) * pipeline[a];
        }
        return {in_pipeline, packed};
    }

    GridArray rho_array() override { return {rho_.data(), physical_regions().first, physical_box()}; }
    GridArray phi_array() override { return {phi_.data(), physical_regions().first, physical_box()}; }

    // The padding of ρ stays the zero that setup() wrote.
    void load_rho(const std::vector<double>& rho) override {
        if (rho.empty()) return;
        const auto [in_pipeline, packed] = physical_regions();
        auto load = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(rho.size());
            parallel_for(0, std::int64_t(rho.size()), [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = lo; k < hi; ++k) host[std::size_t(k)] = T(rho[std::size_t(k)]);
            });
            Buffer staged(*backend_, host.size() * sizeof(T));
            backend_->copy_from_host(staged.data(), host.data(), host.size() * sizeof(T));
            backend_->copy_region(rho_.data(), in_pipeline, staged.data(), packed, sizeof(T));
            backend_->synchronize();
        };
        if (single()) load(float{});
        else load(double{});
    }

    void solve() override {
        for (auto& st : stages_) {
            if (st.phase < 0) {  // a reshape: its transport times pack, exchange and unpack
                st.run();
                continue;
            }
            PhaseScope s(*timer_, st.phase);
            st.run();
        }
    }

    std::vector<double> phi() override {
        const auto [in_pipeline, packed] = physical_regions();
        auto read = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> host(static_cast<std::size_t>(packed.count()));
            std::vector<double> out(host.size());
            if (host.empty()) return out;
            Buffer staged(*backend_, host.size() * sizeof(T));
            backend_->copy_region(staged.data(), packed, phi_.data(), in_pipeline, sizeof(T));
            backend_->copy_to_host(host.data(), staged.data(), host.size() * sizeof(T));
            backend_->synchronize();
            parallel_for(0, std::int64_t(host.size()), [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = lo; k < hi; ++k) out[std::size_t(k)] = double(host[std::size_t(k)]);
            });
            return out;
        };
        return single() ? read(float{}) : read(double{});
    }

    std::vector<std::string> phase_names() const override { return timer_->names(); }
    std::vector<double> collect_phase_times() override { return timer_->collect(); }
    std::vector<PhaseTraffic> traffic() const override {
        std::vector<PhaseTraffic> out(timer_->names().size());
        for (const auto& st : stages_)
            if (st.phase >= 0) out[st.phase].device_bytes += st.bytes;  // reshapes: their own below
        for (const auto* r : {to_x_.get(), from_x_.get()})
            for (const auto& [id, t] : r ? r->traffic() : std::vector<std::pair<int, PhaseTraffic>>{}) {
                out[id].device_bytes += t.device_bytes;
                out[id].sent_bytes += t.sent_bytes;
                out[id].received_bytes += t.received_bytes;
            }
        return out;
    }
    std::unique_ptr<PhaseClock> make_clock() override { return backend_->make_clock(); }
    std::size_t backend_bytes() const override {
        return allocated_ + (to_x_ ? to_x_->device_bytes() + from_x_->device_bytes() : 0);
    }
    std::size_t workspace_bytes() const override { return backend_bytes() - rho_.bytes() - phi_.bytes(); }
    int ranks_on_device() const override { return ranks_on_device_; }
    std::size_t host_staging_bytes() const override { return to_x_ ? to_x_->host_bytes() + from_x_->host_bytes() : 0; }
    json details() const override {
        return {{"padded_size", padded_size(problem_.n, problem_.boundary)},
                {"pass_axes", {std::string(1, axis_name(geo_.perm[2])), std::string(1, axis_name(geo_.perm[1])),
                               std::string(1, axis_name(geo_.perm[0]))}},
                {"fft_rows_fraction", fft_rows_ / padded_rows_},
                {"kernel_multiply", fused_ ? "fused into the x-pass" : "separate"},
                {"setup_parts_ms", setup_parts_ms_},
                {"kernel_parts_ms", kernel_parts_ms_}};
    }

private:
    struct Stage {
        int phase = 0;
        std::size_t bytes = 0;  // read + written on the device
        std::function<void()> run;
    };

    index_t row() const { return geo_.m[2]; }
    bool single() const { return problem_.precision == Precision::single; }
    std::size_t rb() const { return real_bytes(problem_.precision); }
    std::size_t cb() const { return complex_bytes(problem_.precision); }

    Buffer make(std::size_t bytes, bool zeroed) {
        Buffer b(*backend_, bytes);
        allocated_ += bytes;
        if (zeroed && bytes > 0) backend_->zero(b.data(), bytes);
        return b;
    }

    // A batched 1D FFT stage: `n` points along the dimension of stride
    // (in_stride, out_stride), batched over two dimensions.
    void fft(const std::string& name, FftKind kind, index_t n, index_t in_stride, index_t out_stride,
             std::vector<FftDim> batch, void* in, index_t in_elems, void* out, index_t out_elems,
             std::size_t in_elem_bytes, std::size_t out_elem_bytes) {
        FftDescriptor d;
        d.precision = problem_.precision;
        d.kind = kind;
        d.dims = {{n, in_stride, out_stride}};
        d.batch = batch;
        d.in_elements = in_elems;
        d.out_elements = out_elems;
        auto plan = backend_->make_fft(d);
        work_bytes_ = std::max(work_bytes_, plan->work_bytes());
        FftPlan* raw = plan.get();
        plans_.push_back(std::move(plan));
        index_t rows = 1;
        for (const auto& b : batch) rows *= b.n;
        // Work ~ rows x length, a real transform half of a complex one.
        fft_rows_ += double(rows) * n * (kind == FftKind::r2c || kind == FftKind::c2r ? 0.5 : 1.0);
        const index_t in_n = kind == FftKind::c2r ? n / 2 + 1 : n, out_n = kind == FftKind::r2c ? n / 2 + 1 : n;
        stages_.push_back({timer_->phase(name), std::size_t(rows) * (in_n * in_elem_bytes + out_n * out_elem_bytes),
                           [raw, in, out] { raw->execute(in, out); }});
    }

    // A column transform stage along y (zero_skipping_fused): `p`'s columns
    // are the kz of each of its groups (x-planes).
    void column(const std::string& name, const ColumnProblem& p, const void* in, void* out) {
        auto stage = Registry<ColumnConvolution>::instance().create(backend_->name());
        stage->setup(*backend_, p);
        allocated_ += stage->work_bytes();
        fft_rows_ += double(p.all_columns()) * p.length;  // as the c2c pass it replaces
        ColumnConvolution* raw = stage.get();
        columns_.push_back(std::move(stage));
        stages_.push_back({timer_->phase(name), raw->moved_bytes(), [raw, in, out] { raw->run(in, nullptr, out); }});
    }

    static std::string method(const json& c) {
        return c.contains("redistribution") && !c.at("redistribution").empty()
                   ? c.at("redistribution").at(0).get<std::string>()
                   : "";
    }
    int ranks() const { return problem_.ranks; }
    // Real space: x-slabs of the N grid; Fourier space: y-slabs of the padded grid.
    // (pipeline coordinates)
    Box3 x_slab(int r) const {
        const auto& n = geo_.n;
        return {{split_lo(n[0], ranks(), r), 0, 0}, {split_hi(n[0], ranks(), r), n[1], n[2]}};
    }
    index_t y_lo(int r) const { return split_lo(geo_.m[1], ranks(), r); }
    index_t y_hi(int r) const { return split_hi(geo_.m[1], ranks(), r); }

    void build(MPI_Comm comm, const std::string& transport) {
        const Size n = geo_.n, m = geo_.m;  // pipeline coordinates
        const index_t kz = m[2] / 2 + 1;
        const int p = ranks();
        const index_t nx = x_slab(rank_).extent(0), ny = y_hi(rank_) - y_lo(rank_);
        // What the padded transform would run: every row of every pass, both ways.
        padded_rows_ = 2.0 * (0.5 * double(m[0]) * m[1] * m[2] + double(m[0]) * kz * m[1] + double(m[1]) * kz * m[0]) / p;

        // The slab reshapes: x-slabs {x < Nx of rank r, all My, all kz} <-> y-slabs
        // {all Mx, ky of rank r, all kz}; only x < Nx moves either way.
        std::vector<Layout> xs, ys;
        std::vector<Box3> ys_moving;
        for (int r = 0; r < p; ++r) {
            const Box3 x = x_slab(r);
            xs.push_back({{{x.lo[0], 0, 0}, {x.hi[0], m[1], kz}}, order_xyz});
            ys.push_back({{{0, y_lo(r), 0}, {m[0], y_hi(r), kz}}, order_xyz});
            ys_moving.push_back({{0, y_lo(r), 0}, {n[0], y_hi(r), kz}});
        }
        const Shape r{nx, n[1], m[2]}, c2{nx, m[1], kz}, c4{m[0], ny, kz}, cz{nx, n[1], kz};
        using K = FftKind;
        // Refused before allocating when the ranks sharing a device would not fit:
        // ρ, φ, the spectra, the kernel and the reshapes' packed buffers (FFT work
        // areas not counted: known only once the plans are made).
        // Fused: the compact array (half of c2) in place of c2 and c2b.
        const std::size_t c2_arrays = fused_ ? (p > 1 ? 2 * c2.count() + cz.count() : cz.count())
                                             : (p > 1 ? 4 : 2) * c2.count();
        const std::size_t need = 2 * r.count() * rb() + c2_arrays * cb() + (fused_ ? 2 : 3) * c4.count() * cb() +
                                 c4.count() * rb();
        ranks_on_device_ = require_device_memory(comm, *backend_, need);
        // Rank-local parts agreed before each collective one, stages in execution order.
        all_or_none(comm, [&] {
            timer_ = std::make_unique<PhaseTimer>(*backend_);
            rho_ = make(r.count() * rb(), true);
            phi_ = make(r.count() * rb(), false);
            if (p > 1) c3_ = make(c2.count() * cb(), false);
            c4_ = make(c4.count() * cb(), true);  // x >= Nx stays zero
            if (!fused_) c5_ = make(c4.count() * cb(), false);
            c6_ = make(c4.count() * cb(), false);
            // One rank: the y-pass writes straight into the x-padded array (the
            // x < Nx planes, the same strides), with no reshape between.
            void* y_out = p == 1 ? c4_.data() : c3_.data();
            if (fused_) {
                // Forward: z (r2c) on the rows that hold ρ into the compact array,
                // one batch; y from its Ny rows to all My, on the x < Nx planes.
                cz_ = make(cz.count() * cb(), false);
                fft("fft.z", K::r2c, m[2], 1, 1, {FftDim{nx * n[1], m[2], kz}}, rho_.data(), r.count(), cz_.data(),
                    cz.count(), rb(), cb());
                column("fft.y", {m[1], n[1], kz, problem_.precision, ColumnMode::forward, m[1], nx, n[1] * kz, m[1] * kz},
                       cz_.data(), y_out);
                return;
            }
            // Padding stays zero: the z-FFT writes these, only outside it.
            c2_ = make(c2.count() * cb(), true);
            c2b_ = make(c2.count() * cb(), false);
            // Forward: z (r2c) on the rows that hold ρ, written into the y-padded
            // array; y on the x < Nx planes.
            fft("fft.z", K::r2c, m[2], 1, 1, {FftDim{nx, n[1] * m[2], m[1] * kz}, FftDim{n[1], m[2], kz}},
                rho_.data(), r.count(), c2_.data(), c2.count(), rb(), cb());
            fft("fft.y", K::c2c_forward, m[1], kz, kz, {FftDim{nx, m[1] * kz, m[1] * kz}, FftDim{kz, 1, 1}}, c2_.data(),
                c2.count(), y_out, c2.count(), cb(), cb());
        });
        mark("forward");
        // The reshape to y-slabs; x >= Nx of the destination stays zero.
        if (p > 1) {
            to_x_ = std::make_unique<Redistribution>(comm, *backend_, transport, 0, xs, ys, cb(), *timer_);
            stages_.push_back({-1, 0, [this] { to_x_->execute(c3_.data(), c4_.data()); }});
        }
        mark("reshape_to_x");
        all_or_none(comm, [&] {
            if (fused_) {  // forward x, multiply, inverse x: one operation on the x < Nx rows
                conv_ = Registry<ColumnConvolution>::instance().create(backend_->name());
                conv_problem_ = {m[0], n[0], ny * kz, problem_.precision};
                conv_->setup(*backend_, conv_problem_);
                allocated_ += conv_->work_bytes();
                fft_rows_ += 2.0 * double(ny * kz) * m[0];
                stages_.push_back({timer_->phase("fft.x+kernel+ifft.x"), conv_->moved_bytes(),
                                   [this] { conv_->run(c4_.data(), kernel_.data(), c6_.data()); }});
                return;
            }
            fft("fft.x", K::c2c_forward, m[0], ny * kz, ny * kz, {FftDim{ny * kz, 1, 1}}, c4_.data(), c4.count(),
                c5_.data(), c4.count(), cb(), cb());
            const index_t spectrum = c4.count();
            stages_.push_back({timer_->phase("kernel"), std::size_t(spectrum) * (2 * cb() + rb()), [this, spectrum] {
                                   backend_->multiply_real(c5_.data(), kernel_.data(), spectrum, problem_.precision);
                               }});
            // Inverse: x on all.
            fft("ifft.x", K::c2c_backward, m[0], ny * kz, ny * kz, {FftDim{ny * kz, 1, 1}}, c5_.data(), c4.count(),
                c6_.data(), c4.count(), cb(), cb());
        });
        mark("x_stage");
        // The reshape back: only x < Nx is sent (one rank: the y-pass reads the x < Nx planes in place).
        if (p > 1) {
            from_x_ = std::make_unique<Redistribution>(comm, *backend_, transport, 1, ys, xs, cb(), *timer_, ys_moving);
            stages_.push_back({-1, 0, [this] { from_x_->execute(c6_.data(), c3_.data()); }});
        }
        mark("reshape_from_x");
        all_or_none(comm, [&] {
            void* y_in = p == 1 ? c6_.data() : c3_.data();
            if (fused_) {  // y to the Ny rows φ needs, into the compact array; z (c2r) from it, one batch
                column("ifft.y", {m[1], m[1], kz, problem_.precision, ColumnMode::inverse, n[1], nx, m[1] * kz, n[1] * kz},
                       y_in, cz_.data());
                fft("ifft.z", K::c2r, m[2], 1, 1, {FftDim{nx * n[1], kz, m[2]}}, cz_.data(), cz.count(), phi_.data(),
                    r.count(), cb(), rb());
                return;
            }
            // y on the x-slab, z (c2r) on the rows φ needs.
            fft("ifft.y", K::c2c_backward, m[1], kz, kz, {FftDim{nx, m[1] * kz, m[1] * kz}, FftDim{kz, 1, 1}}, y_in,
                c2.count(), c2b_.data(), c2.count(), cb(), cb());
            fft("ifft.z", K::c2r, m[2], 1, 1, {FftDim{nx, m[1] * kz, n[1] * m[2]}, FftDim{n[1], kz, m[2]}},
                c2b_.data(), c2.count(), phi_.data(), r.count(), cb(), rb());
        });
        mark("inverse");
        all_or_none(comm, [&] {
            if (work_bytes_ > 0) {
                area_ = make(work_bytes_, false);
                for (auto& pl : plans_) pl->set_work_area(area_.data());
            }
            mark("work_area");
            // This rank's spectrum as a physical layout: pipeline axis a is physical perm[a].
            Layout spectrum_layout;
            for (int a = 0; a < 3; ++a) {
                spectrum_layout.box.lo[geo_.perm[a]] = ys[rank_].box.lo[a];
                spectrum_layout.box.hi[geo_.perm[a]] = ys[rank_].box.hi[a];
                spectrum_layout.order[a] = geo_.perm[a];
            }
            const auto t0 = std::chrono::steady_clock::now();
            auto build = [&](void* out) {
                std::map<std::string, double> parts;
                kernel_built_ = build_spectral_kernel(*backend_, problem_.n, problem_.boundary, problem_.kernel,
                                                      spectrum_layout, problem_.precision, out, &parts);
                for (const auto& [part, ms] : parts) kernel_parts_ms_[part] = ms;
            };
            const std::size_t bytes = std::size_t(spectrum_layout.box.count()) * rb();
            kernel_ = Buffer(*backend_, bytes);
            if (fused_) {  // in the order the x-stage reads it: built as it is, arranged in backend memory
                // K as it comes goes to c6_, a work array not in use yet (a
                // temporary only where it is smaller: no peak above the plan's)
                Buffer temporary;
                if (c6_.bytes() < bytes) temporary = Buffer(*backend_, bytes);
                void* raw = c6_.bytes() < bytes ? temporary.data() : c6_.data();
                build(raw);
                backend_->synchronize();  // the parts' host times are their device work
                mark("kernel_build");
                arrange_kernel(*backend_, *conv_, conv_problem_, raw, kernel_.data());
            } else {
                build(kernel_.data());
            }
            backend_->synchronize();
            kernel_setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            allocated_ += kernel_.bytes();
        });
        mark(fused_ ? "kernel_arrange" : "kernel_build");
    }

    // This rank's host wall time of each part of setup() since the last mark.
    void mark(const char* part) {
        const auto now = std::chrono::steady_clock::now();
        setup_parts_ms_[part] = std::chrono::duration<double, std::milli>(now - last_mark_).count();
        last_mark_ = now;
    }

    bool fused_ = false;
    json setup_parts_ms_ = json::object();
    json kernel_parts_ms_ = json::object();  // build_spectral_kernel's parts (in kernel_build)
    std::chrono::steady_clock::time_point last_mark_;
    Problem problem_;
    Geometry geo_;
    int rank_ = 0;
    int ranks_on_device_ = 1;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<PhaseTimer> timer_;
    Buffer rho_, phi_, c2_, c3_, c4_, c5_, c6_, c2b_, cz_, kernel_, area_;  // rho_, phi_: z rows of M_z
    std::unique_ptr<Redistribution> to_x_, from_x_;
    std::unique_ptr<ColumnConvolution> conv_;
    ColumnProblem conv_problem_;
    std::vector<std::unique_ptr<ColumnConvolution>> columns_;  // the fused y-passes
    std::vector<std::unique_ptr<FftPlan>> plans_;
    std::vector<Stage> stages_;
    std::size_t work_bytes_ = 0, allocated_ = 0;
    double fft_rows_ = 0, padded_rows_ = 1;
};

class ZeroSkippingFused final : public ZeroSkipping {
public:
    ZeroSkippingFused() : ZeroSkipping(true) {}
};

const bool registered = register_variant<Solver, ZeroSkipping>("zero_skipping") &&
                        register_variant<Solver, ZeroSkippingFused>("zero_skipping_fused");

}  // namespace
}  // namespace fftune::poisson
