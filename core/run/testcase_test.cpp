#include "core/run/testcase.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "families/fft3d/fft3d.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

json minimal() { return json{{"name", "t"}, {"problem", "fft3d"}, {"sizes", 8}, {"ranks", 2}}; }

// Expects parsing to fail with a message containing every fragment.
void expect_error(const json& j, std::initializer_list<std::string> fragments) {
    try {
        parse_testcase(j, "tc.json");
        ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const TestcaseError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("tc.json"), std::string::npos) << msg;
        for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "missing '" << f << "' in: " << msg;
    }
}

json with(json j, const std::string& key, json value) {
    j[key] = std::move(value);
    return j;
}

TEST(Testcase, DefaultsFollowTheSchema) {
    const Testcase tc = parse_testcase(minimal(), "tc.json");
    const Fft3dAxes& axes = fft3d_axes(tc);
    EXPECT_EQ(tc.problem, "fft3d");
    EXPECT_EQ(axes.sizes, (std::vector<std::array<index_t, 3>>{{8, 8, 8}}));
    EXPECT_EQ(tc.warmup, 10);
    EXPECT_EQ(tc.iterations, 20);
    EXPECT_TRUE(tc.validate);
    EXPECT_EQ(tc.point_timeout_s, 1800);
    EXPECT_EQ(parse_testcase(with(minimal(), "point_timeout_s", 0.5), "tc.json").point_timeout_s, 0.5);
    EXPECT_EQ(parse_testcase(with(minimal(), "point_timeout_s", 0), "tc.json").point_timeout_s, 0);  // no limit
    EXPECT_EQ(axes.precisions, std::vector<Precision>{Precision::double_});
    EXPECT_EQ(axes.layouts.size(), 2u);  // default "all"
    EXPECT_EQ(axes.decompositions, Registry<Decomposition>::instance().names());  // default "all"
    EXPECT_EQ(axes.redistribution.front(), Registry<Transport>::instance().names());
    EXPECT_EQ(tc.launcher, "mpirun");
}

TEST(Testcase, AxesAcceptValueListAndAll) {
    json j = minimal();
    j["precision"] = "all";
    j["direction"] = json::array({"inverse"});
    j["decomposition"] = "pencil";
    j["redistribution_phases"] = json::array({"a2a_sync", json::array({"p2p_sync", "p2p_streams"})});
    j["process_grid"] = json::array({json::array({2, 1}), json::array({1, 2})});
    j["sizes"] = json::array({json::array({9, 10, 11})});
    const Testcase tc = parse_testcase(j, "tc.json");
    const Fft3dAxes& axes = fft3d_axes(tc);
    EXPECT_EQ(axes.precisions.size(), 2u);
    EXPECT_EQ(axes.directions, std::vector<Direction>{Direction::inverse});
    // 2 layouts x 2 grids x (1 x 2 methods) x 2 precisions x 1 direction
    const auto pts = tc.points(2);
    ASSERT_EQ(pts.size(), 16u);
    for (const auto& p : pts) {
        EXPECT_EQ(p.config.at("redistribution").size(), 2u);
        EXPECT_EQ(p.config.at("redistribution")[0], "a2a_sync");
        EXPECT_EQ(p.ranks(), 2);
        EXPECT_EQ(p.problem.at("size"), json::array({9, 10, 11}));
        EXPECT_EQ(p.key, fft3d_config(p).key());
    }
}

TEST(Testcase, OneRedistributionAxisUsesEachMethodInEveryPhase) {
    json j = minimal();
    j["decomposition"] = "pencil";
    j["layout"] = "default";
    j["redistribution"] = json::array({"a2a_sync", "p2p_sync"});
    const auto pts = parse_testcase(j, "tc.json").points(2);
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_EQ(pts[0].config.at("redistribution"), json::array({"a2a_sync", "a2a_sync"}));
    EXPECT_EQ(pts[1].config.at("redistribution"), json::array({"p2p_sync", "p2p_sync"}));
    j.erase("redistribution");  // with both, one would be dropped: refused (TestcaseErrors.BadPhases)
    j["redistribution_phases"] = json::array({json::array({"a2a_sync", "p2p_sync"}), "all"});
    EXPECT_EQ(parse_testcase(j, "tc.json").points(2).size(), 2 * Registry<Transport>::instance().names().size());
}

TEST(Testcase, OverlapAxisMultipliesThePoints) {
    json j = minimal();
    j["decomposition"] = "slab_2d1d";
    j["layout"] = "default";
    j["redistribution"] = "a2a_sync";
    const auto plain = parse_testcase(j, "tc.json").points(2);
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].config.value("overlap", 1), 1);  // default: no overlap
    j["overlap"] = json::array({1, 4});
    const auto pts = parse_testcase(j, "tc.json").points(2);
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_EQ(pts[0].config.value("overlap", 1), 1);
    EXPECT_EQ(pts[1].config.value("overlap", 1), 4);
    EXPECT_EQ(pts[1].index, 1);
    j["overlap"] = 3;
    EXPECT_EQ(fft3d_axes(parse_testcase(j, "tc.json")).overlap, std::vector<int>{3});
}

TEST(Testcase, KeptBlockAxisMultipliesThePoints) {
    json j = minimal();
    j["decomposition"] = "slab_2d1d";
    j["layout"] = "default";
    j["redistribution"] = "a2a_sync";
    EXPECT_FALSE(parse_testcase(j, "tc.json").points(2)[0].config.value("fft_stores_kept", false));
    // Named, both values make points (true is skipped where the backend cannot store aside).
    j["fft_stores_kept"] = json::array({false, true});
    const auto pts = parse_testcase(j, "tc.json").points(2);
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_FALSE(pts[0].config.value("fft_stores_kept", false));
    EXPECT_TRUE(pts[1].config.value("fft_stores_kept", false));
    // "all": true only where it applies (left_out_by_all).
    j["fft_stores_kept"] = "all";
    const bool can = !Registry<Backend>::instance().create("fftw")->store_aside_unavailable();
    EXPECT_EQ(parse_testcase(j, "tc.json").points(2).size(), can ? 2u : 1u);
    expect_error(with(minimal(), "fft_stores_kept", "sometimes"), {"/fft_stores_kept", "boolean"});
}

TEST(Testcase, SlabsUsePx1AndPencilAllGrids) {
    json j = minimal();
    j["process_grid"] = "all";
    j["decomposition"] = json::array({"slab_2d1d", "slab_1d2d", "pencil"});
    j["redistribution"] = "p2p_sync";
    j["layout"] = "default";
    const Testcase tc = parse_testcase(j, "tc.json");
    int pencil = 0;
    for (const auto& p : tc.points(4)) {
        if (p.config.at("decomposition") == "pencil") ++pencil;
        else EXPECT_EQ(p.config.at("process_grid"), json::array({4, 1}));
    }
    EXPECT_EQ(pencil, 3);  // 1x4, 2x2, 4x1
}

TEST(Testcase, AutoGridIsMostSquare) {
    EXPECT_EQ(auto_grid(1), (std::array<int, 2>{1, 1}));
    EXPECT_EQ(auto_grid(6), (std::array<int, 2>{3, 2}));
    EXPECT_EQ(auto_grid(7), (std::array<int, 2>{7, 1}));
    EXPECT_EQ(all_grids(6).size(), 4u);
}

TEST(TestcaseErrors, NotAnObject) { expect_error(json::array(), {"JSON object"}); }
TEST(TestcaseErrors, UnknownKey) { expect_error(with(minimal(), "iteratons", 3), {"/iteratons", "unknown key", "iterations"}); }
TEST(TestcaseErrors, MissingKeys) {
    for (const char* key : {"name", "problem", "sizes", "ranks"}) {
        json j = minimal();
        j.erase(key);
        expect_error(j, {std::string("/") + key, "missing"});
    }
}
TEST(TestcaseErrors, EmptyName) { expect_error(with(minimal(), "name", ""), {"/name"}); }
TEST(TestcaseErrors, UnknownProblem) { expect_error(with(minimal(), "problem", "fft2d"), {"/problem", "'fft2d'", "fft3d"}); }
TEST(TestcaseErrors, UnknownAxisValues) {
    expect_error(with(minimal(), "precision", "half"), {"/precision", "'half'", "single, double"});
    expect_error(with(minimal(), "direction", json::array({"forward", "sideways"})), {"/direction/1", "'sideways'", "inverse"});
    // (CUDA builds also list reference_cufftxt)
    expect_error(with(minimal(), "decomposition", "pencill"), {"/decomposition", "'pencill'", "pencil, reference_3d, ", "slab_1d2d, slab_2d1d"});
    expect_error(with(minimal(), "layout", "transposed"), {"/layout", "'transposed'", "default, realigned"});
    expect_error(with(minimal(), "redistribution", "mpi_magic"), {"/redistribution", "'mpi_magic'", "a2a_sync"});
    expect_error(with(minimal(), "backend", "rocfft"), {"/backend", "'rocfft'", "fftw"});
    expect_error(with(minimal(), "precision", 3), {"/precision", "not a string"});
    expect_error(with(minimal(), "layout", json::array({"default", "default"})), {"/layout/1", "twice"});
}
TEST(TestcaseErrors, EmptyLists) {
    expect_error(with(minimal(), "precision", json::array()), {"/precision", "empty list"});
    expect_error(with(minimal(), "sizes", json::array()), {"/sizes", "empty list"});
    expect_error(with(minimal(), "ranks", json::array()), {"/ranks", "empty list"});
}
TEST(TestcaseErrors, ImpossibleSizes) {
    expect_error(with(minimal(), "sizes", 0), {"/sizes", "out of range"});
    expect_error(with(minimal(), "sizes", json::array({json::array({8, -1, 8})})), {"/sizes/0/1", "-1", "out of range"});
    expect_error(with(minimal(), "sizes", json::array({json::array({8, 8})})), {"/sizes/0", "[8,8]", "[Nx, Ny, Nz]"});
    expect_error(with(minimal(), "sizes", "big"), {"/sizes", "\"big\""});
    expect_error(with(minimal(), "sizes", json::array({json::array({1 << 20, 1 << 20, 1 << 20})})), {"/sizes/0", "2^40"});
    expect_error(with(minimal(), "sizes", 8.5), {"/sizes", "8.5"});
}
TEST(TestcaseErrors, BadRanks) {
    expect_error(with(minimal(), "ranks", 0), {"/ranks", "out of range"});
    expect_error(with(minimal(), "ranks", json::array({1, "two"})), {"/ranks/1", "not an integer"});
    expect_error(with(minimal(), "ranks", json::array({2, 1, 2})), {"/ranks/2", "2 appears twice"});
}
TEST(TestcaseErrors, BadProcessGrid) {
    expect_error(with(minimal(), "process_grid", "square"), {"/process_grid", "\"auto\", \"all\""});
    expect_error(with(minimal(), "process_grid", json::array({json::array({2})})), {"/process_grid/0", "[P1, P2]"});
    expect_error(with(minimal(), "process_grid", json::array({json::array({2, 0})})), {"/process_grid/0/1", "out of range"});
    expect_error(with(minimal(), "process_grid", json::array({json::array({3, 1})})), {"/process_grid/0", "3x1", "/ranks"});
}
TEST(TestcaseErrors, BadPhases) {
    expect_error(with(minimal(), "redistribution_phases", json::array({"a2a_sync"})), {"/redistribution_phases", "two"});
    expect_error(with(minimal(), "redistribution_phases", json::array({"a2a_sync", "nope"})), {"/redistribution_phases/1", "'nope'"});
    // Both axes: one would be dropped.
    expect_error(with(with(minimal(), "redistribution", "a2a_sync"), "redistribution_phases",
                      json::array({"p2p_sync", "a2a_sync"})),
                 {"/redistribution_phases: given together with /redistribution \"a2a_sync\"", "allowed: one of them"});
}
TEST(TestcaseErrors, SizesBeyondTheIntegerRangeKeepTheirSign) {
    // 2^63 is read as an unsigned integer; as long long it would wrap to -2^63.
    expect_error(with(minimal(), "sizes", json::array({json::array({8, 9223372036854775808ull, 8})})),
                 {"/sizes/0/1: 9223372036854775808 is out of range (allowed: 1 to 1073741824)"});
    expect_error(with(minimal(), "sizes", 18446744073709551615ull), {"/sizes: 18446744073709551615 is out of range"});
    expect_error(with(minimal(), "ranks", 9223372036854775808ull), {"/ranks: 9223372036854775808 is out of range"});
    // Three extents of 2^30: 2^90 points, which wrap to 0 in 64 bits.
    expect_error(with(minimal(), "sizes", json::array({json::array({1 << 30, 1 << 30, 1 << 30})})),
                 {"/sizes/0: 1073741824x1073741824x1073741824 has more than 2^40 points"});
}
TEST(TestcaseErrors, BadScalars) {
    expect_error(with(minimal(), "warmup", -1), {"/warmup", "out of range"});
    expect_error(with(minimal(), "iterations", 0), {"/iterations", "out of range"});
    expect_error(with(minimal(), "validate", "yes"), {"/validate", "boolean"});
    expect_error(with(minimal(), "gpu_aware", "maybe"), {"/gpu_aware", "boolean"});
    expect_error(with(minimal(), "gpu_aware", json::array({true, 1})), {"/gpu_aware/1", "boolean"});
    expect_error(with(minimal(), "overlap", 0), {"/overlap", "out of range"});
    expect_error(with(minimal(), "overlap", json::array({2, 65})), {"/overlap/1", "65 chunks", "1 to 64"});
    expect_error(with(minimal(), "overlap", json::array()), {"/overlap", "empty"});
    expect_error(with(minimal(), "overlap", "yes"), {"/overlap", "not an integer"});
    for (const json& bad : {json(-1), json("30"), json(true)})
        expect_error(with(minimal(), "point_timeout_s", bad),
                     {"/point_timeout_s", bad.dump() + " is not allowed", "a number > 0, or 0 for no limit"});
}
TEST(TestcaseErrors, BadLauncher) {
    expect_error(with(minimal(), "launcher", "srun"), {"/launcher", "object"});
    expect_error(with(minimal(), "launcher", json{{"command", ""}}), {"/launcher/command"});
    expect_error(with(minimal(), "launcher", json{{"args", json::array({1})}}), {"/launcher/args/0"});
    expect_error(with(minimal(), "launcher", json{{"cmd", "srun"}}), {"/launcher/cmd", "unknown key"});
}

TEST(TestcaseFile, MalformedJsonAndMissingFile) {
    const auto path = std::filesystem::temp_directory_path() / "fftune_malformed_testcase.json";
    std::ofstream(path) << "{\"name\": \"t\", \"sizes\": [8,}";
    try {
        load_testcase(path.string());
        ADD_FAILURE() << "malformed JSON accepted";
    } catch (const TestcaseError& e) {
        EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
    EXPECT_THROW(load_testcase("/nonexistent/fftune.json"), TestcaseError);
}

// What a file holds that its parsed JSON cannot show: errors with their JSON path.
void expect_file_error(const std::string& text, const std::string& fragment) {
    const auto path = std::filesystem::temp_directory_path() / "fftune_strict_testcase.json";
    std::ofstream(path) << text;
    try {
        load_testcase(path.string());
        ADD_FAILURE() << "accepted: " << text;
    } catch (const TestcaseError& e) {
        EXPECT_NE(std::string(e.what()).find(path.string() + ": " + fragment), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

TEST(TestcaseFile, DuplicateKeysAreRefusedWithTheirPath) {
    const std::string head = R"({"name": "t", "problem": "fft3d", "ranks": 2, )";
    expect_file_error(head + R"("sizes": 8, "iterations": 5, "iterations": 50})",
                      "/iterations: the key 'iterations' appears twice in one object (JSON would keep only the last)");
    expect_file_error(head + R"("sizes": 8, "launcher": {"command": "srun", "args": [], "command": "mpirun"}})",
                      "/launcher/command: the key 'command' appears twice");
    // In an object inside a list: the list's index is in the path; keys are escaped as in JSON pointers.
    expect_file_error(R"([1, {"a/b": 1, "a/b": 2}])", "/1/a~1b: the key 'a/b' appears twice");
    // The same key in two objects is no duplicate.
    const auto path = std::filesystem::temp_directory_path() / "fftune_strict_testcase.json";
    std::ofstream(path) << head + R"("sizes": 8, "launcher": {"command": "srun"}, "description": "command"})";
    EXPECT_EQ(load_testcase(path.string()).launcher, "srun");
    std::filesystem::remove(path);
}

TEST(TestcaseFile, NumbersBeyondADoubleAreRefusedWithTheirPathAndSign) {
    const std::string head = R"({"name": "t", "problem": "fft3d", "ranks": 2, )";
    expect_file_error(head + R"("sizes": [[8, 1e999, 8]]})",
                      "/sizes/0/1: 1e999 is out of range (allowed: numbers within +-1.8e308)");
    expect_file_error(head + R"("sizes": 8, "point_timeout_s": -1e999})", "/point_timeout_s: -1e999 is out of range");
    expect_file_error(head + R"("sizes": [[8, 9223372036854775808, 8]]})",
                      "/sizes/0/1: 9223372036854775808 is out of range (allowed: 1 to 1073741824)");
    expect_file_error(head + R"("sizes": [8,})", "malformed JSON: ");
}

// A FIFO would block the read until a writer came: refused at once.
TEST(TestcaseFile, AFifoOrDirectoryIsRefused) {
    const auto fifo = std::filesystem::temp_directory_path() / ("fftune_fifo_testcase_" + std::to_string(getpid()));
    std::filesystem::remove(fifo);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    try {
        load_testcase(fifo.string());
        ADD_FAILURE() << "a FIFO was read as a testcase";
    } catch (const TestcaseError& e) {
        EXPECT_NE(std::string(e.what()).find(fifo.string() + ": not a regular file (a FIFO)"), std::string::npos)
            << e.what();
    }
    std::filesystem::remove(fifo);
    try {
        load_testcase(std::filesystem::temp_directory_path().string());
        ADD_FAILURE() << "a directory was read as a testcase";
    } catch (const TestcaseError& e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file (a directory)"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace fftune
