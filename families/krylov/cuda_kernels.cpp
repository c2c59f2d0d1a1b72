// The cuda backend's Krylov kernels (kernels.hpp), on the backend's stream:
// the launchers of cuda_launch.cu, and for cusparse_csr cuSPARSE's SpMV and
// cuBLAS's vector operations, one call each, as a user would. A reduction's
// device sum comes back through pinned memory: the host needs it for the next
// scalar (α, β).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "families/krylov/cuda_launch.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune::krylov {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, int(s)));
}
void check(cusparseStatus_t s, const char* what) {
    if (s != CUSPARSE_STATUS_SUCCESS)
        throw std::runtime_error(fmt::format("{}: {}", what, cusparseGetErrorString(s)));
}

class CudaKernels final : public KrylovKernels {
public:
    ~CudaKernels() override {
        if (vx_) cusparseDestroyDnVec(vx_);
        if (vy_) cusparseDestroyDnVec(vy_);
        if (mat_) cusparseDestroySpMat(mat_);
        if (sparse_) cusparseDestroy(sparse_);
        if (blas_) cublasDestroy(blas_);
        if (spmv_buffer_) cudaFree(spmv_buffer_);
        if (probe_) cudaFree(probe_);
        if (sum_) cudaFree(sum_);
        if (host_sum_) cudaFreeHost(host_sum_);
    }
    void bind(Backend& backend, const DeviceMatrix& a) override {
        stream_ = static_cast<cudaStream_t>(backend.native_stream());
        check(cudaMalloc(&sum_, sizeof(double)), "cudaMalloc");
        check(cudaMallocHost(&host_sum_, sizeof(double)), "cudaMallocHost");
        library_ = a.format == Format::cusparse_csr;
        if (!library_) return;
        check(cublasCreate(&blas_), "cublasCreate");
        check(cublasSetStream(blas_, stream_), "cublasSetStream");
        check(cusparseCreate(&sparse_), "cusparseCreate");
        check(cusparseSetStream(sparse_, stream_), "cusparseSetStream");
        const long long rows = a.slab.rows(), cols = a.slab.haloed();
        int nnz = 0;
        check(cudaMemcpy(&nnz, a.row_ptr32 + rows, sizeof(nnz), cudaMemcpyDeviceToHost), "cudaMemcpy nnz");
        check(cusparseCreateCsr(&mat_, rows, cols, nnz, const_cast<int*>(a.row_ptr32), const_cast<int*>(a.col),
                                const_cast<double*>(a.val), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
              "cusparseCreateCsr");
        // Placeholder vectors for the buffer size; spmv() points them at its arguments.
        check(cudaMalloc(&probe_, sizeof(double)), "cudaMalloc");
        check(cusparseCreateDnVec(&vx_, cols, probe_, CUDA_R_64F), "cusparseCreateDnVec");
        check(cusparseCreateDnVec(&vy_, rows, probe_, CUDA_R_64F), "cusparseCreateDnVec");
        std::size_t size = 0;
        const double one = 1, zero = 0;
        check(cusparseSpMV_bufferSize(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, CUDA_R_64F,
                                      CUSPARSE_SPMV_CSR_ALG1, &size),
              "cusparseSpMV_bufferSize");
        if (size > 0) check(cudaMalloc(&spmv_buffer_, size), "cudaMalloc");
        check(cudaFree(probe_), "cudaFree");
        probe_ = nullptr;
    }

    double spmv(const DeviceMatrix& a, const double* x, double* y, bool dot) override {
        const Slab& s = a.slab;
        if (s.rows() == 0) return 0;
        if (library_) {
            if (dot) throw std::logic_error("cusparse_csr has no fused dot");
            check(cusparseDnVecSetValues(vx_, const_cast<double*>(x)), "cusparseDnVecSetValues");
            check(cusparseDnVecSetValues(vy_, y), "cusparseDnVecSetValues");
            const double one = 1, zero = 0;
            check(cusparseSpMV(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, CUDA_R_64F,
                               CUSPARSE_SPMV_CSR_ALG1, spmv_buffer_),
                  "cusparseSpMV");
            return 0;
        }
        const KrylovRows g{s.rows(), s.n, s.plane(), s.z0};
        double* sum = dot ? begin_sum() : nullptr;
        const int kind = a.format == Format::csr ? 0 : a.format == Format::ell ? 1 : 2;
        check(launch_spmv(kind, g, reinterpret_cast<const long long*>(a.row_ptr), a.col, a.val, a.ell_width, x, y, sum,
                          stream_),
              "spmv kernel");
        return dot ? end_sum() : 0;
    }
    double dot(const double* a, const double* b, index_t n) override {
        if (n == 0) return 0;
        if (library_) {
            double r = 0;
            check(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
            check(cublasDdot(blas_, static_cast<int>(n), a, 1, b, 1, &r), "cublasDdot");  // waits for the result
            return r;
        }
        double* sum = begin_sum();
        check(launch_dot(a, b, n, sum, stream_), "dot kernel");
        return end_sum();
    }
    void axpy(double alpha, const double* x, double* y, index_t n) override {
        if (n == 0) return;
        if (library_) return check(cublasDaxpy(blas_, static_cast<int>(n), &alpha, x, 1, y, 1), "cublasDaxpy");
        check(launch_axpy(alpha, x, y, n, stream_), "axpy kernel");
    }
    void xpay(const double* x, double beta, double* y, index_t n) override {
        if (n == 0) return;
        if (library_) {  // cuBLAS has no xpay: y = beta y, then y += x
            const double one = 1;
            check(cublasDscal(blas_, static_cast<int>(n), &beta, y, 1), "cublasDscal");
            return check(cublasDaxpy(blas_, static_cast<int>(n), &one, x, 1, y, 1), "cublasDaxpy");
        }
        check(launch_xpay(x, beta, y, n, stream_), "xpay kernel");
    }
    void scale(const double* inv_diag, const double* r, double* z, index_t n) override {
        if (n == 0) return;
        if (library_)  // z = diag(inv_diag) r
            return check(cublasDdgmm(blas_, CUBLAS_SIDE_LEFT, static_cast<int>(n), 1, r, static_cast<int>(n), inv_diag, 1,
                                     z, static_cast<int>(n)),
                         "cublasDdgmm");
        check(launch_scale(inv_diag, r, z, n, stream_), "scale kernel");
    }
    double fused_update(double alpha, const double* p, const double* q, double* x, double* r, const double* inv_diag,
                        double* z, index_t n) override {
        if (n == 0) return 0;
        double* sum = begin_sum();
        check(launch_fused_update(alpha, p, q, x, r, inv_diag, z, n, sum, stream_), "fused update kernel");
        return end_sum();
    }

private:
    double* begin_sum() {
        check(cudaMemsetAsync(sum_, 0, sizeof(double), stream_), "cudaMemsetAsync");
        return sum_;
    }
    double end_sum() {
        check(cudaMemcpyAsync(host_sum_, sum_, sizeof(double), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        return *host_sum_;
    }

    cudaStream_t stream_ = nullptr;
    double* sum_ = nullptr;
    double* host_sum_ = nullptr;
    bool library_ = false;
    cublasHandle_t blas_ = nullptr;
    cusparseHandle_t sparse_ = nullptr;
    cusparseSpMatDescr_t mat_ = nullptr;
    cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
    void* spmv_buffer_ = nullptr;
    double* probe_ = nullptr;
};

const bool registered = register_variant<KrylovKernels, CudaKernels>("cuda");

}  // namespace
}  // namespace fftune::krylov
