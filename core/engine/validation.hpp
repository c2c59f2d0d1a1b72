// Validation of a plan (DESIGN.md section 4, thesis 2.6):
//  - spectral Laplacian: forward, multiply by -|k|^2 / N (minimal-oscillation
//    wavenumbers), inverse, compare with the analytic Laplacian;
//  - whole-world oracle: every rank transforms the whole grid serially (FFTW,
//    double) and compares its own output box (small sizes only);
//  - round trip: inverse(forward(f)) / N == f;
//  - spectrum spot check (every size): the spectrum at a few wavenumbers, the
//    test modes' own and where a mirror along k_x or k_y would move them
//    among them, against a direct DFT of the input (an O(N) sum each). The
//    round trip and the Laplacian cannot see a mirrored spectrum (a c2c
//    stage of the wrong sign): the first undoes it, the second is even in k.
// The test function sums modes with different frequencies per axis, so a
// swapped axis changes the result on non-cubic grids.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/plan.hpp"
#include "core/records/checks.hpp"

namespace fftune {


// Grids with at most this many points also get the whole-world oracle.
inline constexpr index_t oracle_max_points = index_t{1} << 21;

// Collective over the plan's communicator. Not reentrant: one validation at a
// time per process (it reuses process-wide host arrays, core/platform/host_scratch.hpp,
// kept for the next validation; release_host_scratch() frees them). Throws
// std::invalid_argument for a plan whose inverse may destroy its input.
ValidationResult validate(Plan& plan);

// Large grids: the full checks above cost 5-15x the timing of the transform
// (host copies of every array, results/h100x1-2026-11-27-spot-large). From
// this many points on a timed point is validated by validate_timed instead.
inline constexpr index_t sampled_validation_min_points = index_t{1} << 24;  // 256^3
bool validated_by_samples(const Problem& problem);
// Indices lo..hi-1 to sample: the first, the last and evenly spaced ones, at
// least `count` where there are as many, so that every run of
// (hi - lo) / (count - 1) consecutive indices holds one.
std::vector<index_t> sampled_indices(index_t lo, index_t hi, index_t count);

// Checks of the arrays a timed run left, copying only samples off the device:
// `real` holds the test input (fill_test_input) and `complex` its spectrum
// after timed forwards; after timed inverses `complex` holds that spectrum and
// `real` the inverse of it. Two checks:
//  - round_trip_sampled: the inverse of the spectrum (for timed inverses the
//    timed result itself) over N against the field, on whole planes across the
//    slowest axis of the real array (first, last, evenly spaced: at least 17,
//    and one in every overlap chunk);
//  - spectrum_spot: the spectrum at spot_wavenumbers against the test
//    function's analytic spectrum, relative to its largest value.
// A point-sized error off the sampled planes passes; a stage's wrong axis,
// sign, scale or missing chunk does not. Collective; overwrites `real`.
ValidationResult validate_timed(Plan& plan, Buffer& real, Buffer& complex, Direction timed);

// Test data, exposed for tests and for applications that want a known field.
struct TestMode {
    std::array<int, 3> k;  // wavenumbers along x, y, z
    double amplitude, phase;
};
std::vector<TestMode> test_modes(const std::array<index_t, 3>& n);
double test_function(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n,
                     index_t x, index_t y, index_t z);
double test_laplacian(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n,
                      index_t x, index_t y, index_t z);
// Minimal-oscillation wavenumber of index i on an axis of length n (thesis 2.6).
inline index_t wavenumber(index_t i, index_t n) { return 2 * i <= n ? i : i - n; }

// Fill a real host array laid out as `layout` with the test function (the
// pointer form writes layout.box.count() values, x-planes over host threads).
template <class T>
void fill_test_input(std::vector<T>& out, const Layout& layout, const std::array<index_t, 3>& n);
template <class T>
void fill_test_input(T* out, const Layout& layout, const std::array<index_t, 3>& n);

// The test function over `box` as separable terms, amplitude and phase
// folded into the x tables, for Backend::fill_separable (the input written
// where the plan's arrays live).
SeparableTerms test_input_terms(const std::array<index_t, 3>& n, const Box3& box);

// Tolerance for max-relative errors of a transform over `points` values.
double transform_tolerance(Precision p, index_t points);

}  // namespace fftune
