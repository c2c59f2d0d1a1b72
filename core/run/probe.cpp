#include "core/run/probe.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/platform/backend.hpp"
#include "core/platform/collective_try.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/log.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/run/point_watchdog.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/engine/redistribution.hpp"
#include "core/engine/reshape.hpp"
#include "core/run/runner.hpp"
#include "core/records/statistics.hpp"
#include "core/engine/transport.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

constexpr std::size_t elem_bytes = 8;  // one element = one complex<float>, so 8 B is one element
constexpr long long max_bytes = 1ll << 30;

// Per iteration the max over ranks, then the runner's statistics.
json reduced_stats(MPI_Comm comm, const std::vector<double>& samples) {
    std::vector<double> worst(samples.size());
    FFTUNE_MPI_CHECK(MPI_Allreduce(samples.data(), worst.data(), static_cast<int>(samples.size()), MPI_DOUBLE, MPI_MAX, comm));
    return summarize(worst);
}

// The source block of a peer as `runs` runs of `run` elements: the largest
// divisor of the element count up to its cube root (an N^3 slab transpose
// among q ranks sends N/q runs of N^2/q elements: runs ~ cbrt of the block).
std::pair<index_t, index_t> block_shape(index_t elems) {
    index_t runs = std::max<index_t>(1, static_cast<index_t>(std::cbrt(double(elems)) + 1e-9));
    while (elems % runs) --runs;
    return {runs, elems / runs};
}

// Probe layouts among q ranks: before, rank r owns x in [r*runs, (r+1)*runs) of a
// (q*runs) x q x run box; after, y = r. The block for peer p is `runs` runs of
// `run` elements at the source (stride q*run) and dense at the destination.
std::vector<Layout> probe_layouts(int q, index_t runs, index_t run, bool after) {
    std::vector<Layout> out;
    for (int r = 0; r < q; ++r) {
        Box3 b = after ? Box3{{0, r, 0}, {q * runs, r + 1, run}} : Box3{{r * runs, 0, 0}, {(r + 1) * runs, q, run}};
        out.push_back({b, order_xyz});
    }
    return out;
}

// Element value: its linear index in the group's global box.
std::vector<std::uint64_t> pattern(const Layout& l, int q, index_t run) {
    std::vector<std::uint64_t> v(l.box.count());
    for (index_t x = l.box.lo[0]; x < l.box.hi[0]; ++x)
        for (index_t y = l.box.lo[1]; y < l.box.hi[1]; ++y)
            for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z)
                v[l.offset_of({x, y, z})] = static_cast<std::uint64_t>((x * q + y) * run + z);
    return v;
}

class Prober {
public:
    Prober(MPI_Comm comm, const ProbeOptions& o, const std::function<void(const json&)>& emit)
        : world_(Communicator::duplicate(comm)), o_(o), emit_(emit), machine_(machine_info()),
          watchdog_(world_.get(), o.timeout_s, "--timeout") {
        rank_ = world_.rank();
        size_ = world_.size();
        MPI_Datatype e = MPI_DATATYPE_NULL;
        FFTUNE_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &e));
        FFTUNE_MPI_CHECK(MPI_Type_commit(&e));
        element_ = Datatype(e);
    }

    int run() {
        for (const auto& name : backends()) {
            auto backend = Registry<Backend>::instance().create(name);
            for (auto precision : all_values<Precision>())
                for (long long n : o_.fft_lengths)
                    for (bool strided : {false, true}) fft(*backend, precision, n, strided);
            for (const auto& t : transports(*backend))
                for (int q = 2; q <= size_; ++q)
                    if (size_ % q == 0)
                        for (long long m : o_.bytes_per_peer) exchange(*backend, t, q, m);
        }
        return failed_;
    }

private:
    // The world in groups of q consecutive ranks, made once per q (NCCL keeps a
    // communicator per MPI communicator).
    MPI_Comm group(int q) {
        auto& g = groups_[q];
        if (!g) g = std::make_unique<Communicator>(world_.split(rank_ / q, rank_));
        return g->get();
    }

    std::vector<std::string> backends() const {
        std::vector<std::string> out;
        for (const auto& b : o_.backends.empty() ? Registry<Backend>::instance().names() : o_.backends) {
            const auto why = Registry<Backend>::instance().create(b)->unavailable();
            if (!why) out.push_back(b);
            else if (rank_ == 0 && !o_.backends.empty()) logging::warn(fmt::format("probe: backend {} skipped: {}", b, *why));
        }
        return out;
    }

    // Host-staged where the backend keeps data on a device (as a plan with gpu_aware = false).
    std::vector<std::string> transports(const Backend& backend) const {
        std::vector<std::string> out;
        for (const auto& t : o_.transports.empty() ? Registry<Transport>::instance().names() : o_.transports)
            if (!Redistribution::not_applicable(t, backend)) out.push_back(t);
        return out;
    }

    json base(Backend& backend, const std::string& probe) const {
        return json{{"schema", "fftune.probe/1"}, {"kind", "probe"},     {"probe", probe},
                    {"backend", backend.name()},  {"world", size_},      {"machine", machine_},
                    {"provenance", provenance_info(o_.argv, &backend)}};
    }

    void finish(json& r, const std::optional<std::string>& err, const std::string& what) {
        watchdog_.disarm();
        if (err) {
            r["status"] = "failed";
            r["error"] = *err;
            ++failed_;
        } else {
            r["status"] = "ok";
        }
        if (rank_ != 0) return;
        emit_(r);
        std::cerr << fmt::format("[probe {} ranks] {}: {}\n", size_, what,
                                 err ? "failed: " + *err : fmt::format("{:.4g} ms", r["timing"]["total"]["median"].get<double>()));
    }

    void fft(Backend& backend, Precision precision, long long n, bool strided) {
        const long long batch = std::max(1ll, o_.fft_points / n), points = n * batch;
        json r = base(backend, "fft");
        watchdog_.arm(fmt::format("fft probe ({} {} n {} batch {}, {})", backend.name(), to_string(precision), n,
                                  batch, strided ? "strided" : "contiguous"));
        r["precision"] = to_string(precision);
        r["n"] = n;
        r["batch"] = batch;
        r["stride"] = strided ? "strided" : "contiguous";
        std::vector<double> samples;
        const auto err = collective_try(world_.get(), [&] {
            // Contiguous: element j of transform b at b*n + j; strided: at j*batch + b.
            FftDescriptor d;
            d.precision = precision;
            d.kind = FftKind::c2c_forward;
            d.dims = {{n, strided ? batch : 1, strided ? batch : 1}};
            d.batch = {{batch, strided ? 1 : n, strided ? 1 : n}};
            d.in_elements = d.out_elements = points;
            const std::size_t bytes = points * complex_bytes(precision);
            // Rank-local work is agreed before the next collective call (the
            // agreement also serves as the barrier between iterations).
            Buffer in, out;
            std::unique_ptr<FftPlan> plan;
            std::unique_ptr<PhaseClock> clock;
            all_or_none(world_.get(), [&] {
                in = Buffer(backend, bytes);
                out = Buffer(backend, bytes);
                std::vector<char> host(bytes, 0);  // zeros: no denormals, no NaN
                backend.copy_from_host(in.data(), host.data(), bytes);
                plan = make_standalone_fft(backend, d);
                clock = backend.make_clock();
            });
            for (int it = 0; it < o_.warmup + o_.iterations; ++it) {
                const auto failed = failure_of([&] {
                    clock->start();
                    plan->execute(in.data(), out.data());
                    clock->stop();
                });
                all_or_none(world_.get(), failed, [&] {
                    const double t = clock->elapsed_ms();
                    clock->reset();
                    if (it >= o_.warmup) samples.push_back(t);
                });
            }
        });
        if (!err) {
            const json total = reduced_stats(world_.get(), samples);
            // The rate the cost model multiplies by (complex points) * log2 n.
            r["ms_per_point_log2n"] = total["median"].get<double>() / (double(points) * std::log2(double(n)));
            r["timing"] = timing(backend, total);
        }
        finish(r, err, fmt::format("fft {} {} n={} x {} {}", backend.name(), to_string(precision), n, batch, r["stride"].get<std::string>()));
    }

    void exchange(Backend& backend, const std::string& method, int q, long long bytes) {
        const auto [runs, run] = block_shape(static_cast<index_t>(bytes / elem_bytes));
        json r = base(backend, "exchange");
        watchdog_.arm(fmt::format("exchange probe ({} {}, {} peers, {} B per peer)", backend.name(), method, q,
                                  runs * run * static_cast<index_t>(elem_bytes)));
        r["transport"] = method;
        r["gpu_aware"] = false;
        // MPI transports stage device data through pinned host memory; NCCL moves it device to device.
        r["host_staged"] = backend.device_memory() && Registry<Transport>::instance().create(method)->uses_mpi();
        r["peers"] = q;
        r["groups"] = size_ / q;
        r["bytes_per_peer"] = runs * run * static_cast<index_t>(elem_bytes);
        r["runs_per_peer"] = runs;
        std::vector<double> total_samples;
        std::vector<std::vector<double>> phase_samples;
        std::vector<std::string> phase_names;
        bool correct = true;
        const auto err = collective_try(world_.get(), [&] {
            MPI_Comm comm = group(q);
            int self = 0;
            FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &self));
            const auto before = probe_layouts(q, runs, run, false), after = probe_layouts(q, runs, run, true);
            ReshapePlan plan = make_reshape_plan(0, self, before, after, elem_bytes);
            // src and dst are the probe's own allocations: peers may read or write them in place.
            plan.source_owned = plan.destination_owned = true;
            Buffer src, dst, send, recv, host_a, host_b;
            // Declared after the buffers, so destroyed before them on every exit
            // (agreed failures included: every rank unwinds together). Peers may
            // map this rank's buffers (cuda_ipc): they let go before any rank
            // frees them, as Plan::release_peer_mappings does.
            struct Release {
                std::unique_ptr<Transport> transport;
                MPI_Comm comm;
                ~Release() {
                    if (!transport || !transport->maps_peer_memory()) return;
                    transport.reset();
                    MPI_Barrier(comm);
                }
            } held{Registry<Transport>::instance().create(method), comm};
            Transport* transport = held.transport.get();
            ReshapeContext ctx{&plan, comm, &backend, element_.get()};
            // Rank-local work is agreed over the whole world before each
            // collective call (the transport's setup, each exchange, the
            // check), as a failed setup or exchange is: groups that exchange
            // at the same time stay in step, and the agreements after one
            // exchange are the barrier before the next.
            MPI_Comm world = world_.get();
            all_or_none(world, [&] {
                src = Buffer(backend, before[self].box.count() * elem_bytes);
                dst = Buffer(backend, after[self].box.count() * elem_bytes);
                ctx.source_array = src.data();
                ctx.destination_array = dst.data();
                if (transport->uses_staging_buffers()) {  // sized as Plan sizes them (nccl_alltoall: a slot per rank)
                    send = Buffer(backend, transport->send_buffer_elems(plan) * elem_bytes);
                    if (transport->uses_recv_buffer()) recv = Buffer(backend, transport->recv_buffer_elems(plan) * elem_bytes);
                    ctx.send_buffer = send.data(), ctx.recv_buffer = recv.data();
                }
                // MPI that cannot read device memory: pinned host staging, as Plan sets it up.
                if (backend.device_memory() && transport->uses_mpi()) {
                    const bool whole = transport->uses_whole_arrays();
                    host_a = Buffer(backend, std::max<index_t>(1, whole ? before[self].box.count() : plan.send_total) * elem_bytes, true);
                    host_b = Buffer(backend, std::max<index_t>(1, whole ? after[self].box.count() : plan.recv_total) * elem_bytes, true);
                    (whole ? ctx.host_src_mirror : ctx.host_send) = host_a.data();
                    (whole ? ctx.host_dst_mirror : ctx.host_recv) = host_b.data();
                }
            });
            const auto setup_failed = failure_of([&] { transport->setup(ctx); });  // agreed in its group
            PhaseTimer timer(backend);
            ReshapePhases phases;
            std::unique_ptr<PhaseClock> clock;
            all_or_none(world, setup_failed, [&] {
                if (transport->separate_pack_phases()) phases.pack = timer.phase("pack");
                phases.exchange = timer.phase("exchange");
                if (transport->separate_pack_phases()) phases.unpack = timer.phase("unpack");
                phase_names = timer.names();
                phase_samples.resize(phase_names.size());
                const auto in = pattern(before[self], q, run);
                backend.copy_from_host(src.data(), in.data(), in.size() * elem_bytes);
                clock = backend.make_clock();
            });
            for (int it = 0; it < o_.warmup + o_.iterations; ++it) {
                const auto failed = failure_of([&] {
                    clock->start();
                    transport->execute(ctx, src.data(), dst.data(), timer, phases);
                    clock->stop();
                });
                all_or_none(world, failed, [&] {
                    const double t = clock->elapsed_ms();
                    clock->reset();
                    const auto ph = timer.collect();
                    if (it < o_.warmup) return;
                    total_samples.push_back(t);
                    for (std::size_t k = 0; k < ph.size(); ++k) phase_samples[k].push_back(ph[k]);
                });
            }
            // Every element arrived where the destination layout says.
            const auto want = pattern(after[self], q, run);
            std::vector<std::uint64_t> got(want.size(), ~0ull);
            all_or_none(world, [&] { backend.copy_from_host(dst.data(), got.data(), got.size() * elem_bytes); });
            const auto failed = failure_of([&] { transport->execute(ctx, src.data(), dst.data(), timer, phases); });
            all_or_none(world, failed, [&] { backend.copy_to_host(got.data(), dst.data(), got.size() * elem_bytes); });
            correct = got == want;
        });
        if (!err) {
            json t = timing(backend, reduced_stats(world_.get(), total_samples));
            json ph = json::object();
            for (std::size_t k = 0; k < phase_names.size(); ++k) ph[phase_names[k]] = reduced_stats(world_.get(), phase_samples[k]);
            t["phases"] = ph;
            r["timing"] = t;
            r["validation"] = json{{"method", "exchange_pattern"}, {"passed", all_ok(world_.get(), correct)}};
        }
        auto why = err;
        if (!err && !r["validation"]["passed"].get<bool>()) why = "the exchanged data differ from what was sent";
        finish(r, why, fmt::format("exchange {}/{} {} peers x {} groups, {} B per peer", backend.name(), method, q, size_ / q,
                                   r["bytes_per_peer"].get<long long>()));
    }

    json timing(Backend& backend, const json& total) const {
        return json{{"clock", backend.device_memory() ? "cuda_event" : "host_steady_clock"},
                    {"warmup", o_.warmup},
                    {"iterations", o_.iterations},
                    {"total", total}};
    }

    Communicator world_;
    const ProbeOptions& o_;
    const std::function<void(const json&)>& emit_;
    json machine_;
    Datatype element_;
    std::map<int, std::unique_ptr<Communicator>> groups_;
    int rank_ = 0, size_ = 1, failed_ = 0;
    PointWatchdog watchdog_;  // armed for each probe
};

}  // namespace

std::vector<long long> default_probe_bytes() {
    std::vector<long long> v;
    for (long long m = 8; m <= 16ll << 20; m *= 8) v.push_back(m);
    return v;
}

std::vector<long long> default_probe_fft_lengths() {
    std::vector<long long> v;
    for (long long n = 4; n <= 4096; n *= 2) v.push_back(n);
    return v;
}

std::string check_probe_options(const ProbeOptions& o) {
    for (long long m : o.bytes_per_peer)
        if (m < 8 || m % 8 || m > max_bytes)
            return fmt::format("--sizes {}: bytes per peer must be a multiple of 8 from 8 to {} (1 GiB)", m, max_bytes);
    for (long long n : o.fft_lengths)
        if (n < 2 || n > (1ll << 24)) return fmt::format("--fft-sizes {}: transform lengths must be from 2 to {}", n, 1ll << 24);
    if (o.fft_points < 2 || o.fft_points > (1ll << 28))
        return fmt::format("--fft-points {}: points per call must be from 2 to {}", o.fft_points, 1ll << 28);
    if (o.iterations < 1) return fmt::format("--iterations {}: at least 1 timed iteration is needed", o.iterations);
    if (o.warmup < 0) return fmt::format("--warmup {}: must be 0 or more", o.warmup);
    if (!(o.timeout_s >= 0) || !std::isfinite(o.timeout_s))
        return fmt::format("--timeout {}: must be seconds, a number > 0, or 0 for no limit", o.timeout_s);
    for (const auto& b : o.backends)
        if (!Registry<Backend>::instance().contains(b))
            return fmt::format("--backend {}: unknown backend (allowed: {})", b, Registry<Backend>::instance().joined_names());
    for (const auto& t : o.transports)
        if (!Registry<Transport>::instance().contains(t))
            return fmt::format("--transport {}: unknown redistribution method (allowed: {})", t,
                               Registry<Transport>::instance().joined_names());
    return "";
}

int run_probe(MPI_Comm comm, const ProbeOptions& options, const std::function<void(const json&)>& emit) {
    if (const auto why = check_probe_options(options); !why.empty()) throw std::invalid_argument(why);
    return Prober(comm, options, emit).run();
}

}  // namespace fftune
