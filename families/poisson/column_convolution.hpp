// The column stages of zero_skipping_fused, per backend (the backend's name is
// the registry key; "fftw" is the CPU oracle). Element (x, c) of column group
// g is at g·group_stride + x·columns + c (one group: x·columns + c).
// - convolve (the x-stage): a circular convolution of each column along x,
//   the forward transform, the kernel multiply and the inverse in one operation,
//     out[x, c] = Σ_k K[k, c] · e^{+2πi k x / L} · Σ_{x' < kept} in[x', c] e^{−2πi k x' / L},
//   unnormalised (as cuFFT and FFTW: the kernel carries 1/M). Fused, it reads
//   kept rows, writes kept rows and reads K once: 24 bytes per (x < kept)
//   element instead of the three passes' 104 (double, L = 2·kept).
// - forward / inverse (the y-passes): out[k, c] = Σ_{x < kept} in[x, c] e^{∓2πi k x / L}
//   for the rows k < written: a zero-padded transform that reads only the
//   kept rows (the rest are zero and need not be stored), and a truncated one
//   that writes only the rows the next pass reads.
// `in` needs only its rows < kept (an implementation reads no others); only
// rows < written of `out` are written.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"

namespace fftune::poisson {

enum class ColumnMode { convolve, forward, inverse };

struct ColumnProblem {
    index_t length = 0;   // L: the transform's length
    index_t kept = 0;     // rows read from `in` (the rest are zero)
    index_t columns = 0;  // independent columns of a group (the row stride)
    Precision precision = Precision::double_;
    ColumnMode mode = ColumnMode::convolve;
    index_t written = 0;  // rows written to `out`; 0: kept
    index_t groups = 1;   // column groups, each `columns` wide
    index_t in_group_stride = 0, out_group_stride = 0;  // elements between groups (groups > 1)
    index_t rows_written() const { return written > 0 ? written : kept; }
    index_t all_columns() const { return groups * columns; }
};

// Why `p` is no column convolution at all (lengths and counts), or nothing.
std::optional<std::string> column_problem_error(const ColumnProblem& p);

class ColumnConvolution {
public:
    static constexpr const char* kind = "poisson column convolution";
    virtual ~ColumnConvolution() = default;
    // Why it cannot run `p`, or nothing; pure.
    virtual std::optional<std::string> not_applicable(const ColumnProblem& p) const = 0;
    // Plans and work arrays in `backend`'s memory (its bytes: work_bytes()).
    virtual void setup(Backend& backend, const ColumnProblem& p) = 0;
    // Where K's values (L · columns, q·columns + c; convolve only) go in the
    // order run() reads it, after setup(): pieces copied from K into the
    // arranged array (arrange_kernel below). None: K's own order.
    struct KernelPiece {
        StridedRegion to, from;
    };
    virtual std::vector<KernelPiece> kernel_order() const { return {}; }
    // `kernel`: arrange_kernel's order, in the problem's precision (convolve;
    // the transforms take none: nullptr).
    virtual void run(const void* in, const void* kernel, void* out) = 0;
    virtual std::size_t work_bytes() const = 0;
    // Bytes the operation reads and writes in backend memory, per run.
    virtual std::size_t moved_bytes() const = 0;
};

// K (`raw`, in its own order, backend memory, `precision`) into `out` in the
// order `conv` reads it: its kernel_order()'s copies in backend memory (no
// host round trip: at 512^3 the kernel is 4.3 GB).
void arrange_kernel(Backend& backend, const ColumnConvolution& conv, const ColumnProblem& p, const void* raw, void* out);

}  // namespace fftune::poisson

namespace fftune {
FFTUNE_DECLARE_REGISTRY(poisson::ColumnConvolution);
}
