// A job's start-up (core/run/job_start.hpp), 1-4 ranks: the transports its
// points name start once each, on every rank, before the first point sets up;
// one that fails to start, or does not apply on some rank, leaves the job
// running; every record says what the start-up took.
#include "core/run/job_start.hpp"

#include "core/platform/parallel.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "core/base/registry.hpp"
#include "core/run/runner.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/forwarding_transport.hpp"
#include "core/testing/world.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;
using testing::world_rank;
using testing::world_size;

struct Counts {
    int starts = 0;
    int setups = 0;
    int setups_before_first_start = -1;
    int start_comm_size = 0;
};
Counts counted, refused;

// a2a_sync that counts its job starts and plan set-ups.
struct StartCounted final : testing::ForwardingTransport {
    void start_job(MPI_Comm comm, const Backend&) override {
        if (counted.starts++ == 0) counted.setups_before_first_start = counted.setups;
        MPI_Comm_size(comm, &counted.start_comm_size);
    }
    void setup(const ReshapeContext& ctx) override {
        ++counted.setups;
        ForwardingTransport::setup(ctx);
    }
};
struct FailsToStartOnLastRank final : testing::ForwardingTransport {
    void start_job(MPI_Comm, const Backend&) override {
        if (world_rank() == world_size() - 1) throw std::runtime_error("injected start-up failure");
    }
};
struct RefusedOnLastRankAtStart final : testing::ForwardingTransport {
    std::optional<std::string> not_applicable(const Backend&, bool) const override {
        if (world_rank() == world_size() - 1) return std::string("injected: refused on the last rank");
        return std::nullopt;
    }
    void start_job(MPI_Comm, const Backend&) override { ++refused.starts; }
};
// fftw that counts its warm-ups per precision; unavailable on the last rank when asked.
std::map<Precision, int> warm_ups;
struct WarmUpCounted final : testing::ForwardingBackend {
    std::string name() const override { return "test_warm_up_counted"; }
    void warm_up(Precision p) override { ++warm_ups[p]; }
};
struct UnavailableOnLastRank final : testing::ForwardingBackend {
    std::string name() const override { return "test_unavailable_on_last_rank"; }
    std::optional<std::string> unavailable() const override {
        if (world_rank() == world_size() - 1) return std::string("injected: no device on the last rank");
        return std::nullopt;
    }
    void warm_up(Precision p) override { ++warm_ups[p]; }
};
struct FailsToWarmUpOnLastRank final : testing::ForwardingBackend {
    std::string name() const override { return "test_fails_to_warm_up"; }
    void warm_up(Precision) override {
        if (world_rank() == world_size() - 1) throw std::runtime_error("injected warm-up failure");
    }
};
const bool b1 = register_variant<Backend, WarmUpCounted>("test_warm_up_counted");
const bool b2 = register_variant<Backend, UnavailableOnLastRank>("test_unavailable_on_last_rank");
const bool b3 = register_variant<Backend, FailsToWarmUpOnLastRank>("test_fails_to_warm_up");
const bool r1 = register_variant<Transport, StartCounted>("test_start_counted");
const bool r2 = register_variant<Transport, FailsToStartOnLastRank>("test_fails_to_start_on_last_rank");
const bool r3 = register_variant<Transport, RefusedOnLastRankAtStart>("test_refused_at_start_on_last_rank");

Point point_with(json config) {
    Point p;
    p.problem = {{"kind", "fft3d"}, {"ranks", world_size()}};
    p.config = std::move(config);
    return p;
}

TEST(TransportsNamed, AreTheRegisteredTransportsOfTheConfigsEachOnce) {
    const Point a = point_with({{"backend", "fftw"}, {"decomposition", "slab_2d1d"},
                                {"redistribution", {"a2a_sync", "test_start_counted"}}});
    const Point b = point_with({{"backend", "fftw"}, {"redistribution", "a2a_sync"}, {"layout", "default"}});
    const Point no_backend = point_with({{"redistribution", "p2p_sync"}});
    const auto pairs = transports_named({&a, &b, &no_backend});
    const std::vector<std::pair<std::string, std::string>> want{{"fftw", "a2a_sync"}, {"fftw", "test_start_counted"}};
    EXPECT_EQ(pairs, want);
}

TEST(StartJob, StartsEachTransportOnceAndSaysHowLongItTook) {
    counted = {};
    const Point a = point_with({{"backend", "fftw"}, {"redistribution", {"test_start_counted", "a2a_sync"}}});
    const Point b = point_with({{"backend", "fftw"}, {"redistribution", {"test_start_counted"}}});
    const json r = start_job(MPI_COMM_WORLD, {&a, &b});
    EXPECT_EQ(counted.starts, 1);
    EXPECT_EQ(counted.start_comm_size, world_size());
    ASSERT_TRUE(r.at("parts_ms").contains("fftw/test_start_counted")) << r.dump();
    EXPECT_TRUE(r.at("parts_ms").contains("fftw/a2a_sync")) << r.dump();
    EXPECT_GE(r.at("startup_ms").get<double>(), r.at("parts_ms").at("fftw/test_start_counted").get<double>());
    EXPECT_FALSE(r.contains("failed"));
    // The host loops' threads are started once for the job too.
    ASSERT_TRUE(r.at("parts_ms").contains("host_threads")) << r.dump();
    EXPECT_EQ(start_host_threads(host_threads()), start_host_threads(1)) << "start_job started every one";
}

TEST(StartJob, AFailureToStartIsReportedOnEveryRankAndNotThrown) {
    const Point a = point_with({{"backend", "fftw"}, {"redistribution", "test_fails_to_start_on_last_rank"}});
    json r;
    ASSERT_NO_THROW(r = start_job(MPI_COMM_WORLD, {&a}));
    ASSERT_TRUE(r.contains("failed")) << r.dump();
    EXPECT_NE(r.at("failed").at("fftw/test_fails_to_start_on_last_rank").get<std::string>().find("injected"),
              std::string::npos);
}

TEST(StartJob, ATransportThatDoesNotApplyOnSomeRankIsNotStartedOnAny) {
    refused = {};
    const Point a = point_with({{"backend", "fftw"}, {"redistribution", "test_refused_at_start_on_last_rank"}});
    const json r = start_job(MPI_COMM_WORLD, {&a});
    EXPECT_EQ(refused.starts, 0);
    EXPECT_FALSE(r.at("parts_ms").contains("fftw/test_refused_at_start_on_last_rank")) << r.dump();
}

Point point_of(const std::string& backend, json precision) {
    Point p = point_with({{"backend", backend}});
    p.problem["precision"] = std::move(precision);
    return p;
}

TEST(PrecisionsNamed, AreEachBackendWithEachPrecisionItsProblemsNameOnce) {
    const Point a = point_of("fftw", "single"), b = point_of("fftw", "double"), c = point_of("fftw", "single");
    const Point d = point_of("cuda", "double");
    const Point complex = point_of("fftw", "complex_double");  // krylov's: no Precision
    const Point no_precision = point_with({{"backend", "fftw"}});
    const std::vector<std::pair<std::string, Precision>> want{
        {"cuda", Precision::double_}, {"fftw", Precision::single}, {"fftw", Precision::double_}};
    EXPECT_EQ(precisions_named({&a, &b, &c, &d, &complex, &no_precision}), want);
    // A family that names none in its problem says which it runs in (convolution: double).
    Point convolution = point_with({{"backend", "cuda"}});
    convolution.problem["kind"] = "convolution";
    const std::vector<std::pair<std::string, Precision>> conv{{"cuda", Precision::double_}};
    EXPECT_EQ(precisions_named({&convolution}), conv);
}

TEST(StartJob, WarmsEachBackendUpOncePerPrecisionAndSaysHowLongItTook) {
    warm_ups.clear();
    const Point a = point_of("test_warm_up_counted", "single"), b = point_of("test_warm_up_counted", "single");
    const Point c = point_of("test_warm_up_counted", "double");
    const json r = start_job(MPI_COMM_WORLD, {&a, &b, &c});
    EXPECT_EQ(warm_ups[Precision::single], 1);
    EXPECT_EQ(warm_ups[Precision::double_], 1);
    const json& parts = r.at("parts_ms");
    ASSERT_TRUE(parts.contains("test_warm_up_counted/warm_up/single")) << r.dump();
    ASSERT_TRUE(parts.contains("test_warm_up_counted/warm_up/double")) << r.dump();
    EXPECT_GE(r.at("startup_ms").get<double>(), parts.at("test_warm_up_counted/warm_up/single").get<double>());
    EXPECT_FALSE(r.contains("failed"));
}

TEST(StartJob, ABackendUnavailableOnSomeRankIsWarmedUpOnNone) {
    warm_ups.clear();
    const Point a = point_of("test_unavailable_on_last_rank", "single");
    const json r = start_job(MPI_COMM_WORLD, {&a});
    EXPECT_EQ(warm_ups[Precision::single], 0);
    EXPECT_FALSE(r.at("parts_ms").contains("test_unavailable_on_last_rank/warm_up/single")) << r.dump();
}

TEST(StartJob, AFailedWarmUpIsReportedOnEveryRankAndNotThrown) {
    const Point a = point_of("test_fails_to_warm_up", "double");
    json r;
    ASSERT_NO_THROW(r = start_job(MPI_COMM_WORLD, {&a}));
    ASSERT_TRUE(r.contains("failed")) << r.dump();
    EXPECT_NE(r.at("failed").at("test_fails_to_warm_up/warm_up/double").get<std::string>().find("injected"),
              std::string::npos);
}

std::string shared_temp_file(const std::string& stem) {
    std::string file = (std::filesystem::temp_directory_path() / fmt::format("{}_{}.jsonl", stem, getpid())).string();
    int len = static_cast<int>(file.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    file.resize(len);
    MPI_Bcast(file.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return file;
}

// The job starts its points' transport before the first point's plan sets
// it up, once for all of them, and only for points it runs.
TEST(RunJob, StartsWhatItsPointsShareOnceBeforeTheFirstPoint) {
    counted = {};
    const json j{{"name", "job start"}, {"problem", "fft3d"},
                 {"sizes", json::array({json::array({9, 10, 11}), json::array({8, 8, 8})})},
                 {"ranks", world_size()}, {"decomposition", "slab_2d1d"}, {"layout", "default"},
                 {"backend", "fftw"}, {"redistribution", {"a2a_sync", "test_start_counted"}},
                 {"warmup", 0}, {"iterations", 1}};
    const Testcase tc = parse_testcase(j, "inline");
    const std::string file = shared_temp_file("fftune_job_start_test");
    EXPECT_EQ(run_job(MPI_COMM_WORLD, tc, file, 0, {"test"}), 0);
    EXPECT_EQ(counted.starts, 1);
    EXPECT_EQ(counted.setups_before_first_start, 0) << "started before any plan set it up";
    EXPECT_GT(counted.setups, 1);
    if (world_rank() == 0) {
        const auto records = read_records(file);
        ASSERT_EQ(records.size(), 4u);
        for (const json& r : records) {
            ASSERT_EQ(r.at("status"), "ok") << r.dump(2);
            EXPECT_TRUE(r.at("job").at("parts_ms").contains("fftw/test_start_counted")) << r.dump(2);
            EXPECT_TRUE(r.at("job").at("parts_ms").contains("fftw/warm_up/double")) << r.dump(2);
        }
    }

    // Only the a2a_sync points run: the counted transport is not started.
    counted = {};
    std::vector<int> only;
    for (const Point& p : tc.points(world_size()))
        if (p.config.at("redistribution").at(0) == "a2a_sync") only.push_back(p.index);
    ASSERT_EQ(only.size(), 2u);
    EXPECT_EQ(run_job(MPI_COMM_WORLD, tc, file, 0, {"test"}, &only), 0);
    EXPECT_EQ(counted.starts, 0);
    if (world_rank() == 0) {
        for (const json& r : read_records(file)) {
            if (r.at("status") == "skipped") continue;
            EXPECT_FALSE(r.at("job").at("parts_ms").contains("fftw/test_start_counted")) << r.dump(2);
        }
        std::filesystem::remove(file);
    }
}

}  // namespace
}  // namespace fftune
