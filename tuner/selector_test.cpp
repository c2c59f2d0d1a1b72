// Selector rungs on a database filled by real runs of this machine: exact,
// stale (software changed), nearest, per_rank_size (grids re-derived), model
// (from probe records alone), default; foreign and broken databases fall back
// to the default with the reason; rank 0's answer reaches all ranks.
#include "tuner/selector.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/run/probe.hpp"
#include "core/records/provenance.hpp"
#include "core/run/runner.hpp"
#include "families/fft3d/fft3d.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class SelectorTest : public ::testing::Test {
protected:
    void SetUp() override {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        dir_ = fs::temp_directory_path() / fmt::format("fftune_selector_{}_{}", getpid(), rank);
        fs::create_directories(dir_);
        // Measure two configurations of 16x8x8 at one rank on this machine.
        std::ofstream out(file("runs.jsonl"));
        for (const char* d : {"slab_2d1d", "reference_3d"}) {
            Fft3dPoint pt;
            pt.problem = problem;
            pt.config = {"fftw", d, LayoutVariant::default_, {1, 1},
                         std::string(d) == "reference_3d" ? std::vector<std::string>{} : std::vector<std::string>{"a2a_sync"}, false};
            const json r = run_point(MPI_COMM_SELF, pt, {1, 5, true, {"selector_test"}}, machine_info());
            ASSERT_EQ(r.at("status"), "ok") << r.dump();
            out << r.dump() << "\n";
        }
        out.close();
        Database(file("db.sqlite"), false).ingest({file("runs.jsonl")});
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string file(const std::string& n) const { return (dir_ / n).string(); }

    const Problem problem{"fft3d", {16, 8, 8}, Precision::double_, Direction::forward, 1};
    fs::path dir_;
};

TEST_F(SelectorTest, ExactAnswerIsTheMeasuredWinner) {
    const Selection s = select(problem, {file("db.sqlite"), ""});
    EXPECT_EQ(s.rung, "exact") << s.reason;
    Database db(file("db.sqlite"), true);
    const auto w = pick_winner(problem, db.measurements(problem, machine_info().at("fingerprint")));
    ASSERT_TRUE(w);
    EXPECT_EQ(s.key, w->best.key);
    ASSERT_TRUE(s.expected_ms);
    EXPECT_DOUBLE_EQ(*s.expected_ms, w->best.median_ms);
}

TEST_F(SelectorTest, MaxErrorKeepsOnlyMeasurementsWithinIt) {
    const Selection loose = select(problem, {file("db.sqlite"), "", 1.0});
    EXPECT_EQ(loose.rung, "exact") << loose.reason;
    EXPECT_NE(loose.reason.find("with a measured error within 1"), std::string::npos) << loose.reason;
    ASSERT_TRUE(loose.error);
    EXPECT_LE(*loose.error, 1.0);
    // Every measurement has a rounding error above 0: none answers.
    const Selection strict = select(problem, {file("db.sqlite"), "", 0.0});
    // Nothing measured answers: the cost model (fitted to this machine's records) or the default.
    EXPECT_TRUE(strict.rung == "model" || strict.rung == "default") << strict.rung << ": " << strict.reason;
    EXPECT_FALSE(strict.error);
    // A bound that bounds nothing, or that no error can meet, is refused, not answered by the default.
    for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0})
        try {
            const Selection s = select(problem, {file("db.sqlite"), "", bad});
            ADD_FAILURE() << bad << " answered " << s.rung << ": " << s.reason;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("is not a usable error bound (allowed: a finite number >= 0"),
                      std::string::npos) << e.what();
        }
}

TEST_F(SelectorTest, OtherSoftwareIsFlaggedStale) {
    std::ifstream in(file("runs.jsonl"));
    std::ofstream out(file("old.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
        json r = json::parse(line);
        r["provenance"]["fftune_version"] = "0.0.1";
        r["problem"]["size"] = {32, 8, 8};
        out << r.dump() << "\n";
    }
    out.close();
    Database(file("db.sqlite"), false).ingest({file("old.jsonl")});
    Problem p = problem;
    p.size = {32, 8, 8};
    const Selection s = select(p, {file("db.sqlite"), ""});
    EXPECT_EQ(s.rung, "stale") << s.reason;
}

TEST_F(SelectorTest, UnmeasuredSizeGetsTheNearestProblemsPlan) {
    Problem p = problem;
    p.size = {20, 8, 10};
    const Selection s = select(p, {file("db.sqlite"), ""});
    EXPECT_EQ(s.rung, "nearest") << s.reason;
    ASSERT_TRUE(s.measured_problem);
    EXPECT_EQ(s.measured_problem->at("size"), json(problem).at("size"));
    EXPECT_NEAR(s.distance, std::log2(20.0 / 16) + std::log2(10.0 / 8), 1e-12);
    EXPECT_FALSE(check_applicable(p, s.config.get<Config>()));
}

// A measurement at one rank exchanged nothing, so it answers no other rank
// count (the transport it would lend is one it never ran): 32x8x8 at 2 ranks,
// with the per-rank size of the measured 16x8x8 at 1 rank only, gets the
// model or the default, not the 1-rank plan re-derived.
TEST_F(SelectorTest, OneRankMeasurementsDoNotAnswerOtherRankCounts) {
    const Problem p{"fft3d", {32, 8, 8}, Precision::double_, Direction::forward, 2};
    Database db(file("db.sqlite"), true);
    for (const auto& q : db.problems(machine_info().at("fingerprint"), "fft3d")) ASSERT_EQ(q.at("ranks"), 1) << q.dump();
    const Selection s = select(p, {file("db.sqlite"), ""});
    EXPECT_NE(s.rung, "per_rank_size") << s.reason;
    EXPECT_NE(s.rung, "nearest") << s.reason;
    if (s.measured_problem) EXPECT_NE(s.measured_problem->at("ranks"), 1) << s.reason;
    EXPECT_FALSE(check_applicable(p, s.config.get<Config>())) << s.key;
}

// A validated record of `config` for `p` on machine "synthetic".
json synthetic_record(const Problem& p, const Config& c, double ms) {
    return json{{"schema", "fftune.result/1"}, {"status", "ok"}, {"problem", p}, {"config", c}, {"key", c.key()},
                {"validation", {{"passed", true}, {"max_rel_error", 1e-15}}},
                {"timing", {{"total", {{"median", ms}, {"ci99", {ms, ms}}}}, {"phases", json::object()}}},
                {"machine", {{"fingerprint", "synthetic"}}}, {"provenance", {{"fftune_version", fftune_version()}}}};
}

// Timings made so that the winner is known: the fastest record failed its
// validation, the fastest validated one has an error of 1e-3, the one within
// max_error 1e-6 is third (measured twice: its faster median counts), the
// slowest last. The answer is that configuration, not merely an answer.
TEST_F(SelectorTest, TheFastestValidatedConfigurationWins) {
    const Problem p{"fft3d", {32, 32, 32}, Precision::double_, Direction::forward, 4};
    const Config failed{"fftw", "pencil", LayoutVariant::default_, {2, 2}, {"a2a_sync", "p2p_sync"}, false},
        rough{"fftw", "slab_2d1d", LayoutVariant::default_, {4, 1}, {"a2a_sync"}, false},
        precise{"fftw", "slab_2d1d", LayoutVariant::default_, {4, 1}, {"p2p_sync"}, false},
        slow{"fftw", "slab_1d2d", LayoutVariant::default_, {4, 1}, {"a2a_sync"}, false};
    std::string line;
    std::getline(std::ifstream(file("runs.jsonl")), line);
    const json here = json::parse(line);  // this machine and software: the rung is exact, not stale
    auto record = [&](const Config& c, double ms) {
        json r = synthetic_record(p, c, ms);
        r["machine"] = here.at("machine"), r["provenance"] = here.at("provenance");
        return r;
    };
    json bad = record(failed, 1.0), coarse = record(rough, 2.0);
    bad["status"] = "failed";  // as the runner records a failed validation
    bad["validation"] = {{"passed", false}, {"max_rel_error", 0.5}};
    coarse["validation"]["max_rel_error"] = 1e-3;
    std::ofstream(file("known.jsonl")) << bad.dump() << "\n"
                                       << coarse.dump() << "\n"
                                       << record(precise, 9.0).dump() << "\n"
                                       << record(slow, 5.0).dump() << "\n"
                                       << record(precise, 3.0).dump() << "\n";
    const auto stats = Database(file("known.sqlite"), false).ingest({file("known.jsonl")});
    EXPECT_EQ(stats.added, 5);

    const Selection s = select(p, {file("known.sqlite"), ""});
    EXPECT_EQ(s.rung, "exact") << s.reason;
    EXPECT_EQ(s.key, "fftw/slab_2d1d/default/4x1/a2a_sync/host");
    EXPECT_EQ(s.key, rough.key());
    EXPECT_EQ(s.reason, "fastest of 3 validated configurations measured for this problem");
    EXPECT_EQ(s.expected_ms, 2.0);
    EXPECT_EQ(s.error, 1e-3);

    const Selection within = select(p, {file("known.sqlite"), "", 1e-6});
    EXPECT_EQ(within.rung, "exact") << within.reason;
    EXPECT_EQ(within.key, "fftw/slab_2d1d/default/4x1/p2p_sync/host");
    EXPECT_EQ(within.expected_ms, 3.0);
    EXPECT_EQ(within.reason, "fastest of 3 validated configurations measured for this problem with a measured error "
                             "within 1e-06");

    Database db(file("known.sqlite"), true);
    const auto w = pick_winner(json(p), db.measurements(json(p), machine_info().at("fingerprint")));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->best.key, rough.key());
    ASSERT_TRUE(w->runner_up);
    EXPECT_EQ(w->runner_up->key, precise.key());
    EXPECT_EQ(w->runner_up->median_ms, 3.0);
    EXPECT_EQ(w->candidates, 3);
    EXPECT_EQ(w->verdict, "faster");  // CIs of zero width, disjoint
}

// A count (krylov's iterations) is how much of one problem was timed, not
// which problem: an application that leaves it out gets the exact rung, for
// the count measured; one that asks for another count gets the same plan with
// the time scaled by asked / measured.
TEST_F(SelectorTest, IterationCountsScaleTheTimeNotTheAnswer) {
    std::string line;
    std::getline(std::ifstream(file("runs.jsonl")), line);
    const json here = json::parse(line);
    const json measured{{"kind", "krylov"}, {"size", {16, 16, 16}}, {"operator", "poisson7"},
                        {"precision", "double"}, {"iterations", {50}}, {"ranks", 2}};
    auto record = [&](const std::string& format, double ms) {
        const json c{{"solver", "cg"}, {"format", format}, {"fusion", "none"}, {"preconditioner", "none"},
                     {"backend", "fftw"}, {"halo", "sendrecv"}};
        json r{{"schema", "fftune.result/1"}, {"status", "ok"}, {"problem", measured}, {"config", c},
               {"key", family_named("krylov").config_key(c)},
               {"validation", {{"passed", true}, {"max_rel_error", 1e-12}}},
               {"timing", {{"total", {{"median", ms}, {"ci99", {ms, ms}}}}, {"phases", json::object()}}}};
        r["machine"] = here.at("machine"), r["provenance"] = here.at("provenance");
        return r;
    };
    std::ofstream(file("krylov.jsonl")) << record("ell", 3.0).dump() << "\n" << record("csr", 2.0).dump() << "\n";
    EXPECT_EQ(Database(file("krylov.sqlite"), false).ingest({file("krylov.jsonl")}).added, 2);
    const SelectOptions db{file("krylov.sqlite"), ""};

    json asked{{"kind", "krylov"}, {"size", {16, 16, 16}}, {"ranks", 2}};
    const Selection any = select(complete_problem(family_named("krylov"), asked), db);
    EXPECT_EQ(any.rung, "exact") << any.reason;
    EXPECT_EQ(any.key, "cg/csr/none/none/fftw");
    EXPECT_EQ(any.expected_ms, 2.0);
    EXPECT_NE(any.reason.find("for 50 iterations as measured"), std::string::npos) << any.reason;

    asked["iterations"] = {1000};
    const Selection more = select(complete_problem(family_named("krylov"), asked), db);
    EXPECT_EQ(more.rung, "exact") << more.reason;
    EXPECT_EQ(more.key, "cg/csr/none/none/fftw");
    EXPECT_EQ(more.expected_ms, 40.0);
    EXPECT_NE(more.reason.find("measured at 50 iterations, the time scaled to 1000"), std::string::npos) << more.reason;

    asked["iterations"] = {50};
    const Selection same = select(complete_problem(family_named("krylov"), asked), db);
    EXPECT_EQ(same.expected_ms, 2.0);
    EXPECT_EQ(same.reason, "fastest of 2 validated configurations measured for this problem");

    // At another size the nearest rung scales by the work, iterations included.
    asked["size"] = {32, 32, 32};
    asked["iterations"] = {100};
    const Selection bigger = select(complete_problem(family_named("krylov"), asked), db);
    EXPECT_EQ(bigger.rung, "nearest") << bigger.reason;
    EXPECT_DOUBLE_EQ(*bigger.expected_ms, 2.0 * 8 * 2);

    // At another rank count with no count asked: the measured count, so the
    // per-rank work compares like with like (same points per rank: the same time).
    json wider{{"kind", "krylov"}, {"size", {16, 16, 32}}, {"ranks", 4}};
    const Selection other = select(complete_problem(family_named("krylov"), wider), db);
    EXPECT_EQ(other.rung, "per_rank_size") << other.reason;
    EXPECT_DOUBLE_EQ(*other.expected_ms, 2.0);
    EXPECT_NE(other.reason.find("for 50 iterations as measured"), std::string::npos) << other.reason;
}

TEST_F(SelectorTest, PencilGridsAreReDerivedForTheNewRankCount) {
    const Problem measured{"fft3d", {32, 32, 32}, Precision::double_, Direction::forward, 4};
    std::ofstream(file("pencil.jsonl"))
        << synthetic_record(measured, {"fftw", "pencil", LayoutVariant::default_, {2, 2}, {"a2a_sync", "p2p_sync"}, false}, 1.0).dump()
        << "\n"
        << synthetic_record(measured, {"fftw", "slab_2d1d", LayoutVariant::default_, {4, 1}, {"a2a_sync"}, false}, 2.0).dump() << "\n";
    Database(file("pencil.sqlite"), false).ingest({file("pencil.jsonl")});
    // 64x32x32 at 8 ranks: the same 8192 points per rank.
    const Problem p{"fft3d", {64, 32, 32}, Precision::double_, Direction::forward, 8};
    const Selection s = select(p, {file("pencil.sqlite"), "synthetic"});
    EXPECT_EQ(s.rung, "per_rank_size") << s.reason;
    EXPECT_EQ(s.key, "fftw/pencil/default/4x2/a2a_sync+p2p_sync/host");  // 2x2 -> the squarest grids of 8, P1 >= P2
    EXPECT_NE(s.reason.find("process grid 2x2 re-derived as 4x2 for 8 ranks"), std::string::npos) << s.reason;
    EXPECT_DOUBLE_EQ(*s.expected_ms, 1.0);
    // Half the points per rank at 2 ranks: the closest measured per-rank size, time scaled.
    const Problem half{"fft3d", {32, 32, 16}, Precision::double_, Direction::forward, 2};
    const Selection h = select(half, {file("pencil.sqlite"), "synthetic"});
    EXPECT_EQ(h.rung, "per_rank_size") << h.reason;
    EXPECT_DOUBLE_EQ(h.distance, 0);
    EXPECT_EQ(h.config.at("process_grid"), json::array({2, 1}));
    // A rank count whose grids cannot hold the problem falls through: 64 ranks > Nx * Ny = 4.
    const Problem tiny{"fft3d", {2, 2, 64}, Precision::double_, Direction::forward, 64};
    EXPECT_NE(select(tiny, {file("pencil.sqlite"), "synthetic"}).rung, "per_rank_size");
}

TEST_F(SelectorTest, AdaptToRanksKeepsMethodsAndReFactorsGrids) {
    const Config pencil{"fftw", "pencil", LayoutVariant::realigned, {4, 2}, {"a2a_sync", "p2p_sync"}, false};
    const auto two = adapt_to_ranks(pencil, 2);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].process_grid, (std::array<int, 2>{2, 1}));  // same aspect P1 > P2 first
    EXPECT_EQ(two[0].redistribution, pencil.redistribution);
    EXPECT_EQ(two[0].layout, LayoutVariant::realigned);
    const auto slab = adapt_to_ranks({"fftw", "slab_1d2d", LayoutVariant::default_, {4, 1}, {"p2p_sync"}, false}, 6);
    ASSERT_EQ(slab.size(), 1u);
    EXPECT_EQ(slab[0].process_grid, (std::array<int, 2>{6, 1}));
    EXPECT_TRUE(adapt_to_ranks({"fftw", "no_such_decomposition", LayoutVariant::default_, {1, 1}, {}, false}, 2).empty());
}

TEST_F(SelectorTest, ProbeOnlyDatabaseAnswersWithTheModel) {
    // Real probe records of this machine at one rank (FFT rates only: no peers).
    ProbeOptions o;
    o.bytes_per_peer = {8};
    o.fft_lengths = {4, 8, 16};
    o.fft_points = 256;
    o.backends = {"fftw"};
    o.warmup = 1;
    o.iterations = 3;
    std::ofstream out(file("probe.jsonl"));
    ASSERT_EQ(run_probe(MPI_COMM_SELF, o, [&](const json& r) { out << r.dump() << "\n"; }), 0);
    out.close();
    Database(file("probe.sqlite"), false).ingest({file("probe.jsonl")});
    const Problem p{"fft3d", {12, 10, 14}, Precision::single, Direction::inverse, 1};  // never measured
    Selection s = select(p, {file("probe.sqlite"), ""});
    EXPECT_EQ(s.rung, "model") << s.reason;
    ASSERT_TRUE(s.expected_ms);
    EXPECT_GT(*s.expected_ms, 0);
    EXPECT_FALSE(check_applicable(p, s.config.get<Config>())) << s.key;
    EXPECT_NE(s.reason.find("fft fftw/single: probe at 1 ranks"), std::string::npos) << s.reason;
    // More ranks need exchange calibrations: a probe at 2 ranks of a2a_sync (synthetic, exact).
    std::ofstream ex(file("exchange.jsonl"));
    for (long long m : {8ll, 4096ll, 1ll << 20}) {
        const double t = 0.01 + m * 1e-6;
        std::ifstream in(file("probe.jsonl"));
        std::string first;
        std::getline(in, first);
        const json r = json::parse(first);  // this machine and software, as the real probe recorded them
        ex << json{{"schema", "fftune.probe/1"}, {"kind", "probe"}, {"probe", "exchange"}, {"status", "ok"}, {"backend", "fftw"}, {"transport", "a2a_sync"},
                   {"world", 2}, {"peers", 2}, {"groups", 1}, {"bytes_per_peer", m}, {"validation", {{"passed", true}}},
                   {"timing", {{"total", {{"median", t}, {"ci99", {t, t}}}}}}, {"machine", r["machine"]},
                   {"provenance", r["provenance"]}}.dump()
           << "\n";
    }
    ex.close();
    EXPECT_EQ(Database(file("probe.sqlite"), false).ingest({file("exchange.jsonl")}).added, 3);
    const Problem wide{"fft3d", {64, 64, 64}, Precision::single, Direction::forward, 4};
    s = select(wide, {file("probe.sqlite"), ""});
    EXPECT_EQ(s.rung, "model") << s.reason;
    EXPECT_FALSE(check_applicable(wide, s.config.get<Config>())) << s.key;
    EXPECT_NE(s.reason.find("a2a_sync: probe at 2 ranks"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("probe records, 0 measurements"), std::string::npos) << s.reason;
}

TEST_F(SelectorTest, NoMatchingMeasurementGivesTheDefaultWithItsReason) {
    Problem p = problem;
    p.precision = Precision::single;
    Selection s = select(p, {file("db.sqlite"), ""});
    EXPECT_EQ(s.rung, "default");
    EXPECT_NE(s.reason.find("no validated fft3d measurement of a single forward problem"), std::string::npos) << s.reason;
    EXPECT_EQ(s.key, default_config(p).key());
    // A database of another machine: the reason names it.
    s = select(problem, {file("db.sqlite"), "another-machine"});
    EXPECT_EQ(s.rung, "default");
    EXPECT_NE(s.reason.find("other machines only"), std::string::npos) << s.reason;
    // Missing and corrupt files: the default, never an exception.
    EXPECT_EQ(select(problem, {file("nope.sqlite"), ""}).rung, "default");
    std::ofstream(file("bad.sqlite")) << "garbage garbage garbage garbage garbage garbage garbage garbage";
    s = select(problem, {file("bad.sqlite"), ""});
    EXPECT_EQ(s.rung, "default");
    EXPECT_NE(s.reason.find("bad.sqlite"), std::string::npos) << s.reason;
}

TEST_F(SelectorTest, DefaultConfigurationsApply) {
    for (int p : {1, 2, 3, 4, 8})
        for (const std::array<index_t, 3> n : {std::array<index_t, 3>{64, 64, 64}, {2, 64, 64}}) {
            const Problem q{"fft3d", n, Precision::double_, Direction::forward, p};
            EXPECT_FALSE(check_applicable(q, default_config(q))) << default_config(q).key() << " " << p;
        }
}

TEST_F(SelectorTest, MakePlanBuildsTheSelectedPlan) {
    Selection why;
    auto plan = make_plan(MPI_COMM_SELF, problem, {file("db.sqlite"), ""}, &why);
    EXPECT_EQ(plan->config().key(), why.key);
    EXPECT_EQ(why.rung, "exact");
    // JSON round trip (what rank 0 broadcasts).
    const Selection back = json(why).get<Selection>();
    EXPECT_EQ(back.key, why.key);
    EXPECT_EQ(back.rung, why.rung);
    EXPECT_EQ(back.expected_ms, why.expected_ms);
}

}  // namespace
}  // namespace fftune
