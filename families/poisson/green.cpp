#include "families/poisson/green.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <list>
#include <mutex>
#include <numbers>
#include <string>

#include <fftw3.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/platform/parallel.hpp"

namespace fftune::poisson {

namespace {

constexpr double pi = std::numbers::pi;
constexpr double euler_gamma = std::numbers::egamma;
// (1/h³) ∫ over a cell of 1/r = C3 / h: C3 = 3 ln(2 + √3) − π/2.
const double cube_mean_inverse_r = 3 * std::log(2 + std::sqrt(3.0)) - pi / 2;
// (1/h²) ∫ over a square cell of ln ρ = ln h + C2: C2 = ln(√2/2) − 3/2 + π/4.
const double square_mean_log_r = std::log(std::sqrt(2.0) / 2) - 1.5 + pi / 4;

double sq(double x) { return x * x; }

// Green's function values in mixed space: distances along free axes (u: the
// offsets in cells), wave numbers along periodic ones (k, 1/length).
double free_3d(Kernel kernel, double r, double h) {
    if (kernel == Kernel::hockney) return r > 0 ? 1 / r : cube_mean_inverse_r / h;
    // Hejlesen et al.: the potential of the 4th-order Gaussian-based smoothing
    // ζ₄(ρ) = (2π)^(−3/2) (5/2 − ρ²/2) e^(−ρ²/2), ρ = r/ε.
    const double eps = regularization_cells * h;
    if (r == 0) return 3 / (std::sqrt(2 * pi) * eps);
    const double rho = r / eps;
    return (std::erf(rho / std::sqrt(2.0)) + rho * std::exp(-rho * rho / 2) / std::sqrt(2 * pi)) / r;
}

// Free in x, y; Fourier mode kz along z: 2 K0(kz ρ), and −2 ln ρ for kz = 0;
// at ρ = 0 the cell average (K0(x) ≈ −ln(x/2) − γ).
double wire_2d(double rho, double kz, double h) {
    const double mean_log = std::log(h) + square_mean_log_r;
    if (kz == 0) return rho > 0 ? -2 * std::log(rho) : -2 * mean_log;
    if (rho > 0) return 2 * std::cyl_bessel_k(0.0, kz * rho);
    return -2 * std::log(kz / 2) - 2 * euler_gamma - 2 * mean_log;
}

// Free in z; Fourier mode k along x, y: 2π e^(−k|z|)/k, and −2π|z| for k = 0.
double surface_1d(double z, double k) { return k == 0 ? -2 * pi * std::abs(z) : 2 * pi * std::exp(-k * std::abs(z)) / k; }

}  // namespace

std::array<bool, 3> free_axes(Boundary b) {
    switch (b) {  // the geometry of each boundary class (a table of four rows)
        case Boundary::free: return {true, true, true};
        case Boundary::wire: return {true, true, false};
        case Boundary::surface: return {false, false, true};
        case Boundary::periodic: return {false, false, false};
    }
    return {true, true, true};
}

Size padded_size(const Size& n, Boundary b) {
    const auto f = free_axes(b);
    return {f[0] ? 2 * n[0] : n[0], f[1] ? 2 * n[1] : n[1], f[2] ? 2 * n[2] : n[2]};
}

double spacing(const Size& n) { return 1.0 / double(*std::min_element(n.begin(), n.end())); }

std::optional<std::string> kernel_not_applicable(Boundary b, Kernel k) {
    if (k == Kernel::regularized4 && b != Boundary::free)
        return fmt::format("kernel regularized4 is a free-space kernel; boundary {} takes hockney", to_string(b));
    return std::nullopt;
}

int kernel_order(Kernel k) { return k == Kernel::hockney ? 2 : 4; }

GreenTable green_table(const Size& n, Boundary b, Kernel k) {
    GreenTable g;
    g.n = n, g.m = padded_size(n, b), g.free = free_axes(b), g.h = spacing(n), g.boundary = b, g.kernel = k;
    for (int d = 0; d < 3; ++d) g.t[d] = g.free[d] ? n[d] + 1 : g.m[d] / 2 + 1;
    return g;
}

double GreenTable::scale() const {
    return std::pow(h, free[0] + free[1] + free[2]) / (double(m[0]) * double(m[1]) * double(m[2]));
}

double green_value(const GreenTable& g, index_t i, index_t j, index_t l) {
    const double h = g.h;
    auto wave = [&](int d, index_t q) { return 2 * pi * double(q) / (double(g.m[d]) * h); };
    switch (g.boundary) {  // the Green's function of each boundary class
        case Boundary::free: return free_3d(g.kernel, h * std::sqrt(double(i * i + j * j) + double(l) * l), h);
        case Boundary::wire: return wire_2d(h * std::sqrt(double(i * i + j * j)), wave(2, l), h);
        case Boundary::surface: return surface_1d(h * double(l), std::hypot(wave(0, i), wave(1, j)));
        case Boundary::periodic: {
            const double k2 = sq(wave(0, i)) + sq(wave(1, j)) + sq(wave(2, l));
            return k2 > 0 ? 4 * pi / k2 : 0;  // the mean of φ is 0
        }
    }
    return 0;
}

std::vector<double> spectral_kernel(const Size& n, Boundary b, Kernel kernel, const Layout& layout) {
    const GreenTable g = green_table(n, b, kernel);
    const auto m = g.m;
    const auto fr = g.free;
    const auto t = g.t;
    std::vector<double> table(g.count());
    // Planes in parallel (10⁸ values at 512³): the Green's function, then the fold.
    parallel_for(0, t[0], [&](std::int64_t lo, std::int64_t hi) {
        for (index_t i = lo; i < hi; ++i)
            for (index_t j = 0; j < t[1]; ++j)
                for (index_t l = 0; l < t[2]; ++l) table[(std::size_t(i) * t[1] + j) * t[2] + l] = green_value(g, i, j, l);
    });
    // Along free axes, the DFT of an even sequence of length 2N is a DCT-I of
    // its N + 1 unique values (FFTW REDFT00: Y_k = X_0 + (−1)^k X_N + 2 Σ X_j cos(πjk/N)),
    // separable: one pass of 1D DCT-Is per free axis, batched over the other
    // two, the outer batch axis split over the host threads (one plan per
    // chunk size, planned serially: FFTW's planner is not thread-safe; its
    // new-array execute is). At 512³ the serial 3D transform was about half
    // of the kernel's setup.
    const std::array<index_t, 3> stride{index_t(t[1]) * t[2], t[2], 1};
    for (int d = 0; d < 3; ++d) {
        if (!fr[d]) continue;
        const int a = d == 0 ? 1 : 0, b = 3 - d - a;  // batch axes, a the outer (split) one
        const index_t threads = std::min<index_t>(host_threads(), t[a]), chunk = (t[a] + threads - 1) / threads,
                      chunks = (t[a] + chunk - 1) / chunk;
        auto plan_for = [&](index_t rows) {
            fftw_iodim64 dim{t[d], stride[d], stride[d]};
            fftw_iodim64 batch[2] = {{rows, stride[a], stride[a]}, {t[b], stride[b], stride[b]}};
            const fftw_r2r_kind kind = FFTW_REDFT00;
            fftw_plan p = fftw_plan_guru64_r2r(1, &dim, 2, batch, table.data(), table.data(), &kind,
                                               FFTW_ESTIMATE | FFTW_UNALIGNED);
            if (!p) throw std::runtime_error("FFTW refused the kernel's DCT-I");
            return std::unique_ptr<fftw_plan_s, void (*)(fftw_plan)>(p, fftw_destroy_plan);
        };
        const index_t last = t[a] - (chunks - 1) * chunk;  // the last chunk's rows, 1..chunk
        const auto full = plan_for(chunk);
        auto tail = std::unique_ptr<fftw_plan_s, void (*)(fftw_plan)>(nullptr, fftw_destroy_plan);
        if (last != chunk) tail = plan_for(last);
        parallel_for(0, chunks, [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t c = lo; c < hi; ++c) {
                double* at = table.data() + c * chunk * stride[a];
                fftw_execute_r2r(c + 1 < chunks || !tail ? full.get() : tail.get(), at, at);
            }
        }, int(chunks));
    }
    const double scale = g.scale();
    // This rank's part of the r2c spectrum, in its layout's memory order.
    const Box3& box = layout.box;
    std::vector<double> out(static_cast<std::size_t>(box.count()));
    auto fold = [&](int d, index_t k) { return std::min(k, m[d] - k); };
    parallel_for(box.lo[0], box.hi[0], [&](std::int64_t lo, std::int64_t hi) {
        for (index_t x = lo; x < hi; ++x)
            for (index_t y = box.lo[1]; y < box.hi[1]; ++y)
                for (index_t z = box.lo[2]; z < box.hi[2]; ++z)
                    out[static_cast<std::size_t>(layout.offset_of({x, y, z}))] =
                        scale * table[(std::size_t(fold(0, x)) * t[1] + fold(1, y)) * t[2] + fold(2, z)];
    });
    return out;
}

std::shared_ptr<const std::vector<double>> shared_spectral_kernel(const Size& n, Boundary b, Kernel k,
                                                                  const Layout& layout) {
    static std::mutex mutex;
    // The two most recently used, the newest first: a sweep that alternates
    // two spectrum layouts (padded and zero_skipping) builds each once.
    static std::list<std::pair<std::string, std::shared_ptr<const std::vector<double>>>> cache;
    constexpr std::size_t capacity = 2;
    const std::string key = fmt::format("{} {} {} {} {} {}", n, int(b), int(k), layout.box.lo, layout.box.hi,
                                        layout.order);
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->first == key) {
            cache.splice(cache.begin(), cache, it);
            return cache.front().second;
        }
    if (cache.size() == capacity) cache.pop_back();  // its memory back before the next one is built
    cache.emplace_front(key, std::make_shared<const std::vector<double>>(spectral_kernel(n, b, k, layout)));
    return cache.front().second;
}

// --- analytic test problems (README.md): one per boundary class ---------------

namespace {

struct Point3 {
    double x, y, z;  // from the charge's centre
    double lx, ly, lz;  // box lengths
};

// From the charge's centre, charge_centre off the grid's centre.
Point3 coordinates(const Size& n, index_t i, index_t j, index_t l) {
    const double h = spacing(n);
    const auto& c = charge_centre;
    return {(double(i) - (double(n[0]) - 1) / 2) * h - c[0], (double(j) - (double(n[1]) - 1) / 2) * h - c[1],
            (double(l) - (double(n[2]) - 1) / 2) * h - c[2], double(n[0]) * h, double(n[1]) * h, double(n[2]) * h};
}

constexpr double sigma = charge_width;
constexpr double amplitude = test_amplitude, envelope = test_envelope;

}  // namespace

// free: a unit Gaussian charge, φ = erf(r/(√2σ))/r.
// wire: a Gaussian line charge of unit density along z, φ = −ln ρ² − E1(ρ²/2σ²),
//   plus φ_m = A e^(−ρ²/2s²) cos(2πz/Lz) and its ρ_m = −∇²φ_m/4π.
// surface: a Gaussian sheet of unit density, φ = −2π (z erf(z/√2σ) + σ √(2/π) e^(−z²/2σ²)),
//   plus φ_m = A e^(−z²/2s²) cos(2πx/Lx) sin(2πy/Ly).
// periodic: φ = sin(2πx/Lx) cos(4πy/Ly) sin(2πz/Lz) + A cos(6πx/Lx), ρ = Σ |k|² φ_k / 4π.
double TestProblem::phi(index_t i, index_t j, index_t l) const {
    const auto p = coordinates(n, i, j, l);
    switch (boundary) {  // one analytic solution per boundary class
        case Boundary::free: {
            const double r = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
            return r > 0 ? std::erf(r / (std::sqrt(2.0) * sigma)) / r : std::sqrt(2 / pi) / sigma;
        }
        case Boundary::wire: {
            const double r2 = p.x * p.x + p.y * p.y;
            const double line = r2 > 0 ? -std::log(r2) + std::expint(-r2 / (2 * sigma * sigma))
                                       : -(std::log(2 * sigma * sigma) - euler_gamma);
            return line + amplitude * std::exp(-r2 / (2 * envelope * envelope)) * std::cos(2 * pi * p.z / p.lz);
        }
        case Boundary::surface: {
            const double sheet = -2 * pi * (p.z * std::erf(p.z / (std::sqrt(2.0) * sigma)) +
                                            sigma * std::sqrt(2 / pi) * std::exp(-p.z * p.z / (2 * sigma * sigma)));
            return sheet + amplitude * std::exp(-p.z * p.z / (2 * envelope * envelope)) * std::cos(2 * pi * p.x / p.lx) *
                               std::sin(2 * pi * p.y / p.ly);
        }
        case Boundary::periodic:
            return std::sin(2 * pi * p.x / p.lx) * std::cos(4 * pi * p.y / p.ly) * std::sin(2 * pi * p.z / p.lz) +
                   amplitude * std::cos(6 * pi * p.x / p.lx);
    }
    return 0;
}

double TestProblem::rho(index_t i, index_t j, index_t l) const {
    const auto p = coordinates(n, i, j, l);
    const double s2 = envelope * envelope;
    switch (boundary) {  // −∇²φ / 4π of each solution above
        case Boundary::free: {
            const double r2 = p.x * p.x + p.y * p.y + p.z * p.z;
            return std::exp(-r2 / (2 * sigma * sigma)) / std::pow(2 * pi * sigma * sigma, 1.5);
        }
        case Boundary::wire: {
            const double r2 = p.x * p.x + p.y * p.y, kz = 2 * pi / p.lz;
            const double line = std::exp(-r2 / (2 * sigma * sigma)) / (2 * pi * sigma * sigma);
            const double f = amplitude * std::exp(-r2 / (2 * s2)) * std::cos(kz * p.z);
            return line - f * (r2 / (s2 * s2) - 2 / s2 - kz * kz) / (4 * pi);
        }
        case Boundary::surface: {
            const double kx = 2 * pi / p.lx, ky = 2 * pi / p.ly;
            const double sheet = std::exp(-p.z * p.z / (2 * sigma * sigma)) / (std::sqrt(2 * pi) * sigma);
            const double f = amplitude * std::exp(-p.z * p.z / (2 * s2)) * std::cos(kx * p.x) * std::sin(ky * p.y);
            return sheet - f * (p.z * p.z / (s2 * s2) - 1 / s2 - kx * kx - ky * ky) / (4 * pi);
        }
        case Boundary::periodic: {
            const double kx = 2 * pi / p.lx, ky = 4 * pi / p.ly, kz = 2 * pi / p.lz, k3 = 6 * pi / p.lx;
            return ((kx * kx + ky * ky + kz * kz) * std::sin(kx * p.x) * std::cos(ky * p.y) * std::sin(kz * p.z) +
                    k3 * k3 * amplitude * std::cos(k3 * p.x)) /
                   (4 * pi);
        }
    }
    return 0;
}

namespace {

// C and q of the tolerance C (h/σ)^q per boundary and kernel (README.md).
struct Fit {
    double c, q;
};
Fit fitted(Boundary b, Kernel k) {
    switch (b) {  // the fit of each boundary class
        case Boundary::free: return k == Kernel::hockney ? Fit{0.057, 1.8} : Fit{0.29, 3.3};
        case Boundary::wire: return {0.03, 1.85};
        case Boundary::surface: return {0.043, 2};
        case Boundary::periodic: return {0, 0};
    }
    return {0, 0};
}

}  // namespace

double tolerance(const Size& n, Boundary b, Kernel k, bool single) {
    const double floor = single ? 2e-4 : 1e-11;
    if (b == Boundary::periodic) return floor;
    const Fit f = fitted(b, k);
    return std::max(floor, f.c * std::pow(spacing(n) / charge_width, f.q));
}

std::optional<std::string> size_not_applicable(const Size& n, Boundary b) {
    const index_t least = *std::min_element(n.begin(), n.end());
    if (b == Boundary::periodic) {
        if (least >= min_points_periodic) return std::nullopt;
        return fmt::format("size {}: the periodic check's modes (3 periods along x) need at least {} points per axis",
                           size_string(n), min_points_periodic);
    }
    if (least >= min_points_charged) return std::nullopt;
    return fmt::format("size {}: the {} test charge (width σ = 1/14 of the smallest side, {:.2g} cells here) needs at "
                       "least {} points along the smallest side; coarser, the tolerance admits a wrong φ",
                       size_string(n), to_string(b), double(least) / 14, min_points_charged);
}

std::optional<std::string> size_not_applicable(const Size& n, Boundary b, Kernel k) {
    if (auto why = size_not_applicable(n, b)) return why;
    const index_t least = *std::min_element(n.begin(), n.end());
    if (k != Kernel::regularized4 || least >= min_points_regularized4) return std::nullopt;
    return fmt::format("size {}: kernel regularized4 needs at least {} points along the smallest side; coarser, its "
                       "own error (7.8% at 16^3) hides a φ 10% too large",
                       size_string(n), min_points_regularized4);
}

}  // namespace fftune::poisson
