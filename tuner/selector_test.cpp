// Selector rungs on a database filled by real runs of this machine: exact,
// stale (software changed), nearest, default; foreign and broken databases
// fall back to the default with the reason; rank 0's answer reaches all ranks.
#include "tuner/selector.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/provenance.hpp"
#include "core/runner.hpp"

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
            Point pt;
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
    EXPECT_EQ(s.config.key(), w->best.key);
    ASSERT_TRUE(s.expected_ms);
    EXPECT_DOUBLE_EQ(*s.expected_ms, w->best.median_ms);
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
    EXPECT_EQ(s.measured_problem->size, problem.size);
    EXPECT_NEAR(s.distance, std::log2(20.0 / 16) + std::log2(10.0 / 8), 1e-12);
    EXPECT_FALSE(check_applicable(p, s.config));
}

TEST_F(SelectorTest, NoMatchingMeasurementGivesTheDefaultWithItsReason) {
    Problem p = problem;
    p.precision = Precision::single;
    Selection s = select(p, {file("db.sqlite"), ""});
    EXPECT_EQ(s.rung, "default");
    EXPECT_NE(s.reason.find("no validated measurement"), std::string::npos) << s.reason;
    EXPECT_EQ(s.config.key(), default_config(p).key());
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
    EXPECT_EQ(plan->config().key(), why.config.key());
    EXPECT_EQ(why.rung, "exact");
    // JSON round trip (what rank 0 broadcasts).
    const Selection back = json(why).get<Selection>();
    EXPECT_EQ(back.config.key(), why.config.key());
    EXPECT_EQ(back.rung, why.rung);
    EXPECT_EQ(back.expected_ms, why.expected_ms);
}

}  // namespace
}  // namespace fftune
