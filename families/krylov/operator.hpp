// The krylov family's operators and their storage formats (README.md).
// poisson7: the 7-point Laplacian 6u_i - sum of the 6 neighbours on an
// nx × ny × nz grid of interior points (x fastest) with zero Dirichlet
// boundaries (the matrix of -h^2 Δ_h, symmetric positive definite). Rows are
// split in z-slabs over the ranks; a rank's vectors that an SpMV reads carry
// one halo plane below and above (zero where the domain ends), so every row's
// columns index the haloed vector: own row i is column i + nx ny.
// curlcurl13: the E-field curl-curl operator of electromagnetics on a staggered
// (Yee) grid, complex symmetric (README.md): three unknowns per node, so a
// plane holds 3 nx ny rows.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/box.hpp"

namespace fftune::krylov {

// cusparse_csr: the CSR arrays, multiplied by cuSPARSE (the reference users would pick).
enum class Format { csr, ell, matrix_free, cusparse_csr };
const std::vector<std::string>& format_names();
Format parse_format(const std::string& name);

// Rank r's z-planes [z0, z1) of the nx × ny × nz grid: blocks of nz / p, the
// first nz % p one longer.
struct Slab {
    index_t nx = 0, ny = 0, nz = 0, z0 = 0, z1 = 0;
    bool below = false, above = false;  // a neighbour rank owns the plane below z0 / at z1
    int components = 1;                 // unknowns per grid node
    index_t plane() const { return components * nx * ny; }
    index_t rows() const { return (z1 - z0) * plane(); }
    index_t haloed() const { return rows() + 2 * plane(); }
};
// `n`: {nx, ny, nz}, x fastest; the cube overload: n^3.
Slab slab_of(const std::array<index_t, 3>& n, int ranks, int rank, int components = 1);
inline Slab slab_of(index_t n, int ranks, int rank, int components = 1) {
    return slab_of({n, n, n}, ranks, rank, components);
}

// One rank's rows of poisson7 in CSR and ELL (column-major: entry k of row i
// at k * rows + i; short rows padded with column = own, value 0).
template <class S>
struct LocalMatrixT {
    Slab slab;
    std::vector<std::int64_t> row_ptr;
    std::vector<std::int32_t> col;
    std::vector<S> val;
    int ell_width = 0;
    std::vector<std::int32_t> ell_col;
    std::vector<S> ell_val;
    std::vector<S> diag;  // the diagonal (Jacobi)
    std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
};
using complex = std::complex<double>;
using LocalMatrix = LocalMatrixT<double>;
// `matrix`: false leaves CSR and ELL empty (matrix-free needs the diagonal only).
LocalMatrix assemble_poisson7(const Slab& s, bool matrix = true);

// The stencil itself on a haloed vector, serially: the oracle every format's
// SpMV is checked against.
void poisson7_reference(const Slab& s, const double* x_haloed, double* y);

// curlcurl13's rows of a rank (z-slab of 3 nx ny planes), and its oracle: the
// curl applied to the faces and back (not the assembled matrix).
LocalMatrixT<complex> assemble_curlcurl13(const Slab& s);
void curlcurl13_reference(const Slab& s, const complex* x_haloed, complex* y);
// i ω μ σ h² at node (i, j, k): 0.1 in the background, 1 in the central block
// (each coordinate within a quarter of its extent of the centre).
double curlcurl13_sigma(const Slab& s, index_t i, index_t j, index_t k);

// The manufactured solution of global row i (Ginkgo's "sinus"): sin(i), and
// sin(2i) + i sin(2i + 1) for complex operators; b = A x*.
double manufactured(index_t global_row);
complex manufactured_complex(index_t global_row);

// Bytes one SpMV must move per rank: matrix arrays, x once, y once.
template <class S>
std::size_t spmv_bytes(Format f, const LocalMatrixT<S>& m);

}  // namespace fftune::krylov
