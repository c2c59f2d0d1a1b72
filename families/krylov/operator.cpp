#include "families/krylov/operator.hpp"

#include <array>
#include <cmath>
#include <map>
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

Slab slab_of(const std::array<index_t, 3>& n, int ranks, int rank, int components) {
    const index_t base = n[2] / ranks, extra = n[2] % ranks;
    Slab s;
    s.nx = n[0], s.ny = n[1], s.nz = n[2];
    s.components = components;
    s.z0 = rank * base + std::min<index_t>(rank, extra);
    s.z1 = s.z0 + base + (rank < extra ? 1 : 0);
    s.below = s.z0 > 0;
    s.above = s.z1 < s.nz;
    return s;
}

LocalMatrix assemble_poisson7(const Slab& s, bool matrix) {
    LocalMatrix m;
    m.slab = s;
    const index_t nx = s.nx, ny = s.ny, nz = s.nz, plane = s.plane(), rows = s.rows();
    if (!matrix) {
        m.diag.assign(rows, 6.0);
        return m;
    }
    m.row_ptr.reserve(rows + 1);
    m.row_ptr.push_back(0);
    m.diag.assign(rows, 6.0);
    for (index_t z = s.z0; z < s.z1; ++z)
        for (index_t y = 0; y < ny; ++y)
            for (index_t x = 0; x < nx; ++x) {
                const index_t own = (z - s.z0) * plane + y * nx + x + plane;  // in the haloed vector
                auto add = [&](index_t c, double v) {
                    m.col.push_back(static_cast<std::int32_t>(c));
                    m.val.push_back(v);
                };
                // Columns in increasing order.
                if (z > 0) add(own - plane, -1);
                if (y > 0) add(own - nx, -1);
                if (x > 0) add(own - 1, -1);
                add(own, 6);
                if (x + 1 < nx) add(own + 1, -1);
                if (y + 1 < ny) add(own + nx, -1);
                if (z + 1 < nz) add(own + plane, -1);
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
    const index_t nx = s.nx, ny = s.ny, plane = s.plane();
    for (index_t z = s.z0; z < s.z1; ++z)
        for (index_t j = 0; j < ny; ++j)
            for (index_t i = 0; i < nx; ++i) {
                const index_t own = (z - s.z0) * plane + j * nx + i + plane;
                double v = 6 * xh[own];
                if (i > 0) v -= xh[own - 1];
                if (i + 1 < nx) v -= xh[own + 1];
                if (j > 0) v -= xh[own - nx];
                if (j + 1 < ny) v -= xh[own + nx];
                if (z > 0) v -= xh[own - plane];  // a halo plane: the neighbour rank's values
                if (z + 1 < s.nz) v -= xh[own + plane];
                y[own - plane] = v;
            }
}

double manufactured(index_t global_row) { return std::sin(double(global_row)); }

template <class S>
std::size_t spmv_bytes(Format f, const LocalMatrixT<S>& m) {
    const std::size_t rows = static_cast<std::size_t>(m.slab.rows()), vectors = 2 * rows * sizeof(S);
    const std::size_t entry = sizeof(S) + 4;  // value and 32-bit column
    switch (f) {
        case Format::csr: return (rows + 1) * 8 + static_cast<std::size_t>(m.nnz()) * entry + vectors;
        case Format::cusparse_csr: return (rows + 1) * 4 + static_cast<std::size_t>(m.nnz()) * entry + vectors;
        case Format::ell: return rows * static_cast<std::size_t>(m.ell_width) * entry + vectors;
        case Format::matrix_free: return vectors;
    }
    return 0;
}
template std::size_t spmv_bytes(Format, const LocalMatrixT<double>&);
template std::size_t spmv_bytes(Format, const LocalMatrixT<complex>&);

complex manufactured_complex(index_t g) { return {std::sin(2.0 * double(g)), std::sin(2.0 * double(g) + 1)}; }

double curlcurl13_sigma(const Slab& s, index_t i, index_t j, index_t k) {
    // within a quarter of the extent m of the centre (m - 1)/2, on each axis
    auto near = [](index_t v, index_t m) { return std::abs(double(v) - 0.5 * double(m - 1)) <= 0.25 * double(m); };
    return near(i, s.nx) && near(j, s.ny) && near(k, s.nz) ? 1.0 : 0.1;
}

namespace {

// An edge of the Yee grid: component c (0 x, 1 y, 2 z) at node (i, j, k), and
// its sign in a face's curl.
struct Edge {
    int c;
    index_t i, j, k;
    double sign;
};
// The discrete curl of a face (normal t at node (i, j, k)), zero outside the domain:
//   z: Ey(i+1,j,k) - Ey(i,j,k) - Ex(i,j+1,k) + Ex(i,j,k)
//   y: Ex(i,j,k+1) - Ex(i,j,k) - Ez(i+1,j,k) + Ez(i,j,k)
//   x: Ez(i,j+1,k) - Ez(i,j,k) - Ey(i,j,k+1) + Ey(i,j,k)
std::array<Edge, 4> face_edges(int t, index_t i, index_t j, index_t k) {
    switch (t) {
        case 2: return {{{1, i + 1, j, k, 1}, {1, i, j, k, -1}, {0, i, j + 1, k, -1}, {0, i, j, k, 1}}};
        case 1: return {{{0, i, j, k + 1, 1}, {0, i, j, k, -1}, {2, i + 1, j, k, -1}, {2, i, j, k, 1}}};
        default: return {{{2, i, j + 1, k, 1}, {2, i, j, k, -1}, {1, i, j, k + 1, -1}, {1, i, j, k, 1}}};
    }
}
bool inside(const Edge& e, const Slab& s) {
    return e.i >= 0 && e.i < s.nx && e.j >= 0 && e.j < s.ny && e.k >= 0 && e.k < s.nz;
}
// Index of an edge in a rank's haloed vector (halo plane below first).
index_t haloed_index(const Slab& s, const Edge& e) {
    return (((e.k - s.z0 + 1) * s.ny + e.j) * s.nx + e.i) * 3 + e.c;
}
bool own(const Slab& s, const Edge& e) { return e.k >= s.z0 && e.k < s.z1; }

// Calls f(face's in-domain edges) for every face touching this rank's rows: a
// face at k has edges at k and k + 1, so k from z0 - 1 to z1 - 1 (its edges then
// lie in the haloed planes).
template <class F>
void for_faces(const Slab& s, F f) {
    for (index_t k = s.z0 - 1; k < s.z1; ++k)
        for (index_t j = -1; j < s.ny; ++j)
            for (index_t i = -1; i < s.nx; ++i)
                for (int t = 0; t < 3; ++t) {
                    std::array<Edge, 4> all = face_edges(t, i, j, k);
                    std::array<Edge, 4> in{};
                    int m = 0;
                    for (const Edge& e : all)
                        if (inside(e, s)) in[m++] = e;
                    f(in, m);
                }
}

}  // namespace

LocalMatrixT<complex> assemble_curlcurl13(const Slab& s) {
    LocalMatrixT<complex> m;
    m.slab = s;
    const index_t rows = s.rows(), plane = s.plane();
    // Row r's entries by column: A = C^T C + i σ.
    std::vector<std::map<std::int32_t, complex>> acc(static_cast<std::size_t>(rows));
    for_faces(s, [&](const std::array<Edge, 4>& in, int count) {
        for (int a = 0; a < count; ++a) {
            if (!own(s, in[a])) continue;
            auto& row = acc[static_cast<std::size_t>(haloed_index(s, in[a]) - plane)];
            for (int b = 0; b < count; ++b)
                row[static_cast<std::int32_t>(haloed_index(s, in[b]))] += in[a].sign * in[b].sign;
        }
    });
    m.row_ptr.push_back(0);
    m.diag.resize(static_cast<std::size_t>(rows));
    int width = 0;
    for (index_t r = 0; r < rows; ++r) {
        const index_t node = (r / 3), i = node % s.nx, j = (node / s.nx) % s.ny, k = s.z0 + node / (s.nx * s.ny);
        auto& row = acc[static_cast<std::size_t>(r)];
        row[static_cast<std::int32_t>(r + plane)] += complex(0, curlcurl13_sigma(s, i, j, k));
        for (const auto& [c, v] : row) {
            m.col.push_back(c);
            m.val.push_back(v);
            if (c == r + plane) m.diag[r] = v;
        }
        width = std::max<int>(width, static_cast<int>(row.size()));
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    m.ell_width = width;
    m.ell_col.assign(static_cast<std::size_t>(width * rows), 0);
    m.ell_val.assign(static_cast<std::size_t>(width * rows), complex(0));
    for (index_t r = 0; r < rows; ++r) {
        int k = 0;
        for (auto j = m.row_ptr[r]; j < m.row_ptr[r + 1]; ++j, ++k) {
            m.ell_col[k * rows + r] = m.col[j];
            m.ell_val[k * rows + r] = m.val[j];
        }
        for (; k < width; ++k) m.ell_col[k * rows + r] = static_cast<std::int32_t>(r + plane);
    }
    return m;
}

void curlcurl13_reference(const Slab& s, const complex* x, complex* y) {
    const index_t rows = s.rows(), plane = s.plane();
    for (index_t r = 0; r < rows; ++r) {
        const index_t node = r / 3, i = node % s.nx, j = (node / s.nx) % s.ny, k = s.z0 + node / (s.nx * s.ny);
        y[r] = complex(0, curlcurl13_sigma(s, i, j, k)) * x[r + plane];
    }
    for_faces(s, [&](const std::array<Edge, 4>& in, int count) {
        complex curl = 0;  // the face's curl of x
        for (int b = 0; b < count; ++b) curl += in[b].sign * x[haloed_index(s, in[b])];
        for (int a = 0; a < count; ++a)
            if (own(s, in[a])) y[haloed_index(s, in[a]) - plane] += in[a].sign * curl;
    });
}

}  // namespace fftune::krylov
