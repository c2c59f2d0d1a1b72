// Green's functions and analytic test problems of the poisson family
// (README.md beside this file). Convention: ∇²φ = −4πρ, so a unit point
// charge has φ = 1/r. The grid has N_d points per axis with cubic cells of side
// h = 1 / min(N) (the smallest side is 1), x_i = (i − (N_d − 1)/2) h, and the
// padded grid has M_d = 2 N_d points along a free axis, N_d along a periodic one.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/box.hpp"
#include "core/base/names.hpp"

namespace fftune::poisson {

enum class Boundary { free, wire, surface, periodic };
enum class Kernel { hockney, regularized4 };

}  // namespace fftune::poisson

namespace fftune {
template <>
struct EnumNames<poisson::Boundary> {
    static constexpr std::string_view what = "boundary";
    static constexpr std::array<std::pair<poisson::Boundary, std::string_view>, 4> table{
        {{poisson::Boundary::free, "free"},
         {poisson::Boundary::wire, "wire"},
         {poisson::Boundary::surface, "surface"},
         {poisson::Boundary::periodic, "periodic"}}};
};
template <>
struct EnumNames<poisson::Kernel> {
    static constexpr std::string_view what = "kernel";
    static constexpr std::array<std::pair<poisson::Kernel, std::string_view>, 2> table{
        {{poisson::Kernel::hockney, "hockney"}, {poisson::Kernel::regularized4, "regularized4"}}};
};
}  // namespace fftune

namespace fftune::poisson {

using Size = std::array<index_t, 3>;

// Which axes are free (not periodic): free all, wire x and y (periodic in z),
// surface z (periodic in x and y), periodic none.
std::array<bool, 3> free_axes(Boundary b);
// The padded grid: 2 N along free axes, N along periodic ones.
Size padded_size(const Size& n, Boundary b);
double spacing(const Size& n);

// Why `kernel` cannot solve `boundary`, or nothing (regularized4: free only).
std::optional<std::string> kernel_not_applicable(Boundary b, Kernel k);

// Regularisation width of regularized4, in cells: ε = h.
inline constexpr double regularization_cells = 1.0;

// The Green's function before its transform: g at offsets i, j, l in cells
// along free axes (0..N_d) and at wave numbers 2π j / (M_d h) along periodic
// ones (0..M_d/2), stored x slowest. The spectral kernel is its DCT-I along
// each free axis (the DFT of the even extension to M_d = 2 N_d), times
// scale(), folded: kernel(k) = table(min(k_d, M_d − k_d)).
struct GreenTable {
    Size n{0, 0, 0}, m{0, 0, 0};  // the grid and the padded grid
    std::array<bool, 3> free{true, true, true};
    std::array<index_t, 3> t{0, 0, 0};  // extents: N_d + 1 (free), M_d / 2 + 1 (periodic)
    double h = 1;
    Boundary boundary = Boundary::free;
    Kernel kernel = Kernel::hockney;
    std::size_t count() const { return std::size_t(t[0]) * std::size_t(t[1]) * std::size_t(t[2]); }
    // h^(free axes) / (M_x M_y M_z): the unnormalised transforms' 1/M and the cell volume.
    double scale() const;
};
GreenTable green_table(const Size& n, Boundary b, Kernel k);
// The table's value at (i, j, l).
double green_value(const GreenTable& g, index_t i, index_t j, index_t l);

// The kernel the solver multiplies the spectrum with, for the padded grid's
// r2c spectrum (kx, ky, kz ≤ M_z / 2): h^(free axes) Ĝ(k) / (M_x M_y M_z), Ĝ the
// DFT over the free axes of the Green's function sampled there (Fourier along
// periodic axes), so that inverse(kernel · forward(ρ padded)) = φ with the
// unnormalised transforms. Real, since G is even. Returns this rank's part:
// the box of `layout` (its spectrum's layout), in that layout's memory order.
std::vector<double> spectral_kernel(const Size& n, Boundary b, Kernel k, const Layout& layout);
// The same, kept for the next call with the same arguments: a sweep's points
// of one problem (its configurations over one layout) build it once, not per
// point (1.3 s at 256^3, 10-40 s at 512^3-720^3 on a GPU node's host). Holds
// the two most recently used kernels (host memory: 8 bytes per spectrum value
// of the rank each), so that two algorithms' layouts alternating keep theirs.
std::shared_ptr<const std::vector<double>> shared_spectral_kernel(const Size& n, Boundary b, Kernel k,
                                                                  const Layout& layout);

// The analytic test problem of each boundary: ρ and φ at grid point (i, j, l).
struct TestProblem {
    Size n;
    Boundary boundary;
    double rho(index_t i, index_t j, index_t l) const;
    double phi(index_t i, index_t j, index_t l) const;
};

// Stored tolerance of the max relative error for a kernel at size n: C (h/σ)^q
// per boundary and kernel, fitted to the measured errors (README.md: about
// 2x the largest of them at the test sizes; q at most the kernel's order, so
// that it stays a bound as h shrinks); periodic problems are exact up to
// rounding. Single precision adds its rounding floor.
double tolerance(const Size& n, Boundary b, Kernel k, bool single);
// Why the analytic check of boundary b means nothing at size n, or nothing:
// below min_points_charged points along the smallest side (h > 7σ/8) the
// tolerance admits a wrong φ (10% off, or shifted by a cell); periodic
// needs min_points_periodic per axis for its modes (3 periods along x).
std::optional<std::string> size_not_applicable(const Size& n, Boundary b);
// The same for kernel k too: regularized4 needs min_points_regularized4
// along the smallest side, below which its own error (7.8% at 16³, the
// smoothed peak too low) hides a φ 10% too large (it fails from 28 on).
std::optional<std::string> size_not_applicable(const Size& n, Boundary b, Kernel k);
inline constexpr index_t min_points_charged = 16, min_points_periodic = 8, min_points_regularized4 = 28;
// The width σ of the test charges (the smallest box side over 14).
inline constexpr double charge_width = 1.0 / 14;
// Where the test charges sit (x, y, z from the grid's centre; the smallest
// side is 1): off-centre and between grid points, so that slab boundaries at
// 2-4 ranks cut through them, yet 6σ inside every face (e^(−18) cut off).
inline constexpr std::array<double, 3> charge_centre{0.07, -0.05, 0.03};
// The manufactured parts of wire and surface (and periodic's second mode):
// amplitude and width of a Gaussian envelope times a periodic mode.
inline constexpr double test_amplitude = 0.5, test_envelope = 1.5 * charge_width;
int kernel_order(Kernel k);

}  // namespace fftune::poisson
