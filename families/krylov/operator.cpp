#include "families/krylov/operator.hpp"

#include <cmath>
#include <stdexcept>

#include "core/base/registry.hpp"

namespace fftune::krylov {

const std::vector<std::string>& format_names() {
    static const std::vector<std::string> names{"csr", "ell", "matrix_free", "cusparse_csr"};
    return names;
}
Format parse_format(const std::string& name) {
    const auto& n = format_names();
    for (std::size_t i = 0; i < n.size(); ++i)
        if (n[i] == name) return static_cast<Format>(i);
    throw std::invalid_argument("unknown format '" + name + "'");
}

Slab slab_of(index_t n, int ranks, int rank) {
    const index_t base = n / ranks, extra = n % ranks;
    Slab s;
    s.n = n;
    s.z0 = rank * base + std::min<index_t>(rank, extra);
    s.z1 = s.z0 + base + (rank < extra ? 1 : 0);
    s.below = s.z0 > 0;
    s.above = s.z1 < n;
    return s;
}

LocalMatrix assemble_poisson7(const Slab& s, bool matrix) {
    LocalMatrix m;
    m.slab = s;
    const index_t n = s.n, plane = s.plane(), rows = s.rows();
    if (!matrix) {
        m.diag.assign(rows, 6.0);
        return m;
    }
    m.row_ptr.reserve(rows + 1);
    m.row_ptr.push_back(0);
    m.diag.assign(rows, 6.0);
    for (index_t z = s.z0; z < s.z1; ++z)
        for (index_t y = 0; y < n; ++y)
            for (index_t x = 0; x < n; ++x) {
                const index_t own = (z - s.z0) * plane + y * n + x + plane;  // in the haloed vector
                auto add = [&](index_t c, double v) {
                    m.col.push_back(static_cast<std::int32_t>(c));
                    m.val.push_back(v);
                };
                // Columns in increasing order.
                if (z > 0) add(own - plane, -1);
                if (y > 0) add(own - n, -1);
                if (x > 0) add(own - 1, -1);
                add(own, 6);
                if (x + 1 < n) add(own + 1, -1);
                if (y + 1 < n) add(own + n, -1);
                if (z + 1 < n) add(own + plane, -1);
                m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
            }
    m.ell_width = 7;
    m.ell_col.assign(static_cast<std::size_t>(7 * rows), 0);
    m.ell_val.assign(static_cast<std::size_t>(7 * rows), 0.0);
    for (index_t i = 0; i < rows; ++i) {
        int k = 0;
        for (auto j = m.row_ptr[i]; j < m.row_ptr[i + 1]; ++j, ++k) {
            m.ell_col[k * rows + i] = m.col[j];
            m.ell_val[k * rows + i] = m.val[j];
        }
        for (; k < 7; ++k) m.ell_col[k * rows + i] = static_cast<std::int32_t>(i + plane);  // padding: own column, value 0
    }
    return m;
}

void poisson7_reference(const Slab& s, const double* xh, double* y) {
    const index_t n = s.n, plane = s.plane();
    for (index_t z = s.z0; z < s.z1; ++z)
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i) {
                const index_t own = (z - s.z0) * plane + j * n + i + plane;
                double v = 6 * xh[own];
                if (i > 0) v -= xh[own - 1];
                if (i + 1 < n) v -= xh[own + 1];
                if (j > 0) v -= xh[own - n];
                if (j + 1 < n) v -= xh[own + n];
                if (z > 0) v -= xh[own - plane];  // a halo plane: the neighbour rank's values
                if (z + 1 < n) v -= xh[own + plane];
                y[own - plane] = v;
            }
}

double manufactured(index_t global_row) { return std::sin(double(global_row)); }

std::size_t spmv_bytes(Format f, const LocalMatrix& m) {
    const std::size_t rows = static_cast<std::size_t>(m.slab.rows()), vectors = 2 * rows * sizeof(double);
    switch (f) {
        case Format::csr: return (rows + 1) * 8 + static_cast<std::size_t>(m.nnz()) * (8 + 4) + vectors;
        case Format::cusparse_csr: return (rows + 1) * 4 + static_cast<std::size_t>(m.nnz()) * (8 + 4) + vectors;
        case Format::ell: return rows * static_cast<std::size_t>(m.ell_width) * (8 + 4) + vectors;
        case Format::matrix_free: return vectors;
    }
    return 0;
}

}  // namespace fftune::krylov
