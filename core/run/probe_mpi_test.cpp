// fftune probe at 1-4 ranks: one exchange record per transport x divisor q >= 2
// of the world x message size, each checked element by element (a wrong layout
// or transport fails it), and one FFT record per precision x length x stride;
// statistics as the runner's; bad options are refused naming the value; no rank
// frees exchange buffers a peer may still map, whether the probe failed or not.
#include "core/run/probe.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <thread>

#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/forwarding_transport.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

ProbeOptions small() {
    ProbeOptions o;
    o.bytes_per_peer = {8, 24, 4096, 1 << 20};  // 24 B = 3 elements: a divisor-free shape
    o.fft_lengths = {4, 12, 64};
    o.fft_points = 1024;
    o.backends = {"fftw"};
    o.warmup = 1;
    o.iterations = 5;
    return o;
}

TEST(Probe, EveryTransportAndPeerCountIsMeasuredAndChecked) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<json> records;
    const int failed = run_probe(MPI_COMM_WORLD, small(), [&](const json& r) { records.push_back(r); });
    EXPECT_EQ(failed, 0);
    if (rank != 0) {
        EXPECT_TRUE(records.empty());  // only rank 0 emits
        return;
    }
    int divisors = 0;
    for (int q = 2; q <= size; ++q) divisors += size % q == 0;
    const auto fftw = Registry<Backend>::instance().create("fftw");
    int transports = 0;
    for (const auto& t : Registry<Transport>::instance().names())
        transports += !Registry<Transport>::instance().create(t)->not_applicable(*fftw, false);
    int exchanges = 0, ffts = 0;
    for (const auto& r : records) {
        ASSERT_EQ(r.at("status"), "ok") << r.dump();
        EXPECT_EQ(r.at("schema"), "fftune.probe/1");
        EXPECT_EQ(r.at("kind"), "probe");
        EXPECT_EQ(r.at("world"), size);
        EXPECT_TRUE(r.at("machine").contains("fingerprint"));
        EXPECT_TRUE(r.at("provenance").contains("mpi_library"));
        const json& t = r.at("timing").at("total");
        EXPECT_EQ(t.at("n"), 5);
        EXPECT_LE(t.at("min").get<double>(), t.at("median").get<double>());
        EXPECT_LE(t.at("median").get<double>(), t.at("max").get<double>());
        if (r.at("probe") == "exchange") {
            ++exchanges;
            const int q = r.at("peers");
            EXPECT_EQ(size % q, 0);
            EXPECT_EQ(r.at("groups"), size / q);
            EXPECT_TRUE(r.at("validation").at("passed").get<bool>()) << r.dump();
            const long long m = r.at("bytes_per_peer"), runs = r.at("runs_per_peer");
            EXPECT_EQ(m % 8, 0);
            EXPECT_EQ((m / 8) % runs, 0);
            EXPECT_LE(runs * runs * runs, m / 8);  // runs ~ cube root of the block
            EXPECT_TRUE(r.at("timing").at("phases").contains("exchange"));
        } else {
            ++ffts;
            const double n = r.at("n"), points = n * r.at("batch").get<double>();
            EXPECT_EQ(points, 1024 - (1024 % static_cast<long long>(n)));
            EXPECT_NEAR(r.at("ms_per_point_log2n").get<double>(), t.at("median").get<double>() / (points * std::log2(n)), 1e-18);
        }
    }
    EXPECT_EQ(ffts, 2 * 3 * 2);  // precisions x lengths x strides
    EXPECT_EQ(exchanges, transports * divisors * 4);
}

// A backend that remembers how large each allocation is, and a transport
// (a2a_sync underneath) that asks for twice the usual staging buffers, as
// nccl_alltoall asks for a slot per rank, and fails unless it got them.
std::map<const void*, std::size_t> allocated;

class SizeRecordingBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_size_recording"; }
    void* allocate(std::size_t b) override {
        void* p = ForwardingBackend::allocate(b);
        allocated[p] = b;
        return p;
    }
    void deallocate(void* p) override {
        allocated.erase(p);
        ForwardingBackend::deallocate(p);
    }
};

class WideStaging final : public testing::ForwardingTransport {
public:
    index_t send_buffer_elems(const ReshapePlan& plan) const override { return 2 * plan.send_total; }
    index_t recv_buffer_elems(const ReshapePlan& plan) const override { return 2 * plan.recv_total; }
    std::optional<std::string> not_applicable(const Backend& backend, bool) const override {
        if (backend.name() != "test_size_recording") return std::string("probe test only");
        return std::nullopt;
    }
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        const std::size_t need_send = send_buffer_elems(*ctx.plan) * ctx.plan->elem_bytes,
                          need_recv = recv_buffer_elems(*ctx.plan) * ctx.plan->elem_bytes;
        if (allocated[ctx.send_buffer] < need_send || allocated[ctx.recv_buffer] < need_recv)
            throw std::runtime_error("staging buffers smaller than send_buffer_elems/recv_buffer_elems ask for");
        ForwardingTransport::execute(ctx, src, dst, timer, phases);
    }
};

const bool registered_backend = register_variant<Backend, SizeRecordingBackend>("test_size_recording");
const bool registered_transport = register_variant<Transport, WideStaging>("test_wide_staging");

TEST(Probe, StagingBuffersHaveTheSizeTheTransportAsksFor) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ProbeOptions o = small();
    o.backends = {"test_size_recording"};
    o.transports = {"test_wide_staging"};
    o.fft_lengths = {4};
    int exchanges = 0;
    const int failed = run_probe(MPI_COMM_WORLD, o, [&](const json& r) {
        if (r.at("probe") != "exchange") return;
        ++exchanges;
        EXPECT_EQ(r.at("status"), "ok") << r.dump();
    });
    EXPECT_EQ(failed, 0);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && size > 1) EXPECT_GT(exchanges, 0);
}

// Fails on the last rank only: a transport on its third execute, after the
// exchange itself (as a fault that shows when the transfer is checked), or
// the backend's allocations from the nth on (rank-local set-up). The probe
// must record the failure with that rank's error and go on; before its
// rank-local work was agreed, the others waited in the next barrier.
struct LastRankFailure {
    int execute = 0, executes = 0;
    int allocation = 0, allocations = 0;
    static LastRankFailure& get() {
        static LastRankFailure f;
        return f;
    }
};

bool on_last_rank() {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return rank == size - 1;
}

class FailingAllocations final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_probe_failing_allocations"; }
    void* allocate(std::size_t b) override {
        auto& f = LastRankFailure::get();
        if (f.allocation > 0 && ++f.allocations >= f.allocation && on_last_rank())
            throw std::runtime_error("injected allocation failure");
        return ForwardingBackend::allocate(b);
    }
};

class FailsAfterExchange final : public testing::ForwardingTransport {
public:
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        ForwardingTransport::execute(ctx, src, dst, timer, phases);
        auto& f = LastRankFailure::get();
        if (++f.executes == f.execute && on_last_rank()) throw std::runtime_error("injected fault after the exchange");
    }
};

const bool registered_failing_backend =
    register_variant<Backend, FailingAllocations>("test_probe_failing_allocations");
const bool registered_failing_transport = register_variant<Transport, FailsAfterExchange>("test_fails_after_exchange");

TEST(Probe, AFailureOnOneRankFailsThatProbeOnEveryRankAndTheRestGoOn) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string by = size > 1 ? "rank " + std::to_string(size - 1) + ": " : "";
    ProbeOptions o = small();
    o.bytes_per_peer = {64, 4096};
    o.fft_lengths = {4};
    o.transports = {"test_fails_after_exchange"};
    o.backends = {"test_probe_failing_allocations"};
    struct Case {
        LastRankFailure inject;
        std::string error;
    };
    // Third execute: the first exchange probe fails in its timed loop. Second
    // allocation on: every probe after the first allocation fails in set-up.
    for (const Case& c : {Case{{3, 0, 0, 0}, "injected fault after the exchange"},
                          Case{{0, 0, 2, 0}, "injected allocation failure"}}) {
        LastRankFailure::get() = c.inject;
        std::vector<json> records;
        const int failed = run_probe(MPI_COMM_WORLD, o, [&](const json& r) { records.push_back(r); });
        LastRankFailure::get() = {};
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (size == 1 && c.inject.execute > 0) {  // no exchange at one rank: nothing fails
            EXPECT_EQ(failed, 0);
            continue;
        }
        EXPECT_GT(failed, 0);
        if (rank != 0) continue;
        int failures = 0, exchanges_ok = 0;
        for (const json& r : records) {
            if (r.at("status") == "failed") {
                ++failures;
                EXPECT_EQ(r.at("error"), by + c.error) << r.dump();
            } else {
                exchanges_ok += r.at("status") == "ok" && r.at("probe") == "exchange";
            }
        }
        EXPECT_EQ(failures, failed);
        if (c.inject.execute > 0) {  // only the first exchange probe fails; the next ones run
            EXPECT_EQ(failed, 1);
            EXPECT_GT(exchanges_ok, 0) << "the exchange probes after the failing one go on";
        }
    }
    // Still in step.
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(sum, size);
}

// A transport that, like cuda_ipc, maps peers' buffers until it is destroyed
// (rank 1 takes a while to let go) and fails on the last rank at its third
// execute when asked; a backend that notes when memory is freed. Exchange
// probe k (counted by transports set up) frees its buffers only after every
// rank of its exchange group let go of probe k's transport, also when its
// timed loop failed.
struct MappingProbes {
    int made = 0;  // transports set up: the current probe
    bool fail = false;
    int executes = 0;
    std::map<int, long long> closed, first_free;  // per probe, steady_clock ns
    std::map<int, MPI_Comm> group;                // per probe, its exchange group
    static MappingProbes& get() {
        static MappingProbes m;
        return m;
    }
};

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class NotingProbeFrees final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_probe_noting_frees"; }
    void deallocate(void* p) override {
        auto& m = MappingProbes::get();
        if (m.made > 0 && !m.first_free.contains(m.made)) m.first_free[m.made] = now_ns();
        ForwardingBackend::deallocate(p);
    }
};

class MapsPeersInProbe final : public testing::ForwardingTransport {
public:
    // The probe also makes transports it never sets up (to ask what they
    // need): only a set-up one is a probe's, and maps peers.
    void setup(const ReshapeContext& ctx) override {
        ForwardingTransport::setup(ctx);
        auto& m = MappingProbes::get();
        probe_ = ++m.made;
        MPI_Comm_dup(ctx.comm, &m.group[probe_]);  // the ranks that map each other's buffers
    }
    ~MapsPeersInProbe() override {
        if (probe_ == 0) return;
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        MappingProbes::get().closed[probe_] = now_ns();
    }
    bool maps_peer_memory() const override { return true; }
    std::optional<std::string> not_applicable(const Backend& backend, bool) const override {
        if (backend.name() != "test_probe_noting_frees") return std::string("probe teardown test only");
        return std::nullopt;
    }
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        ForwardingTransport::execute(ctx, src, dst, timer, phases);
        auto& m = MappingProbes::get();
        if (m.fail && ++m.executes == 3 && on_last_rank()) throw std::runtime_error("injected fault after the exchange");
    }

private:
    int probe_ = 0;
};

const bool registered_noting_frees = register_variant<Backend, NotingProbeFrees>("test_probe_noting_frees");
const bool registered_maps_peers = register_variant<Transport, MapsPeersInProbe>("test_probe_maps_peers");

TEST(Probe, NoRankFreesExchangeBuffersBeforeEveryRankUnmappedThem) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) GTEST_SKIP() << "needs peers";
    ProbeOptions o = small();
    o.bytes_per_peer = {64};
    o.fft_lengths = {4};
    o.backends = {"test_probe_noting_frees"};
    o.transports = {"test_probe_maps_peers"};
    for (const bool fail : {false, true}) {
        SCOPED_TRACE(fail ? "the first exchange probe fails on the last rank" : "every probe succeeds");
        auto& m = MappingProbes::get();
        m = {};
        m.fail = fail;
        std::vector<json> records;
        const int failed = run_probe(MPI_COMM_WORLD, o, [&](const json& r) { records.push_back(r); });
        EXPECT_EQ(failed, fail ? 1 : 0);
        ASSERT_GT(m.made, 0);
        for (int k = 1; k <= m.made; ++k) {
            EXPECT_TRUE(m.closed.contains(k) && m.first_free.contains(k)) << "probe " << k;
            long long all_closed = 0, any_freed = 0;
            MPI_Allreduce(&m.closed[k], &all_closed, 1, MPI_LONG_LONG, MPI_MAX, m.group[k]);
            MPI_Allreduce(&m.first_free[k], &any_freed, 1, MPI_LONG_LONG, MPI_MIN, m.group[k]);
            MPI_Comm_free(&m.group[k]);
            EXPECT_GE(any_freed, all_closed) << "probe " << k << ": a rank freed memory " << (all_closed - any_freed) / 1e6
                                             << " ms before the last rank let go of its mappings";
        }
    }
    MappingProbes::get() = {};
}

TEST(Probe, BadOptionsNameTheValueAndWhatIsAllowed) {
    ProbeOptions o = small();
    EXPECT_EQ(check_probe_options(o), "");
    o.bytes_per_peer = {12};
    EXPECT_NE(check_probe_options(o).find("--sizes 12: bytes per peer must be a multiple of 8 from 8 to"), std::string::npos);
    o = small();
    o.fft_lengths = {1};
    EXPECT_NE(check_probe_options(o).find("--fft-sizes 1"), std::string::npos);
    o = small();
    o.iterations = 0;
    EXPECT_NE(check_probe_options(o).find("--iterations 0"), std::string::npos);
    o = small();
    o.backends = {"tpu"};
    EXPECT_NE(check_probe_options(o).find("--backend tpu: unknown backend (allowed: "), std::string::npos);
    o = small();
    o.transports = {"carrier_pigeon"};
    EXPECT_NE(check_probe_options(o).find("allowed: a2a_mpi_type"), std::string::npos) << check_probe_options(o);
    EXPECT_THROW(run_probe(MPI_COMM_WORLD, o, [](const json&) {}), std::invalid_argument);
    EXPECT_EQ(default_probe_bytes().front(), 8);
    EXPECT_EQ(default_probe_bytes().back(), 16ll << 20);
}

}  // namespace
}  // namespace fftune
