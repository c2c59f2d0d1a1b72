// Green's functions and test problems: every boundary's spectral kernel against
// a direct DFT of its Green's function evaluated independently (quadrature of
// the cell averages, K₀ and the regularised potential; wave numbers from each
// axis's length), and each analytic ρ against −∇²φ/4π by finite differences.
#include "families/poisson/green.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

namespace fftune::poisson {
namespace {

TEST(Green, GeometryOfTheBoundaries) {
    EXPECT_EQ(padded_size({8, 6, 4}, Boundary::free), (Size{16, 12, 8}));
    EXPECT_EQ(padded_size({8, 6, 4}, Boundary::wire), (Size{16, 12, 4}));
    EXPECT_EQ(padded_size({8, 6, 4}, Boundary::surface), (Size{8, 6, 8}));
    EXPECT_EQ(padded_size({8, 6, 4}, Boundary::periodic), (Size{8, 6, 4}));
    EXPECT_DOUBLE_EQ(spacing({8, 6, 4}), 0.25);
    EXPECT_FALSE(kernel_not_applicable(Boundary::free, Kernel::regularized4));
    EXPECT_EQ(*kernel_not_applicable(Boundary::wire, Kernel::regularized4),
              "kernel regularized4 is a free-space kernel; boundary wire takes hockney");
}

// --- independent evaluations: quadrature, not the closed forms of green.cpp ---

constexpr double pi = std::numbers::pi;

// Gauss-Legendre rule of n points on [a, b] (Newton on P_n; nodes on [−1, 1] cached).
std::vector<std::pair<double, double>> gauss_legendre(int n, double a, double b) {
    static std::map<int, std::vector<std::pair<double, double>>> unit;
    auto& u = unit[n];
    if (u.empty())
        for (int i = 1; i <= n; ++i) {
            double x = std::cos(pi * (i - 0.25) / (n + 0.5)), dp = 1;
            for (int it = 0; it < 100; ++it) {
                double p0 = 1, p1 = x;
                for (int k = 2; k <= n; ++k) {
                    const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
                    p0 = p1, p1 = p2;
                }
                dp = n * (x * p1 - p0) / (x * x - 1);
                const double dx = p1 / dp;
                x -= dx;
                if (std::abs(dx) < 1e-16) break;
            }
            u.push_back({x, 2 / ((1 - x * x) * dp * dp)});
        }
    std::vector<std::pair<double, double>> out;
    for (auto [x, w] : u) out.push_back({(a + b) / 2 + (b - a) / 2 * x, (b - a) / 2 * w});
    return out;
}

// Cell average of 1/r over a cube of side h about the origin: ∇·(r/r) = 2/r,
// so ∫ 1/r dV = ½ ∮ (r·n)/r dS = 3 (h/2) ∫∫ over one face of dS / r.
double cube_mean_inverse_r(double h) {
    double s = 0;
    const auto q = gauss_legendre(40, -h / 2, h / 2);
    for (auto [u, wu] : q)
        for (auto [v, wv] : q) s += wu * wv / std::sqrt(h * h / 4 + u * u + v * v);
    return 3 * (h / 2) * s / (h * h * h);
}

// Cell average of ln ρ over a square of side h: ∇·(r (ln ρ − ½)) = 2 ln ρ,
// so ∫ ln ρ dA = ½ ∮ (ln ρ − ½)(r·n) ds = 2 (h/2) ∫ over one edge.
double square_mean_log_r(double h) {
    double s = 0;
    for (auto [t, w] : gauss_legendre(40, -h / 2, h / 2)) s += w * (0.5 * std::log(h * h / 4 + t * t) - 0.5);
    return 2 * (h / 2) * s / (h * h);
}

// K₀(x) = ∫₀^∞ e^(−x cosh t) dt, by the trapezoid rule (exponentially convergent here).
double bessel_k0(double x) {
    double s = 0.5 * std::exp(-x);
    for (double t = 0.02; x * std::cosh(t) < 745; t += 0.02) s += std::exp(-x * std::cosh(t));
    return s * 0.02;
}

// Potential of the smoothing ζ₄(t) = (2π)^(−3/2) (5/2 − t²/2) e^(−t²/2) of unit
// charge and width ε: G(r) = (1/ε) [(4π/ρ) ∫₀^ρ t² ζ₄ dt + 4π ∫_ρ^∞ t ζ₄ dt], ρ = r/ε.
double regularized4_potential(double r, double eps) {
    auto zeta = [](double t) { return std::pow(2 * pi, -1.5) * (2.5 - t * t / 2) * std::exp(-t * t / 2); };
    const double rho = r / eps;
    double inner = 0, outer = 0;  // panels of width ≤ 1 up to t = 20 (e^(−200) beyond)
    for (double a = 0; a < 20; a += 1) {
        const double mid = std::clamp(rho, a, a + 1);
        for (auto [t, w] : gauss_legendre(30, a, mid)) inner += w * t * t * zeta(t);
        for (auto [t, w] : gauss_legendre(30, mid, a + 1)) outer += w * t * zeta(t);
    }
    return ((rho > 0 ? 4 * pi * inner / rho : 0) + 4 * pi * outer) / eps;
}

// The spectral kernel by a direct DFT over the free axes of G sampled at the
// padded grid's signed offsets (any value at offset N: it never meets ρ),
// with the wave number 2π j / L_d along a periodic axis, L_d = N_d h.
// g(offsets in cells along free axes, wave numbers along periodic ones).
template <class G>
void expect_kernel(const Size& n, Boundary b, Kernel kernel, G g, const char* what) {
    const Size m = padded_size(n, b);
    const auto fr = free_axes(b);
    const double h = spacing(n);
    const Layout all{{{0, 0, 0}, {m[0], m[1], m[2] / 2 + 1}}, order_xyz};
    const auto k = spectral_kernel(n, b, kernel, all);
    auto fold = [](index_t i, index_t mm) { return std::min(i, mm - i); };
    // G over the unique |offsets| (free axes: 0..N) and |wave numbers| (periodic: 0..M/2).
    std::array<index_t, 3> t{};
    for (int d = 0; d < 3; ++d) t[d] = fr[d] ? n[d] + 1 : m[d] / 2 + 1;
    std::vector<double> table(std::size_t(t[0] * t[1] * t[2]));
    for (index_t a = 0; a < t[0]; ++a)
        for (index_t b2 = 0; b2 < t[1]; ++b2)
            for (index_t c = 0; c < t[2]; ++c) {
                const std::array<index_t, 3> u{a, b2, c};
                std::array<index_t, 3> off{};
                std::array<double, 3> wave{};
                for (int d = 0; d < 3; ++d) {
                    if (fr[d]) off[d] = u[d];
                    else wave[d] = 2 * pi * double(u[d]) / (double(n[d]) * h);
                }
                table[std::size_t((a * t[1] + b2) * t[2] + c)] = g(off, wave);
            }
    std::vector<double> want(k.size());
    double scale = 0;
    for (index_t kx = 0; kx < m[0]; ++kx)
        for (index_t ky = 0; ky < m[1]; ++ky)
            for (index_t kz = 0; kz <= m[2] / 2; ++kz) {
                const std::array<index_t, 3> kk{kx, ky, kz};
                std::array<index_t, 3> hi{};
                for (int d = 0; d < 3; ++d) hi[d] = fr[d] ? m[d] : 1;  // free: sum over the padded grid's offsets
                auto u = [&](int d, index_t x) { return fr[d] ? fold(x, m[d]) : fold(kk[d], m[d]); };
                double s = 0;
                for (index_t x = 0; x < hi[0]; ++x)
                    for (index_t y = 0; y < hi[1]; ++y)
                        for (index_t z = 0; z < hi[2]; ++z) {
                            const double ph = 2 * pi * (fr[0] * double(kx * x) / m[0] + fr[1] * double(ky * y) / m[1] +
                                                        fr[2] * double(kz * z) / m[2]);
                            s += table[std::size_t((u(0, x) * t[1] + u(1, y)) * t[2] + u(2, z))] * std::cos(ph);
                        }
                const double w = s * std::pow(h, fr[0] + fr[1] + fr[2]) / double(m[0] * m[1] * m[2]);
                want[std::size_t(all.offset_of(kk))] = w;
                scale = std::max(scale, std::abs(w));
            }
    int bad = 0;
    for (std::size_t i = 0; i < k.size(); ++i)
        if (!(std::abs(k[i] - want[i]) <= 1e-11 * scale) && bad++ < 5)
            ADD_FAILURE() << what << ": kernel value " << i << " is " << k[i] << ", want " << want[i];
    EXPECT_EQ(bad, 0) << what << ": values off by more than 1e-11 of the largest, " << scale;
}

// One kernel per (grid, boundary, kernel, layout) is kept: asked again, the
// same array; asked for another layout, a new one with the values of
// spectral_kernel.
TEST(Green, SharedKernelIsBuiltOncePerArguments) {
    const Size n{12, 10, 8};
    const Layout all{{{0, 0, 0}, {24, 20, 9}}, order_xyz}, part{{{4, 0, 0}, {12, 20, 9}}, order_xyz};
    const auto a = shared_spectral_kernel(n, Boundary::free, Kernel::hockney, all);
    EXPECT_EQ(shared_spectral_kernel(n, Boundary::free, Kernel::hockney, all), a);
    EXPECT_EQ(*a, spectral_kernel(n, Boundary::free, Kernel::hockney, all));
    const auto b = shared_spectral_kernel(n, Boundary::free, Kernel::hockney, part);
    EXPECT_NE(b, a);
    EXPECT_EQ(*b, spectral_kernel(n, Boundary::free, Kernel::hockney, part));
    EXPECT_NE(shared_spectral_kernel(n, Boundary::free, Kernel::regularized4, part), b);
    EXPECT_EQ(*a, spectral_kernel(n, Boundary::free, Kernel::hockney, all)) << "a holder keeps its kernel";
}

// The two most recently used are kept: two layouts alternating are built
// once each; a third evicts the one used least recently.
TEST(Green, SharedKernelKeepsTwoLayoutsAlternating) {
    const Size n{10, 8, 6};
    const Layout x{{{0, 0, 0}, {20, 16, 7}}, order_xyz}, y{{{0, 0, 0}, {20, 16, 7}}, order_zxy},
        z{{{2, 0, 0}, {12, 16, 7}}, order_xyz};
    const auto a = shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, x);
    const auto b = shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, y);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, x), a);
        EXPECT_EQ(shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, y), b);
    }
    const auto c = shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, z);  // evicts x
    EXPECT_EQ(shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, y), b);
    EXPECT_EQ(shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, z), c);
    EXPECT_NE(shared_spectral_kernel(n, Boundary::wire, Kernel::hockney, x), a) << "built again";
}

TEST(Green, IndependentEvaluationsMatchTheirClosedForms) {
    // The constants of green.hpp's README table, here from quadrature.
    EXPECT_NEAR(cube_mean_inverse_r(1), 3 * std::log(2 + std::sqrt(3.0)) - pi / 2, 1e-13);
    EXPECT_NEAR(square_mean_log_r(0.5), std::log(0.5) + std::log(std::sqrt(2.0) / 2) - 1.5 + pi / 4, 1e-13);
    EXPECT_NEAR(bessel_k0(0.3), 1.3724600605443, 1e-12);  // mpmath.besselk
    EXPECT_NEAR(bessel_k0(2.0), 0.11389387274953, 1e-13);
    EXPECT_NEAR(regularized4_potential(0, 0.1), 3 / (std::sqrt(2 * pi) * 0.1), 1e-11);
    EXPECT_NEAR(regularized4_potential(2.0, 0.1), 0.5, 1e-13);  // far: 1/r
}

// free: G = 1/r, the centre cell's average of 1/r; regularized4: the potential of ζ₄.
TEST(Green, FreeKernelIsTheDftOfTheIndependentGreensFunction) {
    const Size n{4, 3, 2};
    const double h = spacing(n);
    expect_kernel(n, Boundary::free, Kernel::hockney, [&](std::array<index_t, 3> u, std::array<double, 3>) {
        const double r = h * std::sqrt(double(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
        return r > 0 ? 1 / r : cube_mean_inverse_r(h);
    }, "free hockney");
    expect_kernel(n, Boundary::free, Kernel::regularized4, [&](std::array<index_t, 3> u, std::array<double, 3>) {
        return regularized4_potential(h * std::sqrt(double(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])),
                                      regularization_cells * h);
    }, "free regularized4");
}

// wire (periodic z, L_z = N_z h): 2 K₀(k_z ρ), −2 ln ρ at k_z = 0; the centre
// cell: the average over it of −2 ln ρ (k_z = 0) or −2 ln(k_z ρ/2) − 2γ (K₀ for small argument).
TEST(Green, WireKernelIsTheDftOfTheIndependentGreensFunction) {
    const Size n{4, 3, 5};  // L_z = 5/3 differs from L_x = 4/3 and L_y = 1
    const double h = spacing(n);
    expect_kernel(n, Boundary::wire, Kernel::hockney, [&](std::array<index_t, 3> u, std::array<double, 3> k) {
        const double rho = h * std::sqrt(double(u[0] * u[0] + u[1] * u[1]));
        const double centre = -2 * square_mean_log_r(h);
        if (k[2] == 0) return rho > 0 ? -2 * std::log(rho) : centre;
        return rho > 0 ? 2 * bessel_k0(k[2] * rho) : centre - 2 * std::log(k[2] / 2) - 2 * std::numbers::egamma;
    }, "wire");
}

// surface (periodic x and y, L_x = N_x h ≠ L_y = N_y h): 2π e^(−k|z|)/k with
// k = 2π √((j_x/L_x)² + (j_y/L_y)²), and −2π|z| at k = 0.
TEST(Green, SurfaceKernelIsTheDftOfTheIndependentGreensFunction) {
    const Size n{6, 4, 3};
    const double h = spacing(n);
    expect_kernel(n, Boundary::surface, Kernel::hockney, [&](std::array<index_t, 3> u, std::array<double, 3> k) {
        const double z = h * double(u[2]), kk = std::sqrt(k[0] * k[0] + k[1] * k[1]);
        return kk == 0 ? -2 * pi * z : 2 * pi * std::exp(-kk * z) / kk;
    }, "surface");
}

// periodic: 4π/k², k from each axis's own length, 0 at k = 0 (φ of mean zero).
TEST(Green, PeriodicKernelIsFourPiOverKSquared) {
    const Size n{8, 6, 4};
    expect_kernel(n, Boundary::periodic, Kernel::hockney, [&](std::array<index_t, 3>, std::array<double, 3> k) {
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        return k2 > 0 ? 4 * pi / k2 : 0.0;
    }, "periodic");
    const Layout all{{{0, 0, 0}, {8, 6, 3}}, order_xyz};
    const auto k = spectral_kernel(n, Boundary::periodic, Kernel::hockney, all);
    EXPECT_EQ(k[0], 0);  // the mean of φ is zero
    const double ly = 6 * spacing(n), ky = 2 * pi / ly;
    EXPECT_NEAR(k[all.offset_of({0, 1, 0})], 4 * pi / (ky * ky) / (8 * 6 * 4), 1e-14);
    EXPECT_DOUBLE_EQ(k[all.offset_of({0, 5, 0})], k[all.offset_of({0, 1, 0})]);  // -k
}

// ρ = −∇²φ / 4π by second-order differences on a fine grid, away from the edges.
TEST(Green, TestProblemsSatisfyPoissonsEquation) {
    for (auto b : {Boundary::free, Boundary::wire, Boundary::surface, Boundary::periodic}) {
        const Size n{96, 96, 96};
        const TestProblem t{n, b};
        const double h = spacing(n);
        double worst = 0, scale = 0;
        for (index_t i = 30; i < 66; i += 5)
            for (index_t j = 30; j < 66; j += 5)
                for (index_t l = 30; l < 66; l += 5) {
                    const double lap = (t.phi(i + 1, j, l) + t.phi(i - 1, j, l) + t.phi(i, j + 1, l) + t.phi(i, j - 1, l) +
                                        t.phi(i, j, l + 1) + t.phi(i, j, l - 1) - 6 * t.phi(i, j, l)) /
                                       (h * h);
                    worst = std::max(worst, std::abs(-lap / (4 * std::numbers::pi) - t.rho(i, j, l)));
                    scale = std::max(scale, std::abs(t.rho(i, j, l)));
                }
        EXPECT_LT(worst / scale, 0.03) << to_string(b);
    }
}

}  // namespace
}  // namespace fftune::poisson
