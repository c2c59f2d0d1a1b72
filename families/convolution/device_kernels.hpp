// The convolution family's kernels in a backend's memory (ConvolutionKernels):
// the Green's function g on the padded grid, and the octree's sampling and
// trilinear interpolation (sampling.hpp) of a tiling held there. The CPU
// oracle is the host code (device_kernels.cpp, sampling.cpp); the cuda
// kernels are device_kernels_cuda.cu.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/box.hpp"
#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "families/convolution/sampling.hpp"

namespace fftune::convolution {

using Size3 = std::array<index_t, 3>;

// The kernels g (README.md): a Gaussian of width 2 cells, exp(−r²/8), or the
// softened long-range 1/√(r² + 1), at the offset (i, j, l) in cells.
enum class GreenKernel { gaussian, inverse_r };
GreenKernel green_kernel(const std::string& name);  // throws for another name
inline double green(GreenKernel k, index_t i, index_t j, index_t l) {
    const double r2 = double(i * i + j * j + l * l);
    return k == GreenKernel::gaussian ? std::exp(-r2 / 8.0) : 1.0 / std::sqrt(r2 + 1.0);
}

// The spectrum of g on the padded grid M = 2n where g is a product of one even
// factor per axis (gaussian: exp(−i²/8) each), over `box` (frequencies k):
// K(k) = scale · Π_a ĝ_a(k_a), ĝ_a(k) = Σ_{i<M_a} g_a(d(a, i)) e^{−2πi k i/M_a}
//      = g_a(0) + 2 Σ_{0<i<n_a} g_a(i) cos(2π k i/M_a) + g_a(n_a) (−1)^k  (real),
// one term per axis for Backend::fill_separable. It is what the forward FFT of
// fill_green's array gives (that FFT is its oracle), at 3 M_a·(terms of g_a)
// host operations instead of a padded transform. Nothing for a kernel that
// does not factor (inverse_r).
std::optional<SeparableTerms> separable_spectrum(GreenKernel kernel, const Size3& n, const Box3& box, double scale);

// The inputs x (README.md) at grid point (i, j, l) of n: three Gaussian blobs
// of width n/8 along each axis, or uniform noise in [-1, 1] hashed from the
// point's index (splitmix64's finaliser).
enum class InputField { blobs, noise };
InputField input_field(const std::string& name);  // throws for another name
inline double input_value(InputField f, const Size3& n, index_t i, index_t j, index_t l) {
    if (f == InputField::noise) {
        std::uint64_t h = std::uint64_t((i * n[1] + j) * n[2] + l) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
        return double(h >> 11) / double(1ull << 53) * 2 - 1;
    }
    const double c[3][3] = {{0.3, 0.4, 0.5}, {0.7, 0.6, 0.3}, {0.5, 0.2, 0.8}};
    const double wx = double(n[0]) / 8, wy = double(n[1]) / 8, wz = double(n[2]) / 8;
    double v = 0;
    for (const auto& p : c) {
        const double dx = (i - p[0] * n[0]) / wx, dy = (j - p[1] * n[1]) / wy, dz = (l - p[2] * n[2]) / wz;
        v += std::exp(-(dx * dx + dy * dy + dz * dz) / 2);
    }
    return v;
}

class ConvolutionKernels;

// One tiling in a backend's memory: its cells (tile()'s) and their sample
// offsets, and the x planes' rates and first samples they are made from.
struct DeviceTiling {
    Buffer cells, offsets, planes;
    std::size_t count = 0;       // cells
    std::size_t samples = 0;     // of all of them
    std::size_t max_points = 0;  // at least the points of the largest cell
    DeviceTiling() = default;
    // Made by `kernels` in the backend's memory, queued on its stream.
    DeviceTiling(Backend& backend, ConvolutionKernels& kernels, const Tiling& tiling);
    // What that allocates for `tiling` (the memory model's).
    static std::size_t bytes_for(const Tiling& tiling);
    std::size_t bytes() const { return cells.bytes() + offsets.bytes() + planes.bytes(); }
    const Cell* cell_data() const { return static_cast<const Cell*>(cells.data()); }
    const std::size_t* offset_data() const { return static_cast<const std::size_t*>(offsets.data()); }
};
// An x plane of cells in DeviceTiling::planes: its rate and first sample (Tiling).
struct TilingPlane {
    index_t rate = 1;
    std::size_t start = 0;
};

// y against an exact result: Σ (y − exact)² and Σ exact² over the values
// where y − exact is finite, whether one is not, and max |exact| over all.
struct Comparison {
    double sum_error2 = 0, sum_exact2 = 0, max_exact = 0;
    bool not_finite = false;
};
// The same over host arrays at the indices `at`, in their order.
Comparison compare_points(const double* y, const double* exact, const std::vector<std::size_t>& at);

// The family's work in a backend's memory, registered by backend name
// ("fftw": the host functions, the CPU oracle; "cuda": kernels, a thread per
// value). Arrays are in the backend's memory; all queue on its stream,
// without synchronising.
class ConvolutionKernels {
public:
    static constexpr const char* kind = "convolution kernels";
    virtual ~ConvolutionKernels() = default;
    // out[layout.offset_of(i, j, l)] = scale · green(kernel, d(0, i), d(1, j), d(2, l))
    // over layout.box, d(a, i) = i < n[a] ? i : i − 2 n[a] (the padded grid's
    // signed offsets); points of the box at or beyond 2 n[a] are set to 0.
    virtual void fill_green(Backend& backend, double* out, const Layout& layout, const Size3& n, GreenKernel kernel,
                            double scale) = 0;
    // out[layout.offset_of(p)] = input_value(field, n, p) for the points p of
    // `region` (inside layout.box); the rest of `out` is left as it is.
    virtual void fill_input(Backend& backend, double* out, const Layout& layout, const Box3& region, const Size3& n,
                            InputField field) = 0;
    // The direct sums of the convolution at `probes` (count points, x y z
    // each), one per probe and x-plane a of the grid n:
    //   plane_sums[k·n[0] + a] = Σ_{b < n[1]} Σ_{c < n[2]} x(a, b, c) g(p_k − (a, b, c)),
    // x the whole grid packed, x slowest. The caller adds the planes in order.
    virtual void direct_sums(Backend& backend, const double* x, const Size3& n, GreenKernel kernel,
                             const index_t* probes, std::size_t count, double* plane_sums) = 0;
    // The cells of `tiling` and their sample offsets into `out` (its buffers
    // allocated, count + 1 offsets, the last the samples' count), from its
    // planes (written there): the cells of tile() and its sample_offsets.
    virtual void fill_tiling(Backend& backend, const Tiling& tiling, DeviceTiling& out) = 0;
    // out[offsets[k] ..) = cell k's samples of `value`.
    virtual void sample(Backend& backend, const DeviceTiling& cells, const GridView& value, double* out) = 0;
    // The values of `value` at the check points (check_points(): `given`
    // points, x y z each, then `random` ones over `domain`, random_check_point;
    // `domain` not empty where random > 0),
    // out[k] for point k, 0 where the point lies outside `region`: only
    // `region` of `value` is read. The sampled check's 2^16 points made where
    // they are used (as host tables and one-point cells, 7-8 ms of a 26 ms
    // 256^3 point on one H200).
    virtual void check_values(Backend& backend, const GridView& value, const Box3& region, const index_t* given,
                              std::size_t given_count, const Box3& domain, std::size_t random, double* out) = 0;
    // out (over `region`, x slowest) += the interpolation of `samples`.
    virtual void interpolate_add(Backend& backend, const DeviceTiling& cells, const double* samples,
                                 const Box3& region, double* out) = 0;
    // y against exact, `count` values each (validation without the arrays
    // crossing to the host: 2 x 0.5 GB per rank at 512^3 on 2 ranks). Synchronises.
    virtual Comparison compare(Backend& backend, const double* y, const double* exact, std::size_t count) = 0;
};
// The kernels for `backend`: by its name, else the host ones where its memory is the host's.
std::unique_ptr<ConvolutionKernels> kernels_for(const Backend& backend);

}  // namespace fftune::convolution

namespace fftune {
FFTUNE_DECLARE_REGISTRY(convolution::ConvolutionKernels);
}
