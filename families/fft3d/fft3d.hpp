// The fft3d family: distributed 3D real-to-complex FFTs on the engine
// (core/engine/), every decomposition x layout x redistribution x process grid
// (README.md beside this file).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/config.hpp"
#include "core/run/engine_axes.hpp"
#include "core/run/family.hpp"
#include "core/run/testcase.hpp"

namespace fftune {

// An fft3d testcase's axes (testcases/README.md): the problem's, and the
// engine's (core/run/engine_axes.hpp).
struct Fft3dAxes : FamilyAxes, EngineAxes {
    std::vector<std::array<index_t, 3>> sizes;
    std::vector<Precision> precisions;
    std::vector<Direction> directions;
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

}  // namespace fftune
