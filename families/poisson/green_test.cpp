// Green's functions and test problems: the DCT-I shortcut against a direct DFT
// of the sampled kernel, the periodic kernel's values, and each analytic ρ
// against −∇²φ/4π by finite differences.
#include "families/poisson/green.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

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

// The free kernel through DCT-I equals the DFT of the Green's function sampled
// at the padded grid's signed offsets (any value at offset N: it never meets ρ).
TEST(Green, FreeKernelIsTheDftOfTheSampledGreensFunction) {
    const Size n{4, 3, 2};
    const Size m = padded_size(n, Boundary::free);
    const double h = spacing(n);
    const Layout all{{{0, 0, 0}, {m[0], m[1], m[2] / 2 + 1}}, order_xyz};
    for (auto kernel : {Kernel::hockney, Kernel::regularized4}) {
        const auto k = spectral_kernel(n, Boundary::free, kernel, all);
        // G at offset (a, b, c): the table's own values, from the kernel at a lone cell.
        auto g = [&](index_t a, index_t b, index_t c) {
            const double r = h * std::sqrt(double(a * a + b * b + c * c));
            if (kernel == Kernel::hockney) return r > 0 ? 1 / r : (3 * std::log(2 + std::sqrt(3.0)) - std::numbers::pi / 2) / h;
            const double eps = regularization_cells * h, rho = r / eps;
            if (r == 0) return 3 / (std::sqrt(2 * std::numbers::pi) * eps);
            return (std::erf(rho / std::sqrt(2.0)) + rho * std::exp(-rho * rho / 2) / std::sqrt(2 * std::numbers::pi)) / r;
        };
        auto fold = [](index_t i, index_t mm) { return std::min(i, mm - i); };
        for (index_t kx = 0; kx < m[0]; ++kx)
            for (index_t ky = 0; ky < m[1]; ++ky)
                for (index_t kz = 0; kz <= m[2] / 2; ++kz) {
                    std::complex<double> s = 0;
                    for (index_t x = 0; x < m[0]; ++x)
                        for (index_t y = 0; y < m[1]; ++y)
                            for (index_t z = 0; z < m[2]; ++z) {
                                const double ph = -2 * std::numbers::pi *
                                                  (double(kx * x) / m[0] + double(ky * y) / m[1] + double(kz * z) / m[2]);
                                s += g(fold(x, m[0]), fold(y, m[1]), fold(z, m[2])) * std::polar(1.0, ph);
                            }
                    const double want = s.real() * h * h * h / double(m[0] * m[1] * m[2]);
                    EXPECT_NEAR(k[all.offset_of({kx, ky, kz})], want, 1e-12 * std::abs(want) + 1e-14)
                        << to_string(kernel) << " " << kx << " " << ky << " " << kz;
                    EXPECT_NEAR(s.imag(), 0, 1e-9);
                }
    }
}

TEST(Green, PeriodicKernelIsFourPiOverKSquared) {
    const Size n{8, 4, 4};
    const Layout all{{{0, 0, 0}, {8, 4, 3}}, order_xyz};
    const auto k = spectral_kernel(n, Boundary::periodic, Kernel::hockney, all);
    EXPECT_EQ(k[0], 0);  // the mean of φ is zero
    const double lx = 8 * spacing(n), kx = 2 * std::numbers::pi / lx;
    EXPECT_NEAR(k[all.offset_of({1, 0, 0})], 4 * std::numbers::pi / (kx * kx) / (8 * 4 * 4), 1e-14);
    EXPECT_DOUBLE_EQ(k[all.offset_of({7, 0, 0})], k[all.offset_of({1, 0, 0})]);  // -k
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
