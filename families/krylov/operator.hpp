// The krylov family's operators and their storage formats (README.md).
// poisson7: the 7-point Laplacian 6u_i - sum of the 6 neighbours on an n^3
// grid of interior points with zero Dirichlet boundaries (the matrix of
// -h^2 Δ_h, symmetric positive definite). Rows are split in z-slabs over the
// ranks; a rank's vectors that an SpMV reads carry one halo plane below and
// above (zero where the domain ends), so every row's columns index the
// haloed vector: own row i is column i + n^2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/box.hpp"

namespace fftune::krylov {

// cusparse_csr: the CSR arrays, multiplied by cuSPARSE (the reference users would pick).
enum class Format { csr, ell, matrix_free, cusparse_csr };
const std::vector<std::string>& format_names();
Format parse_format(const std::string& name);

// Rank r's z-planes [z0, z1) of the n^3 grid: blocks of n / p, the first n % p one longer.
struct Slab {
    index_t n = 0, z0 = 0, z1 = 0;
    bool below = false, above = false;  // a neighbour rank owns the plane below z0 / at z1
    index_t plane() const { return n * n; }
    index_t rows() const { return (z1 - z0) * plane(); }
    index_t haloed() const { return rows() + 2 * plane(); }
};
Slab slab_of(index_t n, int ranks, int rank);

// One rank's rows of poisson7 in CSR and ELL (column-major: entry k of row i
// at k * rows + i; short rows padded with column = own, value 0).
struct LocalMatrix {
    Slab slab;
    std::vector<std::int64_t> row_ptr;
    std::vector<std::int32_t> col;
    std::vector<double> val;
    int ell_width = 0;
    std::vector<std::int32_t> ell_col;
    std::vector<double> ell_val;
    std::vector<double> diag;  // the diagonal (Jacobi)
    std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
};
// `matrix`: false leaves CSR and ELL empty (matrix-free needs the diagonal only).
LocalMatrix assemble_poisson7(const Slab& s, bool matrix = true);

// The stencil itself on a haloed vector, serially: the oracle every format's
// SpMV is checked against.
void poisson7_reference(const Slab& s, const double* x_haloed, double* y);

// The manufactured solution x*_i = sin(i) of global row i (Ginkgo's "sinus"); b = A x*.
double manufactured(index_t global_row);

// Bytes one SpMV must move per rank: matrix arrays, x once, y once.
std::size_t spmv_bytes(Format f, const LocalMatrix& m);

}  // namespace fftune::krylov
