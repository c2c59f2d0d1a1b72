// Green's functions and analytic test problems of the poisson family
// (README.md beside this file). Convention: ∇²φ = −4πρ, so a unit point
// charge has φ = 1/r. The grid has N_d points per axis with cubic cells of side
// h = 1 / min(N) (the smallest side is 1), x_i = (i − (N_d − 1)/2) h, and the
// padded grid has M_d = 2 N_d points along a free axis, N_d along a periodic one.
#pragma once

#include <array>
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

// The kernel the solver multiplies the spectrum with, for the padded grid's
// r2c spectrum (kx, ky, kz ≤ M_z / 2): h^(free axes) Ĝ(k) / (M_x M_y M_z), Ĝ the
// DFT over the free axes of the Green's function sampled there (Fourier along
// periodic axes), so that inverse(kernel · forward(ρ padded)) = φ with the
// unnormalised transforms. Real, since G is even. Returns this rank's part:
// the box of `layout` (its spectrum's layout), in that layout's memory order.
std::vector<double> spectral_kernel(const Size& n, Boundary b, Kernel k, const Layout& layout);

// The analytic test problem of each boundary: ρ and φ at grid point (i, j, l).
struct TestProblem {
    Size n;
    Boundary boundary;
    double rho(index_t i, index_t j, index_t l) const;
    double phi(index_t i, index_t j, index_t l) const;
};

// Stored tolerance of the max relative error for a kernel at size n:
// C (h / σ)^p with the kernel's order p (hockney 2, regularized4 4) and a
// constant C from the convergence runs (README.md); periodic problems are
// exact up to rounding. Single precision adds its rounding floor.
double tolerance(const Size& n, Boundary b, Kernel k, bool single);
// The width σ of the test charges (the smallest box side over 14).
inline constexpr double charge_width = 1.0 / 14;
int kernel_order(Kernel k);

}  // namespace fftune::poisson
