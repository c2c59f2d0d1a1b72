// Runner (MPI test, 1-4 ranks): record schema, skipped and failed points, a
// failing configuration that does not abort the sweep, agreed errors, and
// rank-local failures that must not leave the other ranks waiting.
#include "core/run/runner.hpp"
#include "families/fft3d/fft3d.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include "core/engine/plan.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/forwarding_transport.hpp"
#include "core/testing/metered_backend.hpp"
#include "core/testing/world.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

using testing::world_rank;
using testing::world_size;

// Fails in setup on rank 0 only: the other ranks must learn of it and agree.
struct ThrowsInSetup final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void setup(const ReshapeContext&) override {
        if (world_rank() == 0) throw std::runtime_error("injected setup failure");
    }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {}
};
// Fails while running, on every rank.
struct ThrowsInExecute final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {
        throw std::runtime_error("injected execution failure");
    }
};
// Fails while running on the last rank only (as a device's sticky error does
// there); the other ranks move nothing and wait for no one.
struct ThrowsInExecuteOnLastRank final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {
        if (world_rank() == world_size() - 1) throw std::runtime_error("injected exchange failure");
    }
};
// Runs but moves nothing: validation must fail it.
struct DropsData final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {}
};
// The library refuses the configuration in setup (rank 0 only): a skip, not a failure.
struct UnsupportedInSetup final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void setup(const ReshapeContext&) override {
        if (world_rank() == 0) throw Unsupported("injected: the library refuses this size");
    }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {}
};
// Rank 0 is refused, the last rank fails outright: the failure wins.
struct UnsupportedAndFailingInSetup final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    void setup(const ReshapeContext&) override {
        if (world_rank() == world_size() - 1) throw std::runtime_error("injected real failure");
        if (world_rank() == 0) throw Unsupported("injected: the library refuses this size");
    }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {}
};
// Applicability that only the last rank denies (rank-local evidence, as a GPU-aware trial).
struct RefusedOnLastRank final : Transport {
    bool runs_alone() const override { return true; }  // injects at one rank too
    bool separate_pack_phases() const override { return false; }
    std::optional<std::string> not_applicable(const Backend&, bool) const override {
        if (world_rank() == world_size() - 1) return std::string("injected: refused on the last rank");
        return std::nullopt;
    }
    void execute(const ReshapeContext&, const void*, void*, PhaseTimer&, const ReshapePhases&) override {}
};
const bool r6 = register_variant<Transport, RefusedOnLastRank>("test_refused_on_last_rank");
const bool r1 = register_variant<Transport, ThrowsInSetup>("test_throws_in_setup");
const bool r4 = register_variant<Transport, UnsupportedInSetup>("test_unsupported_in_setup");
const bool r5 = register_variant<Transport, UnsupportedAndFailingInSetup>("test_unsupported_and_failing_in_setup");
const bool r2 = register_variant<Transport, ThrowsInExecute>("test_throws_in_execute");
const bool r3 = register_variant<Transport, DropsData>("test_drops_data");
const bool r9 = register_variant<Transport, ThrowsInExecuteOnLastRank>("test_throws_in_execute_on_last_rank");

// Fails on the last rank only, where the test says: the FFT plans, or its nth
// allocate() (as cudaMalloc running out after the fit check). The others must
// learn of it before their next collective call, or they wait there forever.
struct InjectedFailure {
    bool fft = false;
    int allocation = 0;   // 0: none
    int allocations = 0;  // allocate() calls since the last reset, on this rank
    int reading = 0;      // the nth reading of any clock (a device fault shows there); 0: none
    int readings = 0;
    int execution = 0;    // the nth FFT execution (a transform's last one comes after its exchanges); 0: none
    int executions = 0;
    static InjectedFailure& on_last_rank() {
        static InjectedFailure f;
        return f;
    }
};
class FailsOnLastRank final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_fails_on_last_rank"; }
    void* allocate(std::size_t b) override {
        auto& f = InjectedFailure::on_last_rank();
        if (++f.allocations == f.allocation && world_rank() == world_size() - 1)
            throw std::runtime_error("injected allocation failure");
        return ForwardingBackend::allocate(b);
    }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& d) override {
        if (InjectedFailure::on_last_rank().fft && world_rank() == world_size() - 1)
            throw std::runtime_error("injected FFT plan failure");
        return std::make_unique<testing::HookedFft>(ForwardingBackend::make_fft(d), [] {
            auto& f = InjectedFailure::on_last_rank();
            if (++f.executions == f.execution && world_rank() == world_size() - 1)
                throw std::runtime_error("injected FFT failure");
        });
    }
    std::unique_ptr<PhaseClock> make_clock() override {
        struct Faulting final : PhaseClock {
            std::unique_ptr<PhaseClock> inner;
            void start() override { inner->start(); }
            void stop() override { inner->stop(); }
            void reset() override { inner->reset(); }
            double elapsed_ms() override {
                auto& f = InjectedFailure::on_last_rank();
                if (++f.readings == f.reading && world_rank() == world_size() - 1)
                    throw std::runtime_error("injected device fault");
                return inner->elapsed_ms();
            }
        };
        auto c = std::make_unique<Faulting>();
        c->inner = ForwardingBackend::make_clock();
        return c;
    }
};
// Setup makes a collective call, as NCCL's and CUDA IPC's do.
struct BarrierInSetup final : testing::ForwardingTransport {
    void setup(const ReshapeContext& ctx) override {
        FFTUNE_MPI_CHECK(MPI_Barrier(ctx.comm));
        ForwardingTransport::setup(ctx);
    }
};
const bool r7 = register_variant<Backend, FailsOnLastRank>("test_fails_on_last_rank");
const bool r8 = register_variant<Transport, BarrierInSetup>("test_barrier_in_setup");

Fft3dPoint point(const std::string& method, std::array<index_t, 3> n = {9, 10, 11}) {
    Fft3dPoint pt;
    pt.problem = {"fft3d", n, Precision::double_, Direction::forward, world_size()};
    pt.config = {"fftw", "slab_2d1d", LayoutVariant::default_, {world_size(), 1}, {method}, false};
    return pt;
}

const RunOptions quick{1, 5, true, {"runner_mpi_test"}};

TEST(RunPoint, OkRecordFollowsTheSchema) {
    auto pt = point("a2a_sync");
    pt.problem.direction = Direction::inverse;
    const json r = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    ASSERT_EQ(r.at("status"), "ok") << r.dump(2);
    EXPECT_EQ(r.at("schema"), "fftune.result/1");
    EXPECT_EQ(r.at("key"), pt.config.key());
    EXPECT_EQ(r.at("problem").at("direction"), "inverse");
    // ctest starts every rank on this host.
    EXPECT_EQ(r.at("problem").at("ranks_per_node"), world_size());
    EXPECT_TRUE(r.at("validation").at("passed").get<bool>());
    EXPECT_EQ(r.at("validation").at("method"), "spectral_laplacian");
    const json& t = r.at("timing");
    EXPECT_EQ(t.at("total").at("n"), 5);
    EXPECT_GE(t.at("setup_ms").get<double>(), 0.0);
    EXPECT_EQ(t.at("total").at("ci99").size(), 2u);
    // Host wall time per part of the point; the timed part holds every iteration.
    const json& wall = t.at("wall_ms");
    EXPECT_EQ(wall.at("setup"), t.at("setup_ms"));
    for (const char* part : {"prepare", "timed", "validate"}) EXPECT_GT(wall.at(part).get<double>(), 0.0) << part;
    EXPECT_GE(wall.at("timed").get<double>(), 5 * t.at("total").at("min").get<double>());
    // The plan's set-up by part (fft3d's annotate): each part of the constructor, in order, within the set-up.
    const json& parts = r.at("fft3d").at("setup_parts_ms");
    std::vector<std::string> names;
    double parts_sum = 0;
    for (const auto& [name, ms] : parts.items()) names.push_back(name), parts_sum += ms.get<double>();
    EXPECT_EQ(names.size(), 5u) << parts.dump();
    for (const char* part : {"backend_and_comms", "plans", "memory_check", "allocate", "transports"})
        EXPECT_GE(parts.value(part, -1.0), 0.0) << part;
    EXPECT_LE(parts_sum, t.at("setup_ms").get<double>() + 1e-6);
    EXPECT_GT(parts_sum, 0.0);
    // Inverse of slab_2d1d: x FFT, then the reshape, then the (y, z) c2r; at one
    // rank no reshape: the c2r reads the x FFT's array in place.
    const json order = world_size() == 1 ? json{"fft.x", "fft.yz"} : json{"fft.x", "pack.0", "exchange.0", "unpack.0", "fft.yz"};
    EXPECT_EQ(t.at("phase_order"), order);
    for (const auto& [name, s] : t.at("phases").items()) {
        EXPECT_LE(s.at("rank_min_median").get<double>(), s.at("median").get<double>() + 1e-12) << name;
        EXPECT_EQ(s.at("n"), 5) << name;
    }
    // Floor traffic per phase, max over ranks (Plan::phase_traffic).
    const json& traffic = r.at("traffic");
    ASSERT_EQ(traffic.size(), t.at("phase_order").size());
    for (const auto& name : t.at("phase_order")) ASSERT_TRUE(traffic.contains(name.get<std::string>())) << name;
    const auto bytes = [&](const char* ph, const char* what) { return traffic.at(ph).at(what).get<unsigned long long>(); };
    if (world_size() == 1) {
        EXPECT_EQ(bytes("fft.x", "device_bytes"), 2u * 9 * 10 * 6 * 16);  // c2c: read + write the half spectrum
        EXPECT_EQ(bytes("fft.yz", "device_bytes"), 9u * 10 * 6 * 16 + 9u * 10 * 11 * 8);
        EXPECT_FALSE(traffic.contains("exchange.0"));  // no self copy
    } else {
        EXPECT_GT(bytes("exchange.0", "sent_bytes"), 0u);
        EXPECT_GT(bytes("exchange.0", "received_bytes"), 0u);
    }
    EXPECT_GT(r.at("memory_bytes").get<long long>(), 0);
    EXPECT_TRUE(r.at("machine").contains("fingerprint"));
    EXPECT_EQ(r.at("provenance").at("command_line"), "runner_mpi_test");
}

TEST(RunPoint, OverlappedRecordSaysSo) {
    auto pt = point("a2a_sync");
    pt.problem.direction = Direction::inverse;
    pt.config.overlap = 3;
    const json r = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    if (world_size() == 1) {  // nothing to overlap: the plan has no reshape
        EXPECT_EQ(r.at("status"), "skipped") << r.dump(2);
        EXPECT_NE(r.at("reason").get<std::string>().find("at one rank the plan has none"), std::string::npos);
        return;
    }
    ASSERT_EQ(r.at("status"), "ok") << r.dump(2);
    EXPECT_EQ(r.at("key"), pt.config.key());
    EXPECT_EQ(r.at("config").at("overlap"), 3);
    EXPECT_TRUE(r.at("validation").at("passed").get<bool>());
    const json& t = r.at("timing");
    EXPECT_EQ(t.at("mode"), "overlapped");
    // Inverse: each slice is reshaped, then transformed; phases in that order.
    EXPECT_EQ(t.at("phase_order"), (json{"fft.x", "pack.0", "exchange.0", "unpack.0", "fft.yz"}));
    pt.config.overlap = 1;
    EXPECT_EQ(run_point(MPI_COMM_WORLD, pt, quick, machine_info()).at("timing").at("mode"), "attribution");
}

const bool metered = register_variant<Backend, testing::MeteredBackend>("fftw_metered");

TEST(RunPoint, DeviceMemoryIsMeasuredAndAPointThatDoesNotFitIsSkipped) {
    auto& meter = testing::Meter::instance();
    auto pt = point("a2a_sync", {16, 12, 10});
    pt.config.backend = "fftw_metered";
    meter.capacity = std::size_t(1) << 40;
    meter.peak = meter.live;
    const std::size_t live0 = meter.live;
    const json ok = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    ASSERT_EQ(ok.at("status"), "ok") << ok.dump(2);
    // The pretend device's free memory drops by exactly what the plan and the
    // runner's buffers take, and validation never holds a second set.
    const auto footprint = ok.at("memory_bytes").get<unsigned long long>();
    unsigned long long peak = meter.peak - live0, peak_max = 0;
    MPI_Allreduce(&peak, &peak_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(peak_max, footprint);
    EXPECT_EQ(ok.at("device_memory").at("measured_bytes").get<unsigned long long>(), footprint);
    EXPECT_EQ(ok.at("device_memory").at("ranks_on_device"), world_size());
    EXPECT_EQ(meter.live, live0) << "a finished point keeps nothing allocated";

    meter.capacity = meter.live + footprint;  // enough for one rank, not for all the ranks sharing it
    const json r = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    meter.capacity = std::size_t(1) << 40;
    if (world_size() == 1) {
        EXPECT_EQ(r.at("status"), "ok") << r.dump(2);
        return;
    }
    ASSERT_EQ(r.at("status"), "skipped") << r.dump(2);
    const std::string reason = r.at("reason");
    EXPECT_NE(reason.find("does not fit in device memory"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("rank 0: rank"), std::string::npos) << "one rank prefix: " << reason;
    EXPECT_FALSE(r.contains("device_memory"));
}

TEST(RanksPerNode, CountsTheGivenCommunicatorsRanksOnThisHost) {
    EXPECT_EQ(ranks_per_node(MPI_COMM_WORLD), world_size());
    EXPECT_EQ(ranks_per_node(MPI_COMM_SELF), 1);
    MPI_Comm even = MPI_COMM_NULL;  // ranks 0, 2, ... and 1, 3, ...
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &even);
    int size = 0;
    MPI_Comm_size(even, &size);
    EXPECT_EQ(ranks_per_node(even), size);
    MPI_Comm_free(&even);
}

TEST(RunPoint, NotApplicableIsSkippedWithItsReason) {
    auto pt = point("p2p_sync");
    pt.config.decomposition = "pencil";
    pt.config.redistribution = {"p2p_sync", "p2p_sync"};
    pt.config.process_grid = {world_size() + 1, 1};
    const json r = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    EXPECT_EQ(r.at("status"), "skipped");
    EXPECT_NE(r.at("reason").get<std::string>().find("needs"), std::string::npos) << r.dump();
    EXPECT_FALSE(r.contains("timing"));
}

TEST(RunPoint, ASkipOnOneRankIsASkipOnEveryRank) {
    const json r = run_point(MPI_COMM_WORLD, point("test_refused_on_last_rank"), quick, machine_info());
    EXPECT_EQ(r.at("status"), "skipped") << r.dump();
    EXPECT_EQ(r.at("reason"), "injected: refused on the last rank");
    // The ranks are still in step: the next point runs.
    EXPECT_EQ(run_point(MPI_COMM_WORLD, point("p2p_sync"), quick, machine_info()).at("status"), "ok");
}

TEST(RunPoint, ThrowingConfigurationsFailWithTheAgreedError) {
    const json setup = run_point(MPI_COMM_WORLD, point("test_throws_in_setup"), quick, machine_info());
    EXPECT_EQ(setup.at("status"), "failed");
    const std::string want = world_size() > 1 ? "rank 0: injected setup failure" : "injected setup failure";
    EXPECT_NE(setup.at("error").get<std::string>().find(want), std::string::npos) << setup.dump();
    const json exec = run_point(MPI_COMM_WORLD, point("test_throws_in_execute"), quick, machine_info());
    EXPECT_EQ(exec.at("status"), "failed");
    EXPECT_NE(exec.at("error").get<std::string>().find("injected execution failure"), std::string::npos);
}

TEST(RunPoint, WhatTheLibraryRefusesInSetupIsSkippedWithItsReason) {
    const json r = run_point(MPI_COMM_WORLD, point("test_unsupported_in_setup"), quick, machine_info());
    EXPECT_EQ(r.at("status"), "skipped") << r.dump();
    EXPECT_NE(r.at("reason").get<std::string>().find("the library refuses this size"), std::string::npos) << r.dump();
    EXPECT_FALSE(r.contains("error"));
    EXPECT_FALSE(r.contains("timing"));
    const json mixed = run_point(MPI_COMM_WORLD, point("test_unsupported_and_failing_in_setup"), quick, machine_info());
    EXPECT_EQ(mixed.at("status"), "failed") << mixed.dump();
    EXPECT_NE(mixed.at("error").get<std::string>().find("injected real failure"), std::string::npos) << mixed.dump();
}

// Each rank-local failure on the last rank fails the point on every rank with
// that rank's error, in the part of the point where it happened; the ranks are
// still in step afterwards. Before each part agreed its rank-local work, the
// other ranks went on into the next collective call and the test hung.
TEST(RunPoint, AFailureOnOneRankFailsThePointOnEveryRankWithoutAHang) {
    auto& inject = InjectedFailure::on_last_rank();
    auto faulty = [](Direction d) {
        auto pt = point("test_barrier_in_setup");
        pt.config.backend = "test_fails_on_last_rank";
        pt.problem.direction = d;
        return pt;
    };
    // The allocations a plan makes, and the FFTs one forward transform runs,
    // counted on a plan that succeeds.
    inject = {};
    int per_transform = 0;
    {
        Plan counted(MPI_COMM_WORLD, faulty(Direction::forward).problem, faulty(Direction::forward).config);
        Buffer in = counted.allocate_input(), out = counted.allocate_output();
        const int before = inject.executions;
        counted.forward(in.data(), out.data());
        per_transform = inject.executions - before;
    }
    inject = {};
    { Plan counted(MPI_COMM_WORLD, faulty(Direction::inverse).problem, faulty(Direction::inverse).config); }
    const int in_plan = inject.allocations;
    ASSERT_GT(in_plan, 0);
    ASSERT_GE(per_transform, 2);  // an FFT stage after the exchange
    // Transforms before validation: quick's warm-up and timed iterations.
    const int timed = (quick.warmup + quick.iterations) * per_transform;
    const std::string by = world_size() > 1 ? fmt::format("rank {}: ", world_size() - 1) : "";
    struct Case {
        InjectedFailure inject;
        Direction direction;
        std::string error;
    };
    const std::vector<Case> cases = {
        {{true, 0, 0}, Direction::forward, "setup: " + by + "injected FFT plan failure"},
        {{false, 1, 0}, Direction::forward, "setup: " + by + "injected allocation failure"},
        // The runner's input array; the inverse then runs a forward transform first.
        {{false, in_plan + 1, 0}, Direction::inverse, "execution: " + by + "injected allocation failure"},
        // Inside the timed loop (a few clocks are read per iteration): the
        // others would go on to the next iteration's barrier.
        {{false, 0, 0, 9, 0}, Direction::forward, "execution: " + by + "injected device fault"},
        // Validation's own input array, after the runner's two were freed.
        {{false, in_plan + 3, 0}, Direction::inverse, "validation: " + by + "injected allocation failure"},
        // The last FFT of the inverse's untimed forward, and of a timed
        // transform, after their exchanges: the others finish the transform
        // and wait in the agreement after it.
        {{false, 0, 0, 0, 0, per_transform, 0}, Direction::inverse, "execution: " + by + "injected FFT failure"},
        {{false, 0, 0, 0, 0, 2 * per_transform, 0}, Direction::forward, "execution: " + by + "injected FFT failure"},
        // The first FFT of a timed transform, before its exchange: the others
        // wait in the exchange for this rank's blocks (Plan::LocalFailure).
        {{false, 0, 0, 0, 0, per_transform + 1, 0}, Direction::forward, "execution: " + by + "injected FFT failure"},
        // The same in validation's forward, and in its last inverse (before
        // the comparison's agreement).
        {{false, 0, 0, 0, 0, timed + per_transform, 0}, Direction::forward, "validation: " + by + "injected FFT failure"},
        {{false, 0, 0, 0, 0, timed + 3 * per_transform, 0}, Direction::forward,
         "validation: " + by + "injected FFT failure"},
    };
    for (const Case& c : cases) {
        inject = c.inject;
        const json r = run_point(MPI_COMM_WORLD, faulty(c.direction), quick, machine_info());
        inject = {};
        EXPECT_EQ(r.at("status"), "failed") << r.dump();
        EXPECT_EQ(r.value("error", ""), c.error) << r.dump();
        EXPECT_EQ(run_point(MPI_COMM_WORLD, faulty(c.direction), quick, machine_info()).at("status"), "ok");
    }
}

// An FFT fails before the exchange, and the exchange then fails on the same
// rank: the record names the FFT's failure, the cause, and then the exchange's.
TEST(RunPoint, AReshapeThatFailsAfterALocalFailureDoesNotHideIt) {
    auto& inject = InjectedFailure::on_last_rank();
    auto pt = point("test_throws_in_execute_on_last_rank");
    pt.config.backend = "test_fails_on_last_rank";
    inject = {};
    inject.execution = 1;  // slab_2d1d forward: the (y, z) r2c comes before the exchange
    const json r = run_point(MPI_COMM_WORLD, pt, quick, machine_info());
    inject = {};
    EXPECT_EQ(r.at("status"), "failed") << r.dump();
    const std::string error = r.value("error", "");
    const auto cause = error.find("injected FFT failure"), after = error.find("injected exchange failure");
    EXPECT_NE(cause, std::string::npos) << error;
    EXPECT_NE(after, std::string::npos) << error;
    EXPECT_LT(cause, after) << error;
}

TEST(RunPoint, WrongResultsFailValidation) {
    const json r = run_point(MPI_COMM_WORLD, point("test_drops_data"), quick, machine_info());
    EXPECT_EQ(r.at("status"), "failed");
    EXPECT_NE(r.at("error").get<std::string>().find("validation failed"), std::string::npos) << r.dump();
    EXPECT_FALSE(r.at("validation").at("passed").get<bool>());
}

// From 2^24 points on, fft3d validates the arrays its timing left by samples
// (validate_timed), in both directions; wrong results still fail.
TEST(RunPoint, LargeGridsAreValidatedBySamplesOfTheTimedArrays) {
    const RunOptions once{0, 1, true, {"runner_mpi_test"}};
    const std::array<index_t, 3> n{64, 512, 512};
    for (auto dir : {Direction::forward, Direction::inverse}) {
        auto pt = point("a2a_sync", n);
        pt.problem.direction = dir;
        const json r = run_point(MPI_COMM_WORLD, pt, once, machine_info());
        ASSERT_EQ(r.at("status"), "ok") << r.dump(2);
        EXPECT_EQ(r.at("validation").at("method"), "round_trip_sampled");
        ASSERT_EQ(r.at("validation").at("checks").size(), 2u);
        EXPECT_EQ(r.at("validation").at("checks")[1].at("method"), "spectrum_spot");
        EXPECT_LT(r.at("validation").at("max_rel_error").get<double>(), 1e-13);
        // Where the check's time went; only a timed forward transforms back.
        const json& parts = r.at("validation").at("parts_ms");
        EXPECT_TRUE(parts.contains("spot") && parts.contains("round_trip")) << parts.dump();
        EXPECT_EQ(parts.contains("transform"), dir == Direction::forward) << parts.dump();
    }
    const json r = run_point(MPI_COMM_WORLD, point("test_drops_data", n), once, machine_info());
    EXPECT_EQ(r.at("status"), "failed");
    EXPECT_EQ(r.at("validation").at("method"), "round_trip_sampled");
}

TEST(RunJob, AFailingPointDoesNotAbortTheSweep) {
    const json j{{"name", "runner test"},       {"problem", "fft3d"},  {"sizes", json::array({json::array({9, 10, 11})})},
                 {"ranks", world_size()},       {"decomposition", "slab_2d1d"}, {"layout", "default"},
                 {"redistribution", {"p2p_sync", "test_throws_in_execute", "a2a_sync"}},
                 {"warmup", 0},                 {"iterations", 2}};
    const Testcase tc = parse_testcase(j, "inline");
    const auto file = (std::filesystem::temp_directory_path() / fmt::format("fftune_runner_test_{}.jsonl", getpid())).string();
    std::string shared = file;
    int len = static_cast<int>(shared.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    shared.resize(len);
    MPI_Bcast(shared.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
    const int failed = run_job(MPI_COMM_WORLD, tc, shared, 0, {"test"});
    EXPECT_EQ(failed, 1);
    if (world_rank() == 0) {
        const auto records = read_records(shared);
        ASSERT_EQ(records.size(), 3u);
        EXPECT_EQ(records[0].at("status"), "ok");
        EXPECT_EQ(records[1].at("status"), "failed");
        EXPECT_EQ(records[2].at("status"), "ok");
        const std::string summary = summarize_records(records);
        EXPECT_NE(summary.find("1 failed"), std::string::npos) << summary;
        EXPECT_NE(summary.find("2 ok"), std::string::npos) << summary;
        EXPECT_NE(summary.find("test_throws_in_execute"), std::string::npos) << summary;
        std::filesystem::remove(shared);
    }
}

// Inside a job, a point keeps its plan's arrays for the next point where
// that one is the same configuration and problem in the other direction,
// which takes them as they are; before any other point it lets them go at
// its end (timed as wall_ms.release). The memory measured stays what each
// point holds, kept arrays included.
TEST(RunJob, TheOtherDirectionTakesTheKeptArraysAndTheirMemoryIsStillMeasured) {
    auto& meter = testing::Meter::instance();
    meter.capacity = std::size_t(1) << 40;
    const std::size_t live0 = meter.live;
    const json j{{"name", "kept arrays"}, {"problem", "fft3d"},
                 {"sizes", json::array({json::array({12, 10, 9}), json::array({16, 12, 10})})},
                 {"ranks", world_size()}, {"decomposition", "slab_2d1d"}, {"layout", "default"},
                 {"backend", "fftw_metered"}, {"redistribution", "a2a_sync"}, {"direction", "all"},
                 {"warmup", 0}, {"iterations", 1}};
    const Testcase tc = parse_testcase(j, "inline");
    std::string file = (std::filesystem::temp_directory_path() / fmt::format("fftune_kept_test_{}.jsonl", getpid())).string();
    int len = static_cast<int>(file.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    file.resize(len);
    MPI_Bcast(file.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_EQ(run_job(MPI_COMM_WORLD, tc, file, 0, {"test"}), 0);
    EXPECT_EQ(meter.live, live0) << "the job let go of the kept arrays";
    if (world_rank() != 0) return;
    const auto records = read_records(file);
    std::filesystem::remove(file);
    ASSERT_EQ(records.size(), 4u);
    for (std::size_t i = 0; i < records.size(); ++i) {
        const json& r = records[i];
        ASSERT_EQ(r.at("status"), "ok") << r.dump(2);
        EXPECT_EQ(r.at("device_memory").at("measured_bytes"), r.at("memory_bytes")) << i;
        EXPECT_TRUE(r.at("timing").at("wall_ms").contains("release")) << i;
        const json& kept = r.at("fft3d").at("kept_arrays");
        const bool second_direction = i % 2 == 1;  // sizes, then directions
        ASSERT_EQ(r.at("problem").at("direction"), second_direction ? "inverse" : "forward") << i;
        if (second_direction) {
            EXPECT_GT(kept.at("reused_bytes").get<unsigned long long>(), 0u) << i;
            EXPECT_EQ(kept.at("reused_bytes"), kept.at("before_bytes")) << i;
        } else {
            EXPECT_EQ(kept.at("before_bytes"), 0) << i << ": the point before let go at its end";
        }
    }
}

// A resumed job appends after a torn last line (a job killed mid-write)
// without gluing its first record onto it.
TEST(RunJob, AppendAfterATornLineKeepsEveryNewRecord) {
    const json j{{"name", "append test"}, {"problem", "fft3d"}, {"sizes", json::array({json::array({9, 10, 11})})},
                 {"ranks", world_size()}, {"decomposition", "slab_2d1d"}, {"layout", "default"},
                 {"redistribution", {"p2p_sync", "a2a_sync"}}, {"warmup", 0}, {"iterations", 1}};
    const Testcase tc = parse_testcase(j, "inline");
    std::string file = (std::filesystem::temp_directory_path() / fmt::format("fftune_append_test_{}.jsonl", getpid())).string();
    int len = static_cast<int>(file.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    file.resize(len);
    MPI_Bcast(file.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
    const std::vector<int> first{0}, second{1};
    run_job(MPI_COMM_WORLD, tc, file, 0, {"test"}, &first);
    if (world_rank() == 0) std::ofstream(file, std::ios::app) << R"({"status": "ok", "torn)";
    MPI_Barrier(MPI_COMM_WORLD);
    run_job(MPI_COMM_WORLD, tc, file, 0, {"test"}, &second, true);
    if (world_rank() == 0) {
        const auto records = read_records(file);
        ASSERT_EQ(records.size(), 2u);
        EXPECT_EQ(records[0].at("point_index"), 0);
        EXPECT_EQ(records[1].at("point_index"), 1);
        std::filesystem::remove(file);
    }
}

}  // namespace
}  // namespace fftune
