// The cuda backend's Krylov kernels (kernels.hpp), on the backend's stream:
// the launchers of cuda_launch.cu (double and complex), and for cusparse_csr
// cuSPARSE's SpMV and cuBLAS's vector operations (D or Z routines), one call
// each, as a user would. A reduction's
// device sum comes back through pinned memory: the host needs it for the next
// scalar (α, β).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

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
    return {a.slab.rows(), a.slab.n, a.slab.plane(), a.slab.z0, a.stencil_rows};
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

// The complex kernels (curlcurl13): csr and ell with the launchers of
// cuda_launch.cu (complex<double> as double2), and cusparse_csr with cuSPARSE
// and cuBLAS's Z routines, one call per operation (zdotu for the unconjugated
// a^T b, dznrm2², zcopy + a stride-2 dscal for the conjugate, zscal + zaxpy for
// xpay, zdgmm for Jacobi).
class CudaComplexKernels final : public ComplexKernels {
public:
    void bind(Backend& backend, const DeviceMatrixT<complex>& a) override {
        if (a.format != Format::csr && a.format != Format::ell && a.format != Format::cusparse_csr)
            throw Unsupported("the cuda complex Krylov kernels multiply csr, ell and cusparse_csr");
        stream_ = static_cast<cudaStream_t>(backend.native_stream());
        sum_.bind(stream_, 2, one_pass_sum_count<complex>(true), a.slab.haloed());
        if (a.format == Format::cusparse_csr) {
            library_ = std::make_unique<LibraryCsr>();
            library_->bind(stream_, a.slab, a.row_ptr32, a.col, a.val, CUDA_C_64F);
        }
    }
    complex spmv(const DeviceMatrixT<complex>& a, const complex* x, complex* y, bool dot) override {
        const Slab& s = a.slab;
        if (s.rows() == 0) return 0;
        if (library_) {
            if (dot) throw std::logic_error("cusparse_csr has no fused dot");
            library_->spmv(x, y);
            return 0;
        }
        check(launch_spmv(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, z(a.val),
                          a.ell_width, z(x), z(y), dot ? sum_.begin() : KrylovSum{}, stream_),
              "spmv kernel");
        return dot ? result() : complex(0);
    }
    complex spmv_folded(const DeviceMatrixT<complex>& a, complex beta, complex alpha, const complex* r,
                        const complex* inv_diag, const complex* p, complex* p_next, complex* x, complex* q) override {
        if (a.slab.rows() == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        const KrylovFolded<double2> f{z(alpha), z(beta), z(r), inv_diag ? z(inv_diag) : nullptr, z(p), z(p_next), z(x), z(q)};
        check(launch_spmv_folded(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, z(a.val),
                                 a.ell_width, f, sum_.begin(), stream_),
              "folded spmv kernel");
        return result();
    }
    void spmv_one_pass(const DeviceMatrixT<complex>& a, const OnePassScalars<complex>* sc, const complex* r,
                       const complex* q, const complex* p, const complex* inv_diag, complex* r_next, complex* q_next,
                       complex* p_next, complex* x, const complex* p2, double* sums) override {
        const KrylovSum sum = sum_.into(sums, one_pass_sum_count<complex>(true));
        if (a.slab.rows() == 0) return;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        const KrylovOnePass<double2> f{reinterpret_cast<const KrylovScalars<double2>*>(sc), z(r), z(q), z(p),
                                       inv_diag ? z(inv_diag) : nullptr, z(r_next), z(q_next), z(p_next),
                                       x ? z(x) : nullptr, p2 ? z(p2) : nullptr};
        check(launch_spmv_one_pass(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, z(a.val),
                                   a.ell_width, f, sum, stream_),
              "one-pass spmv kernel");
    }
    void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<complex>* sc) override {
        check(launch_one_pass_scalars(sums, norms, pass, reinterpret_cast<KrylovScalars<double2>*>(sc), stream_),
              "one-pass scalars kernel");
    }
    complex update_residual(complex alpha, const complex* q, complex* r, const complex* inv_diag, index_t n) override {
        if (n == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        check(launch_update_residual(z(alpha), z(q), z(r), inv_diag ? z(inv_diag) : nullptr, n, sum_.begin(), stream_),
              "residual update kernel");
        return result();
    }
    complex dot(const complex* a, const complex* b, index_t n) override {
        if (n == 0) return 0;
        if (library_) {
            cuDoubleComplex r{};
            check(cublasZdotu(blas(), int(n), c(a), 1, c(b), 1, &r), "cublasZdotu");  // waits for the result
            return {r.x, r.y};
        }
        check(launch_dot(z(a), z(b), n, sum_.begin(), stream_), "dot kernel");
        return result();
    }
    double norm2(const complex* a, index_t n) override {
        if (n == 0) return 0;
        if (library_) {
            double r = 0;
            check(cublasDznrm2(blas(), int(n), c(a), 1, &r), "cublasDznrm2");
            return r * r;
        }
        check(launch_norm2(z(a), n, sum_.begin(), stream_), "norm2 kernel");
        return sum_.end()[0];
    }
    void conjugate(const complex* x, complex* y, index_t n) override {
        if (n == 0) return;
        if (library_) {  // y = x, then the imaginary parts (every second double from y + 1) negated
            check(cublasZcopy(blas(), int(n), c(x), 1, c(y), 1), "cublasZcopy");
            const double minus = -1;
            return check(cublasDscal(blas(), int(n), &minus, reinterpret_cast<double*>(y) + 1, 2), "cublasDscal");
        }
        check(launch_conjugate(z(x), z(y), n, stream_), "conjugate kernel");
    }
    void axpy(complex alpha, const complex* x, complex* y, index_t n) override {
        if (n == 0) return;
        if (library_) {
            const cuDoubleComplex a{alpha.real(), alpha.imag()};
            return check(cublasZaxpy(blas(), int(n), &a, c(x), 1, c(y), 1), "cublasZaxpy");
        }
        check(launch_axpy(z(alpha), z(x), z(y), n, stream_), "axpy kernel");
    }
    void xpay(const complex* x, complex beta, complex* y, index_t n) override {
        if (n == 0) return;
        if (library_) {  // cuBLAS has no xpay: y = beta y, then y += x
            const cuDoubleComplex b{beta.real(), beta.imag()}, one{1, 0};
            check(cublasZscal(blas(), int(n), &b, c(y), 1), "cublasZscal");
            return check(cublasZaxpy(blas(), int(n), &one, c(x), 1, c(y), 1), "cublasZaxpy");
        }
        check(launch_xpay(z(x), z(beta), z(y), n, stream_), "xpay kernel");
    }
    void scal(complex a, complex* y, index_t n) override {
        if (n == 0) return;
        if (library_) {
            const cuDoubleComplex s{a.real(), a.imag()};
            return check(cublasZscal(blas(), int(n), &s, c(y), 1), "cublasZscal");
        }
        check(launch_scal(z(a), z(y), n, stream_), "scal kernel");
    }
    void scale(const complex* inv_diag, const complex* r, complex* zz, index_t n) override {
        if (n == 0) return;
        if (library_)  // zz = diag(inv_diag) r
            return check(cublasZdgmm(blas(), CUBLAS_SIDE_LEFT, int(n), 1, c(r), int(n), c(inv_diag), 1, c(zz), int(n)),
                         "cublasZdgmm");
        check(launch_scale(z(inv_diag), z(r), z(zz), n, stream_), "scale kernel");
    }
    complex fused_update(complex alpha, const complex* p, const complex* q, complex* x, complex* r,
                         const complex* inv_diag, complex* zz, index_t n) override {
        if (n == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr has no fused update");
        check(launch_fused_update(z(alpha), z(p), z(q), z(x), z(r), inv_diag ? z(inv_diag) : nullptr, z(zz), n,
                                  sum_.begin(), stream_),
              "fused update kernel");
        return result();
    }

private:
    static const double2* z(const complex* p) { return reinterpret_cast<const double2*>(p); }
    static double2* z(complex* p) { return reinterpret_cast<double2*>(p); }
    static double2 z(complex v) { return {v.real(), v.imag()}; }
    static const cuDoubleComplex* c(const complex* p) { return reinterpret_cast<const cuDoubleComplex*>(p); }
    static cuDoubleComplex* c(complex* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
    cublasHandle_t blas() const { return library_->blas(); }
    complex result() {
        const double* s = sum_.end();
        return {s[0], s[1]};
    }
    cudaStream_t stream_ = nullptr;
    DeviceSum sum_;
    std::unique_ptr<LibraryCsr> library_;
};

class CudaKernels final : public KrylovKernels {
public:
    void bind(Backend& backend, const DeviceMatrix& a) override {
        stream_ = static_cast<cudaStream_t>(backend.native_stream());
        sum_.bind(stream_, 1, one_pass_sum_count<double>(true), a.slab.haloed());
        if (a.format != Format::cusparse_csr) return;
        library_ = std::make_unique<LibraryCsr>();
        library_->bind(stream_, a.slab, a.row_ptr32, a.col, a.val, CUDA_R_64F);
    }

    double spmv(const DeviceMatrix& a, const double* x, double* y, bool dot) override {
        const Slab& s = a.slab;
        if (s.rows() == 0) return 0;
        if (library_) {
            if (dot) throw std::logic_error("cusparse_csr has no fused dot");
            library_->spmv(x, y);
            return 0;
        }
        check(launch_spmv(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, a.val, a.ell_width,
                          x, y, dot ? begin_sum() : KrylovSum{}, stream_),
              "spmv kernel");
        return dot ? end_sum() : 0;
    }
    double spmv_folded(const DeviceMatrix& a, double beta, double alpha, const double* r, const double* inv_diag,
                       const double* p, double* p_next, double* x, double* q) override {
        if (a.slab.rows() == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        check(launch_spmv_folded(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, a.val,
                                 a.ell_width, KrylovFolded<double>{alpha, beta, r, inv_diag, p, p_next, x, q}, begin_sum(),
                                 stream_),
              "folded spmv kernel");
        return end_sum();
    }
    void spmv_one_pass(const DeviceMatrix& a, const OnePassScalars<double>* sc, const double* r, const double* q,
                       const double* p, const double* inv_diag, double* r_next, double* q_next, double* p_next, double* x,
                       const double* p2, double* sums) override {
        const KrylovSum sum = sum_.into(sums, one_pass_sum_count<double>(inv_diag != nullptr));
        if (a.slab.rows() == 0) return;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        const KrylovOnePass<double> f{reinterpret_cast<const KrylovScalars<double>*>(sc), r, q, p, inv_diag, r_next,
                                      q_next, p_next, x, p2};
        check(launch_spmv_one_pass(kind_of(a), rows_of(a), reinterpret_cast<const long long*>(a.row_ptr), a.col, a.val,
                                   a.ell_width, f, sum, stream_),
              "one-pass spmv kernel");
    }
    void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<double>* sc) override {
        check(launch_one_pass_scalars(sums, norms, pass, reinterpret_cast<KrylovScalars<double>*>(sc), stream_),
              "one-pass scalars kernel");
    }
    double update_residual(double alpha, const double* q, double* r, const double* inv_diag, index_t n) override {
        if (n == 0) return 0;
        if (library_) throw std::logic_error("cusparse_csr does not fold");
        check(launch_update_residual(alpha, q, r, inv_diag, n, begin_sum(), stream_), "residual update kernel");
        return end_sum();
    }
    double dot(const double* a, const double* b, index_t n) override {
        if (n == 0) return 0;
        if (library_) {
            double r = 0;
            check(cublasDdot(blas(), static_cast<int>(n), a, 1, b, 1, &r), "cublasDdot");  // waits for the result
            return r;
        }
        check(launch_dot(a, b, n, begin_sum(), stream_), "dot kernel");
        return end_sum();
    }
    void axpy(double alpha, const double* x, double* y, index_t n) override {
        if (n == 0) return;
        if (library_) return check(cublasDaxpy(blas(), static_cast<int>(n), &alpha, x, 1, y, 1), "cublasDaxpy");
        check(launch_axpy(alpha, x, y, n, stream_), "axpy kernel");
    }
    void xpay(const double* x, double beta, double* y, index_t n) override {
        if (n == 0) return;
        if (library_) {  // cuBLAS has no xpay: y = beta y, then y += x
            const double one = 1;
            check(cublasDscal(blas(), static_cast<int>(n), &beta, y, 1), "cublasDscal");
            return check(cublasDaxpy(blas(), static_cast<int>(n), &one, x, 1, y, 1), "cublasDaxpy");
        }
        check(launch_xpay(x, beta, y, n, stream_), "xpay kernel");
    }
    void scal(double a, double* y, index_t n) override {
        if (n == 0) return;
        if (library_) return check(cublasDscal(blas(), static_cast<int>(n), &a, y, 1), "cublasDscal");
        check(launch_scal(a, y, n, stream_), "scal kernel");
    }
    void scale(const double* inv_diag, const double* r, double* z, index_t n) override {
        if (n == 0) return;
        if (library_)  // z = diag(inv_diag) r
            return check(cublasDdgmm(blas(), CUBLAS_SIDE_LEFT, static_cast<int>(n), 1, r, static_cast<int>(n), inv_diag, 1,
                                     z, static_cast<int>(n)),
                         "cublasDdgmm");
        check(launch_scale(inv_diag, r, z, n, stream_), "scale kernel");
    }
    double fused_update(double alpha, const double* p, const double* q, double* x, double* r, const double* inv_diag,
                        double* z, index_t n) override {
        if (n == 0) return 0;
        check(launch_fused_update(alpha, p, q, x, r, inv_diag, z, n, begin_sum(), stream_), "fused update kernel");
        return end_sum();
    }

private:
    KrylovSum begin_sum() { return sum_.begin(); }
    double end_sum() { return sum_.end()[0]; }
    cublasHandle_t blas() const { return library_->blas(); }

    cudaStream_t stream_ = nullptr;
    DeviceSum sum_;
    std::unique_ptr<LibraryCsr> library_;
};

const bool registered = register_variant<KrylovKernels, CudaKernels>("cuda") &&
                        register_variant<ComplexKernels, CudaComplexKernels>("cuda");

}  // namespace
}  // namespace fftune::krylov
