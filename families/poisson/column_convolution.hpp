// The x-stage of zero_skipping_fused, per backend (the backend's name is the
// registry key; "fftw" is the CPU oracle): a circular convolution of each
// column of an x-major array along x, the forward transform, the kernel
// multiply and the inverse in one operation,
//   out[x, c] = Σ_k K[k, c] · e^{+2πi k x / L} · Σ_{x' < kept} in[x', c] e^{−2πi k x' / L},   x < kept,
// unnormalised (as cuFFT and FFTW: the kernel carries 1/M). Element (x, c) is
// at x·columns + c. `in` has L rows, those from `kept` on zero (an
// implementation may skip them); only rows < kept of `out` are defined.
// Fused, it reads kept rows, writes kept rows and reads K once: 24 bytes per
// (x < kept) element instead of the three passes' 104 (double, L = 2·kept).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"

namespace fftune::poisson {

struct ColumnProblem {
    index_t length = 0;   // L: the transform's length
    index_t kept = 0;     // rows read from `in` and written to `out`
    index_t columns = 0;  // independent columns (the row stride)
    Precision precision = Precision::double_;
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
    // K (L · columns values, q·columns + c) in the order run() reads it; after
    // setup(). The identity unless an implementation keeps its own order.
    virtual std::vector<double> arrange_kernel(std::vector<double> k) const { return k; }
    // `kernel`: arrange_kernel's order, in the problem's precision.
    virtual void run(const void* in, const void* kernel, void* out) = 0;
    virtual std::size_t work_bytes() const = 0;
    // Bytes the operation reads and writes in backend memory, per run.
    virtual std::size_t moved_bytes() const = 0;
};

}  // namespace fftune::poisson

namespace fftune {
FFTUNE_DECLARE_REGISTRY(poisson::ColumnConvolution);
}
