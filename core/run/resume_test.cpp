// A result file is continued only when it is this testcase's: records of
// another testcase, a damaged line or a point recorded twice are refused,
// naming the file and the line; a torn last line is not.
#include "core/run/resume.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/run/runner.hpp"
#include "core/run/testcase.hpp"

namespace fftune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Fixture {
    fs::path file = fs::temp_directory_path() / ("fftune_resume_test_" + std::to_string(getpid()) + ".jsonl");
    Testcase tc = parse_testcase(json{{"name", "t"}, {"problem", "fft3d"}, {"sizes", json::array({json::array({8, 6, 5})})},
                                      {"ranks", 1}, {"decomposition", "reference_3d"}, {"layout", "default"}, {"direction", "all"}},
                                 "t.json");
    std::vector<Point> points = tc.points(1);
    ~Fixture() { fs::remove(file); }
    json record(int i) const { return died_point_record(points.at(i), "test"); }
    void write(const std::string& text) const { std::ofstream(file) << text; }
};

void expect_refused(const Fixture& f, std::initializer_list<std::string> fragments) {
    try {
        read_stored(f.file.string(), f.points);
        ADD_FAILURE() << "accepted";
    } catch (const ResumeError& e) {
        for (const auto& s : fragments) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
    }
}

TEST(Resume, ContinuesAfterTheLastStoredRecord) {
    Fixture f;
    ASSERT_EQ(f.points.size(), 2u);
    EXPECT_EQ(read_stored(f.file.string(), f.points).next, 0);  // no file
    f.write(f.record(0).dump() + "\n");
    const auto stored = read_stored(f.file.string(), f.points);
    EXPECT_EQ(stored.next, 1);
    EXPECT_EQ(stored.records.size(), 1u);
    f.write(f.record(0).dump() + "\n" + f.record(1).dump() + "\n" + R"({"point_ind)");  // a torn last line
    EXPECT_EQ(read_stored(f.file.string(), f.points).next, 2);
}

TEST(Resume, RecordsOfAnotherTestcaseAreRefused) {
    Fixture f;
    json other = f.record(1);
    other["key"] = "fftw/slab_2d1d/default/1x1/a2a_sync/host";
    f.write(f.record(0).dump() + "\n" + other.dump() + "\n");
    expect_refused(f, {f.file.string() + " line 2", "another testcase", "--fresh"});
    json beyond = f.record(1);
    beyond["point_index"] = 7;
    f.write(beyond.dump() + "\n");
    expect_refused(f, {"line 1: a record of point 7", "this testcase has 2 points"});
    json bigger = f.record(0);
    bigger["problem"]["sizes"] = json::array({16, 6, 5});
    f.write(bigger.dump() + "\n");
    expect_refused(f, {"line 1", "another testcase"});
}

TEST(Resume, APointRecordedTwiceIsRefused) {
    Fixture f;
    f.write(f.record(0).dump() + "\n" + f.record(0).dump() + "\n");
    expect_refused(f, {"line 2: a second record of point 1 (the first is line 1)"});
}

TEST(Resume, ADamagedLineBeforeTheLastIsRefused) {
    Fixture f;
    f.write(f.record(0).dump() + "\n" + std::string(20, '\0') + "\n" + f.record(1).dump() + "\n");
    expect_refused(f, {"line 2: not a JSON record"});
}

}  // namespace
}  // namespace fftune
