// The poisson family's set-up and check in a backend's memory
// (PoissonKernels): the test problem's ρ written in place, φ's error against
// the analytic solution reduced in place, and the spectral kernel built in
// place (green.hpp's table, its DCT-I along the free axes as r2c transforms
// of the even extensions, the fold into a spectrum layout). Before, each
// point sampled ρ, built the kernel and checked φ on the host and copied
// the arrays across: 1.2 s, 0.6-5 s and 1 s at 512^3, for a 23 ms solve.
// The CPU oracle is the host code (green.cpp); the cuda kernels are
// device_kernels_cuda.cu.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/box.hpp"
#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "families/poisson/green.hpp"

namespace fftune::poisson {

// Where a rank's box of the N grid lies in an array: point box.lo + (a, b, c)
// at data[region.offset + a·stride[0] + b·stride[1] + c·stride[2]], the
// region's dimensions x, y, z (extents those of `box`).
struct GridArray {
    void* data = nullptr;
    StridedRegion region;
    Box3 box;
};

// φ against the analytic solution over some x-planes: max |e|, max |φ|,
// whether some value is not finite; Σ e², Σ φ².
struct PhiErrors {
    double max_error = 0, max_exact = 0;
    bool not_finite = false;
    double sum_error2 = 0, sum_exact2 = 0;
};

// Where value j of row q of a chunk of `count` rows of `length` lies. Along
// z (the table's contiguous axis) rows lie one after another, q·length + j;
// along x and y, where a row's values are a table row apart, the rows are
// interleaved, j·count + q: consecutive rows start at consecutive table
// places, so both the gather and the scatter read and write runs of memory
// (row after row, a row's values strided by the table's planes, ran at a
// sector per value on the GPU). The r2c plan of a pass has these strides.
constexpr bool rows_interleaved(int axis) { return axis != 2; }
constexpr index_t row_place(int axis, index_t count, index_t length, index_t q, index_t j) {
    return rows_interleaved(axis) ? j * count + q : q * length + j;
}

class PoissonKernels {
public:
    static constexpr const char* kind = "poisson kernels";
    virtual ~PoissonKernels() = default;
    // Why it cannot evaluate boundary b's Green's function and solution, or nothing.
    virtual std::optional<std::string> not_applicable(Boundary b) const {
        (void)b;
        return std::nullopt;
    }
    // The test problem's ρ at every point of `a` (its precision's reals).
    virtual void fill_rho(Backend& backend, const GridArray& a, const TestProblem& t, Precision precision) = 0;
    // φ in `a` against t.phi over the x-planes `planes` (global, inside a.box). Synchronises.
    virtual PhiErrors phi_errors(Backend& backend, const GridArray& a, const std::vector<index_t>& planes,
                                 const TestProblem& t, Precision precision) = 0;
    // table[(i·t1 + j)·t2 + l] = green_value(g, i, j, l).
    virtual void green_table(Backend& backend, double* table, const GreenTable& g) = 0;
    // Rows [first, first + count) along `axis` (row r: the other two axes'
    // indices, the slower one r / t_b, the faster r % t_b), each extended
    // evenly to L = 2 (t_axis − 1) values: value j of row q, row(min(j, L − j)),
    // at rows[row_place(axis, count, L, q, j)].
    virtual void even_rows(Backend& backend, double* rows, const double* table, const GreenTable& g, int axis,
                           index_t first, index_t count) = 0;
    // The inverse of even_rows' gather for r2c output: row(k) = Re spectra[row_place(axis, count, L/2 + 1, q, k)]
    // (complex elements), k < t_axis.
    virtual void real_rows(Backend& backend, double* table, const double* spectra, const GreenTable& g, int axis,
                           index_t first, index_t count) = 0;
    // out[layout.offset_of(k)] = scale · table(min(k_d, M_d − k_d)) over layout.box, in `precision`.
    virtual void fold(Backend& backend, void* out, const Layout& layout, const double* table, const GreenTable& g,
                      double scale, Precision precision) = 0;
};
// The kernels for `backend` (by its name, else the host ones where its memory
// is the host's), or nullptr where there are none.
std::unique_ptr<PoissonKernels> kernels_for(const Backend& backend);

// The spectral kernel of `layout` (spectral_kernel's values) in `backend`'s
// memory at `out`, in `precision`, built there by `kernels`: the table, a
// DCT-I pass per free axis (r2c transforms of chunks of rows' even
// extensions, at most `chunk_bytes` of rows at a time), the fold.
// `parts`, where given, gets each part's host wall time in ms, each waited
// for on the device: table, then per free axis pass_A.setup (its buffers and
// plans) and pass_A.rows (its chunks), then fold.
void spectral_kernel_on(Backend& backend, PoissonKernels& kernels, const GreenTable& g, const Layout& layout,
                        Precision precision, void* out, std::size_t chunk_bytes = std::size_t(256) << 20,
                        std::map<std::string, double>* parts = nullptr);
// Backend memory spectral_kernel_on holds besides `out`: the table, the
// largest chunk, and its FFT work area (at most a chunk again).
std::size_t spectral_kernel_on_bytes(const GreenTable& g, std::size_t chunk_bytes = std::size_t(256) << 20);

// The spectral kernel into `out` as above: built in backend memory where
// kernels_for(backend) takes the boundary and its work fits in free memory,
// else on the host (shared_spectral_kernel) and uploaded. Returns where it was
// built and, if on the host, why ("backend", or "host: REASON"). In device
// memory the transformed table is kept after the fold for the next point of
// the same grid, boundary and kernel (a sweep's points of one problem differ
// in algorithm, precision and layout, which only the fold sees), which then
// only folds it: "backend (table kept)". At 512^3 the table is 1.1 GB and
// its build 51 ms on an H100, the fold 3 ms.
std::string build_spectral_kernel(Backend& backend, const Size& n, Boundary b, Kernel k, const Layout& layout,
                                  Precision precision, void* out, std::map<std::string, double>* parts = nullptr);
// Lets a kept table go unless it is this problem's: called before a point
// allocates anything (make_solver), so that another problem's table never
// holds memory it needs.
void keep_spectral_table_for(const std::string& backend, const Size& n, Boundary b, Kernel k);

}  // namespace fftune::poisson

namespace fftune {
FFTUNE_DECLARE_REGISTRY(poisson::PoissonKernels);
}
