// The fft3d family: distributed 3D real-to-complex FFTs on the engine
// (core/engine/), every decomposition x layout x redistribution x process grid
// (README.md beside this file).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/config.hpp"
#include "core/run/family.hpp"
#include "core/run/testcase.hpp"

namespace fftune {

// Most chunks an overlapped FFT stage may be split into.
inline constexpr int max_overlap_chunks = 64;

// An fft3d testcase's axes (testcases/README.md).
struct Fft3dAxes : FamilyAxes {
    std::vector<std::array<index_t, 3>> sizes;
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
    std::vector<bool> fft_stores_kept{false};  // Config::fft_stores_kept
};

// The axes of an fft3d testcase (throws std::invalid_argument for another family's).
const Fft3dAxes& fft3d_axes(const Testcase& tc);
const Fft3dAxes& fft3d_axes(const FamilyAxes& axes);

// A point's problem and configuration as the engine takes them.
Problem fft3d_problem(const Point& point);
Config fft3d_config(const Point& point);
// The point of `problem` solved by `config` (its index 0).
Point fft3d_point(const Problem& problem, const Config& config);

// A point built field by field (tests, examples); converts to its Point.
struct Fft3dPoint {
    Problem problem;
    Config config;
    operator Point() const { return fft3d_point(problem, config); }
};

// The documented default configuration for a problem (tuner/README.md).
Config default_config(const Problem& problem);
// A measured configuration re-derived for `ranks`: slabs take P x 1; pencils
// every grid of `ranks`, the aspect P1/P2 nearest the measured one first
// (equally near: P1 >= P2 first). Method and layout are kept; callers check
// which candidate applies.
std::vector<Config> adapt_to_ranks(const Config& config, int ranks);

}  // namespace fftune
