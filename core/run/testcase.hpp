// Testcase: a JSON file naming axes whose product is the set of configurations
// to run (documented in testcases/README.md). Parsing validates everything
// before any run; errors name the JSON path, the bad value and what is allowed.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/config.hpp"

namespace fftune {

struct TestcaseError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Most chunks an overlapped FFT stage may be split into.
inline constexpr int max_overlap_chunks = 64;

struct Point {
    int index = 0;  // position among the points of the same rank count
    Problem problem;
    Config config;
};

struct Testcase {
    std::string name;
    std::string problem = "fft3d";
    std::vector<std::array<index_t, 3>> sizes;
    std::vector<int> ranks;
    std::vector<Precision> precisions;
    std::vector<Direction> directions;
    std::vector<std::string> decompositions;
    std::vector<LayoutVariant> layouts;
    // One axis: each method for every phase; two axes (redistribution_phases): their product.
    std::vector<std::vector<std::string>> redistribution;
    enum class GridMode { automatic, all, list } grid_mode = GridMode::automatic;
    std::vector<std::array<int, 2>> grids;
    std::vector<std::string> backends;
    std::vector<bool> gpu_aware;
    std::vector<int> overlap{1};  // chunk counts (Config::overlap); 1: none
    int warmup = 10;
    int iterations = 20;
    bool validate = true;
    // A point still running after this long ends its job (core/run/point_watchdog.hpp); 0: no limit.
    double point_timeout_s = 1800;
    std::string launcher = "mpirun";
    std::vector<std::string> launcher_args;

    // All points for jobs of `ranks` ranks, in a fixed order.
    std::vector<Point> points(int ranks) const;
};

// `source` names the file in error messages.
Testcase parse_testcase(const nlohmann::json& j, const std::string& source);
Testcase load_testcase(const std::string& path);

// Process grids P1 x P2 = p: "auto" picks the most square one with P1 >= P2.
std::array<int, 2> auto_grid(int p);
std::vector<std::array<int, 2>> all_grids(int p);

}  // namespace fftune
