// The engine's testcase axes (testcases/README.md): decomposition, layout,
// redistribution (one axis for every phase, or redistribution_phases), process
// grid, backend, gpu_aware, overlap, overlap_slices, exchange_parts and fft_stores_kept. Every family whose
// points run the distributed FFT reads them here (fft3d, poisson's padded
// transform, convolution), so that families need not include each other.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/config.hpp"
#include "core/run/testcase_parser.hpp"

namespace fftune {

// Most chunks an overlapped FFT stage may be split into.
inline constexpr int max_overlap_chunks = 64;

struct EngineAxes {
    std::vector<std::string> decompositions;
    std::vector<LayoutVariant> layouts;
    // One axis: each method for every phase; two axes (redistribution_phases): their product.
    std::vector<std::vector<std::string>> redistribution;
    enum class GridMode { automatic, all, list } grid_mode = GridMode::automatic;
    std::vector<std::array<int, 2>> grids;
    std::vector<std::string> backends;
    std::vector<bool> gpu_aware;
    std::vector<int> overlap{1};               // chunk counts (Config::overlap); 1: none
    std::vector<SliceSchedule> overlap_slices{SliceSchedule::even};  // Config::overlap_slices, where overlap > 1
    std::vector<int> exchange_parts{1};        // Config::exchange_parts, where overlap > 1
    std::vector<bool> fft_stores_kept{false};  // Config::fft_stores_kept
    // Axes given as "all" (or left to that default): they bring only the
    // values that apply to a configuration's backend and rank count.
    struct {
        bool decomposition = false, layout = false, backend = false, gpu_aware = false, fft_stores_kept = false;
        std::vector<bool> redistribution;  // per axis of `redistribution`
    } from_all;
};

// The keys parse_engine_axes reads.
const std::vector<std::string>& engine_axis_keys();
// Reads them from testcase object `j` (absent keys take their defaults);
// errors name the JSON path (TestcaseParser::fail). `ranks`: the testcase's.
EngineAxes parse_engine_axes(const TestcaseParser& ps, const nlohmann::json& j, const std::vector<int>& ranks);

// A decomposition's layout, process grid and per-phase methods at a rank count.
struct EngineShape {
    LayoutVariant layout;
    std::array<int, 2> grid;
    std::vector<std::string> methods;
};
// Sweep order: layout, then grid, then methods.
std::vector<EngineShape> engine_shapes(const EngineAxes& axes, const std::string& decomposition, int ranks);
// The configurations of one shape: backend, then gpu_aware, overlap,
// overlap_slices and exchange_parts (only with overlap > 1: one slice has no
// sizes and no exchange beside an FFT), fft_stores_kept;
// those that an "all" axis brought and that do not apply at the shape's rank
// count are left out (left_out_by_all).
std::vector<Config> engine_configs(const EngineAxes& axes, const std::string& decomposition, const EngineShape& shape);
// Why `config` makes no point at `ranks`: a value that one of the axes given as
// "all" brought and that does not apply to the configuration's backend and rank
// count (reference_3d at 2 ranks, a realigned reference_3d, nccl_a2a on fftw,
// gpu_aware on a host backend, fft_stores_kept at one rank). Sizes do not
// count: a point skipped for its size, or for a value named in the testcase,
// keeps its skip and its reason. Nothing when the configuration stays.
std::optional<std::string> left_out_by_all(const EngineAxes& axes, const Config& config, int ranks);
// Every configuration at `ranks`, decomposition by decomposition, each once.
std::vector<Config> engine_configs(const EngineAxes& axes, int ranks);

// The documented default configuration for a problem (tuner/README.md).
Config default_config(const Problem& problem);
// A measured configuration re-derived for `ranks`: slabs take P x 1; pencils
// every grid of `ranks`, the aspect P1/P2 nearest the measured one first
// (equally near: P1 >= P2 first). Method and layout are kept; callers check
// which candidate applies.
std::vector<Config> adapt_to_ranks(const Config& config, int ranks);
// What adapting `measured` to `ranks` as `adapted` changed, for the selector's
// answer ("with the process grid 2x2 re-derived as 4x2 for 8 ranks"), or "".
std::string regridded(const Config& measured, const Config& adapted, int ranks);

}  // namespace fftune
