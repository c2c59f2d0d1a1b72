// The cuda backend's Krylov kernels (kernels.hpp), on the backend's stream,
// one template for real and complex scalars: the launchers of cuda_launch.cu,
// and for cusparse_csr cuSPARSE's SpMV and cuBLAS's vector operations (D or Z
// routines), one call each, as a user would. A reduction's device sum comes
// back through pinned memory: the host needs it for the next scalar (α, β).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "core/platform/cuda_check.hpp"
#include "families/krylov/cuda_launch.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune::krylov {
namespace {

using fftune::check;
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, int(s)));
}
void check(cusparseStatus_t s, const char* what) {
    if (s != CUSPARSE_STATUS_SUCCESS)
        throw std::runtime_error(fmt::format("{}: {}", what, cusparseGetErrorString(s)));
}

// The launchers' format kind (cuda_launch.hpp) and row geometry of a matrix.
template <class S>
int kind_of(const DeviceMatrixT<S>& a) {
    return a.format == Format::csr ? 0 : a.format == Format::ell ? 1 : 2;
}
template <class S>
KrylovRows rows_of(const DeviceMatrixT<S>& a) {
    return {a.slab.rows(), a.slab.nx, a.slab.ny, a.slab.nz, a.slab.plane(), a.slab.z0, a.stencil_rows};
}

// A reduction's device sum (`count` doubles), the per-block slots of a launch
// of many blocks (KrylovSum; `slots` doubles per block, enough for one block
// per 32 of `rows`), and the sum's way back through pinned memory.
class DeviceSum {
public:
    DeviceSum() = default;
    DeviceSum(const DeviceSum&) = delete;
    DeviceSum& operator=(const DeviceSum&) = delete;
    ~DeviceSum() {
        if (sum_) cudaFree(sum_);
        if (partials_) cudaFree(partials_);
        if (host_) cudaFreeHost(host_);
    }
    void bind(cudaStream_t stream, int count, int slots, long long rows) {
        stream_ = stream, count_ = count;
        capacity_ = slots * (rows / 32 + 4096);
        check(cudaMalloc(&sum_, count * sizeof(double)), "cudaMalloc");
        check(cudaMalloc(&partials_, capacity_ * sizeof(double)), "cudaMalloc");
        check(cudaMallocHost(&host_, count * sizeof(double)), "cudaMallocHost");
    }
    // A launch's sum into `target` (count doubles, zeroed here) through these slots; nothing waits.
    KrylovSum into(double* target, int count) {
        check(cudaMemsetAsync(target, 0, count * sizeof(double), stream_), "cudaMemsetAsync");
        return {target, partials_, capacity_};
    }
    KrylovSum begin() { return into(sum_, count_); }
    const double* end() {  // waits for the sum
        check(cudaMemcpyAsync(host_, sum_, count_ * sizeof(double), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        return host_;
    }

private:
    cudaStream_t stream_ = nullptr;
    int count_ = 1;
    long long capacity_ = 0;
    double* sum_ = nullptr;
    double* partials_ = nullptr;
    double* host_ = nullptr;
};

static_assert(sizeof(KrylovScalars<double>) == sizeof(OnePassScalars<double>) &&
              sizeof(KrylovScalars<double2>) == sizeof(OnePassScalars<complex>));

// cuSPARSE's CSR SpMV (ALG1) and a cuBLAS handle on the stream: the library
// reference (cusparse_csr), for values of `type` (CUDA_R_64F or CUDA_C_64F).
class LibraryCsr {
public:
    LibraryCsr() = default;
    LibraryCsr(const LibraryCsr&) = delete;
    LibraryCsr& operator=(const LibraryCsr&) = delete;
    ~LibraryCsr() {
        if (vx_) cusparseDestroyDnVec(vx_);
        if (vy_) cusparseDestroyDnVec(vy_);
        if (mat_) cusparseDestroySpMat(mat_);
        if (sparse_) cusparseDestroy(sparse_);
        if (blas_) cublasDestroy(blas_);
        if (buffer_) cudaFree(buffer_);
    }
    void bind(cudaStream_t stream, const Slab& s, const std::int32_t* row_ptr32, const std::int32_t* col, const void* val,
              cudaDataType type) {
        type_ = type;
        check(cublasCreate(&blas_), "cublasCreate");
        check(cublasSetStream(blas(), stream), "cublasSetStream");
        check(cublasSetPointerMode(blas(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
        check(cusparseCreate(&sparse_), "cusparseCreate");
        check(cusparseSetStream(sparse_, stream), "cusparseSetStream");
        const long long rows = s.rows(), cols = s.haloed();
        int nnz = 0;
        check(cudaMemcpy(&nnz, row_ptr32 + rows, sizeof(nnz), cudaMemcpyDeviceToHost), "cudaMemcpy nnz");
        check(cusparseCreateCsr(&mat_, rows, cols, nnz, const_cast<std::int32_t*>(row_ptr32),
                                const_cast<std::int32_t*>(col), const_cast<void*>(val), CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
              "cusparseCreateCsr");
        // Placeholder vectors for the buffer size; spmv() points them at its arguments.
        void* probe = nullptr;
        check(cudaMalloc(&probe, 16), "cudaMalloc");
        check(cusparseCreateDnVec(&vx_, cols, probe, type), "cusparseCreateDnVec");
        check(cusparseCreateDnVec(&vy_, rows, probe, type), "cusparseCreateDnVec");
        std::size_t size = 0;
        const double2 one{1, 0}, zero{0, 0};
        check(cusparseSpMV_bufferSize(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, type,
                                      CUSPARSE_SPMV_CSR_ALG1, &size),
              "cusparseSpMV_bufferSize");
        if (size > 0) check(cudaMalloc(&buffer_, size), "cudaMalloc");
        check(cudaFree(probe), "cudaFree");
    }
    // y = A x (the scalars 1 and 0 in the values' type: a double2 {1, 0} reads as the double 1).
    void spmv(const void* x, void* y) {
        check(cusparseDnVecSetValues(vx_, const_cast<void*>(x)), "cusparseDnVecSetValues");
        check(cusparseDnVecSetValues(vy_, y), "cusparseDnVecSetValues");
        const double2 one{1, 0}, zero{0, 0};
        check(cusparseSpMV(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, type_,
                           CUSPARSE_SPMV_CSR_ALG1, buffer_),
              "cusparseSpMV");
    }
    cublasHandle_t blas() const { return blas_; }

private:
    cudaDataType type_ = CUDA_R_64F;
    cublasHandle_t blas_ = nullptr;
    cusparseHandle_t sparse_ = nullptr;
    cusparseSpMatDescr_t mat_ = nullptr;
    cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
    void* buffer_ = nullptr;
};

// cuBLAS's D and Z routines under one name per operation (the check names the routine).
const cuDoubleComplex* c(const complex* p) { return reinterpret_cast<const cuDoubleComplex*>(p); }
cuDoubleComplex* c(complex* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
cuDoubleComplex c(complex v) { return {v.real(), v.imag()}; }
double blas_dot(cublasHandle_t h, int n, const double* a, const double* b) {  // waits for the result
    double r = 0;
    check(cublasDdot(h, n, a, 1, b, 1, &r), "cublasDdot");
    return r;
}
complex blas_dot(cublasHandle_t h, int n, const complex* a, const complex* b) {  // unconjugated a^T b
    cuDoubleComplex r{};
    check(cublasZdotu(h, n, c(a), 1, c(b), 1, &r), "cublasZdotu");
    return {r.x, r.y};
}
void blas_axpy(cublasHandle_t h, int n, double a, const double* x, double* y) {
    check(cublasDaxpy(h, n, &a, x, 1, y, 1), "cublasDaxpy");
}
void blas_axpy(cublasHandle_t h, int n, complex a, const complex* x, complex* y) {
    const cuDoubleComplex s = c(a);
    check(cublasZaxpy(h, n, &s, c(x), 1, c(y), 1), "cublasZaxpy");
}
void blas_scal(cublasHandle_t h, int n, double a, double* y) { check(cublasDscal(h, n, &a, y, 1), "cublasDscal"); }
void blas_scal(cublasHandle_t h, int n, complex a, complex* y) {
    const cuDoubleComplex s = c(a);
    check(cublasZscal(h, n, &s, c(y), 1), "cublasZscal");
}
void blas_dgmm(cublasHandle_t h, int n, const double* d, const double* r, double* z) {  // z = diag(d) r
    check(cublasDdgmm(h, CUBLAS_SIDE_LEFT, n, 1, r, n, d, 1, z, n), "cublasDdgmm");
}
void blas_dgmm(cublasHandle_t h, int n, const complex* d, const complex* r, complex* z) {
    check(cublasZdgmm(h, CUBLAS_SIDE_LEFT, n, 1, c(r), n, c(d), 1, c(z), n), "cublasZdgmm");
}

// The launchers' scalar type: double, or double2 for std::complex<double> (same layout).
template <class S>
using Dev = std::conditional_t<std::is_same_v<S, double>, double, double2>;
inline const double* d(const double* p) { return p; }
inline double* d(double* p) { return p; }
inline double d(double v) { return v; }
inline const double2* d(const complex* p) { return reinterpret_cast<const double2*>(p); }
inline double2* d(complex* p) { return reinterpret_cast<double2*>(p); }
inline double2 d(complex v) { return {v.real(), v.imag()}; }

// The cuda kernels for real (poisson7) and complex (curlcurl13) scalars: the
// launchers of cuda_launch.cu, and for cusparse_csr cuSPARSE and cuBLAS's D or
// Z routines, one call per operation (Ddot / Zdotu for the unconjugated a^T b,
// Dznrm2² for the complex norm, Zcopy + a stride-2 Dscal for the conjugate,
// scal + axpy for xpay, dgmm for Jacobi). Complex: csr, ell and cusparse_csr.
template <class S>
class CudaKernels final : public KernelsT<S> {
    static constexpr bool real = std::is_same_v<S, double>;
    static constexpr int parts = sizeof(S) / sizeof(double);

public:
    void bind(Backend& backend, const DeviceMatrixT<S>& a) override {
        if (!real && a.format != Format::csr && a.format != Format::ell && a.format != Format::cusparse_csr)
            throw Unsupported("the cuda complex Krylov kernels multiply csr, ell and cusparse_csr");
        stream_ = static_cast<cudaStream_t>(backend.native_stream());
        sum_.bind(stream_, parts, one_pass_sum_count<S>(true), a.slab.haloed());
        if (a.format != Format::cusparse_csr) return;
        library_ = std::make_unique<LibraryCsr>();
        library_->bind(stream_, a.slab, a.row_ptr32, a.col, a.val, real ? CUDA_R_64F : CUDA_C_64F);
    }
    S spmv(const DeviceMatrixT<S>& a, const S* x, S* y, bool dot) override {
        if (a.slab.rows() == 0) return 0;
        if (library_) {
            if (dot) throw std::logic_error("cusparse_csr has no fused dot");
            library_->spmv(x, y);
            return 0;
        }
        check(launch_spmv(kind_of(a), rows_of(a), row_ptr(a), a.col, d(a.val), a.ell_width, d(x), d(y),
                          dot ? sum_.begin() : KrylovSum{}, stream_),
              "spmv kernel");
        return dot ? result() : S(0);
    }
    S spmv_folded(const DeviceMatrixT<S>& a, S beta, S alpha, const S* r, const S* inv_diag, const S* p, S* p_next, S* x,
                  S* q) override {
        if (a.slab.rows() == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        const KrylovFolded<Dev<S>> f{d(alpha), d(beta), d(r), d(inv_diag), d(p), d(p_next), d(x), d(q)};
        check(launch_spmv_folded(kind_of(a), rows_of(a), row_ptr(a), a.col, d(a.val), a.ell_width, f, sum_.begin(), stream_),
              "folded spmv kernel");
        return result();
    }
    void spmv_one_pass(const DeviceMatrixT<S>& a, const OnePassScalars<S>* sc, const S* r, const S* q, const S* p,
                       const S* inv_diag, S* r_next, S* q_next, S* p_next, S* x, const S* p2, double* sums) override {
        const KrylovSum sum = sum_.into(sums, one_pass_sum_count<S>(!real || inv_diag != nullptr));
        if (a.slab.rows() == 0) return;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        const KrylovOnePass<Dev<S>> f{reinterpret_cast<const KrylovScalars<Dev<S>>*>(sc), d(r), d(q), d(p), d(inv_diag),
                                      d(r_next), d(q_next), d(p_next), d(x), d(p2)};
        check(launch_spmv_one_pass(kind_of(a), rows_of(a), row_ptr(a), a.col, d(a.val), a.ell_width, f, sum, stream_),
              "one-pass spmv kernel");
    }
    void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<S>* sc) override {
        check(launch_one_pass_scalars(sums, norms, pass, reinterpret_cast<KrylovScalars<Dev<S>>*>(sc), stream_),
              "one-pass scalars kernel");
    }
    S update_residual(S alpha, const S* q, S* r, const S* inv_diag, index_t n) override {
        if (n == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        check(launch_update_residual(d(alpha), d(q), d(r), d(inv_diag), n, sum_.begin(), stream_), "residual update kernel");
        return result();
    }
    S dot(const S* a, const S* b, index_t n) override {
        if (n == 0) return 0;
        if (library_) return blas_dot(blas(), int(n), a, b);
        check(launch_dot(d(a), d(b), n, sum_.begin(), stream_), "dot kernel");
        return result();
    }
    double norm2(const S* a, index_t n) override {
        if constexpr (real) {
            return dot(a, a, n);  // the real ‖a‖²: a dot
        } else {
            if (n == 0) return 0;
            if (library_) {
                double r = 0;
                check(cublasDznrm2(blas(), int(n), c(a), 1, &r), "cublasDznrm2");
                return r * r;
            }
            check(launch_norm2(d(a), n, sum_.begin(), stream_), "norm2 kernel");
            return sum_.end()[0];
        }
    }
    void conjugate(const S* x, S* y, index_t n) override {
        if constexpr (real) {
            KernelsT<S>::conjugate(x, y, n);  // none (throws): real operators have no shadow system
        } else {
            if (n == 0) return;
            if (library_) {  // y = x, then the imaginary parts (every second double from y + 1) negated
                check(cublasZcopy(blas(), int(n), c(x), 1, c(y), 1), "cublasZcopy");
                const double minus = -1;
                return check(cublasDscal(blas(), int(n), &minus, reinterpret_cast<double*>(y) + 1, 2), "cublasDscal");
            }
            check(launch_conjugate(d(x), d(y), n, stream_), "conjugate kernel");
        }
    }
    void axpy(S alpha, const S* x, S* y, index_t n) override {
        if (n == 0) return;
        if (library_) return blas_axpy(blas(), int(n), alpha, x, y);
        check(launch_axpy(d(alpha), d(x), d(y), n, stream_), "axpy kernel");
    }
    void xpay(const S* x, S beta, S* y, index_t n) override {
        if (n == 0) return;
        if (library_) {  // cuBLAS has no xpay: y = beta y, then y += x
            blas_scal(blas(), int(n), beta, y);
            return blas_axpy(blas(), int(n), S(1), x, y);
        }
        check(launch_xpay(d(x), d(beta), d(y), n, stream_), "xpay kernel");
    }
    void scal(S a, S* y, index_t n) override {
        if (n == 0) return;
        if (library_) return blas_scal(blas(), int(n), a, y);
        check(launch_scal(d(a), d(y), n, stream_), "scal kernel");
    }
    void scale(const S* inv_diag, const S* r, S* z, index_t n) override {
        if (n == 0) return;
        if (library_) return blas_dgmm(blas(), int(n), inv_diag, r, z);
        check(launch_scale(d(inv_diag), d(r), d(z), n, stream_), "scale kernel");
    }
    S fused_update(S alpha, const S* p, const S* q, S* x, S* r, const S* inv_diag, S* z, index_t n) override {
        if (n == 0) return 0;
        // (the real kernels run the launcher under cusparse_csr too, as they always did)
        if (!real && library_) throw std::logic_error("cusparse_csr has no fused update");
        check(launch_fused_update(d(alpha), d(p), d(q), d(x), d(r), d(inv_diag), d(z), n, sum_.begin(), stream_),
              "fused update kernel");
        return result();
    }

private:
    static const long long* row_ptr(const DeviceMatrixT<S>& a) { return reinterpret_cast<const long long*>(a.row_ptr); }
    cublasHandle_t blas() const { return library_->blas(); }
    S result() {  // waits for the sum
        const double* s = sum_.end();
        if constexpr (real) return s[0];
        else return {s[0], s[1]};
    }
    cudaStream_t stream_ = nullptr;
    DeviceSum sum_;
    std::unique_ptr<LibraryCsr> library_;
};

const bool registered = register_variant<KrylovKernels, CudaKernels<double>>("cuda") &&
                        register_variant<ComplexKernels, CudaKernels<complex>>("cuda");

}  // namespace
}  // namespace fftune::krylov
