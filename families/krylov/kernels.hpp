// The vector and matrix kernels a Krylov iteration runs, per backend (the
// backend's name is the registry key: "fftw" is the CPU backend). The solver
// (krylov.cpp) is written once over them; a backend's kernels only touch its own
// memory. Vectors that an SpMV reads are haloed (operator.hpp).
#pragma once

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {

// A rank's operator in backend memory, in the layout of one format.
struct DeviceMatrix {
    Format format = Format::csr;
    Slab slab;
    const std::int64_t* row_ptr = nullptr;    // csr
    const std::int32_t* row_ptr32 = nullptr;  // cusparse_csr (cuSPARSE takes one index type)
    const std::int32_t* col = nullptr;
    const double* val = nullptr;
    int ell_width = 0;
};

class KrylovKernels {
public:
    static constexpr const char* kind = "krylov kernels";
    virtual ~KrylovKernels() = default;
    // Before the first call: the backend whose memory and queue the kernels use,
    // and the operator they will multiply by (library handles are made here).
    virtual void bind(Backend& backend, const DeviceMatrix& a) { (void)backend, (void)a; }
    // y = A x (x haloed, y not). With `dot`, returns (x, y) over the own rows
    // in the same pass (fused); else 0.
    virtual double spmv(const DeviceMatrix& a, const double* x_haloed, double* y, bool dot) = 0;
    virtual double dot(const double* a, const double* b, index_t n) = 0;
    virtual void axpy(double alpha, const double* x, double* y, index_t n) = 0;  // y += alpha x
    virtual void xpay(const double* x, double beta, double* y, index_t n) = 0;   // y = x + beta y
    virtual void scale(const double* inv_diag, const double* r, double* z, index_t n) = 0;  // z = D^-1 r
    // One pass: x += alpha p; r -= alpha q; z = D^-1 r (when inv_diag, else z is r);
    // returns (r, z).
    virtual double fused_update(double alpha, const double* p, const double* q, double* x, double* r,
                                const double* inv_diag, double* z, index_t n) = 0;
};

}  // namespace fftune::krylov

namespace fftune {
FFTUNE_DECLARE_REGISTRY(krylov::KrylovKernels);
}
