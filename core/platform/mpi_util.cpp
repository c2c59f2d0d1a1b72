#include "core/platform/mpi_util.hpp"

#include <climits>

#include <fmt/format.h>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace fftune {

bool mpi_gpu_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

std::string mpi_gpu_aware_evidence() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return fmt::format("MPIX_Query_cuda_support() = {}", MPIX_Query_cuda_support());
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
    return "built without CUDA support: MPIX_CUDA_AWARE_SUPPORT = 0";
#else
    return "the MPI library offers no MPIX_Query_cuda_support";
#endif
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
    throw MpiError(fmt::format("{}:{}: {} failed: {}", file, line, call, std::string(text, len)));
}

Communicator& Communicator::operator=(Communicator&& o) noexcept {
    if (this != &o) {
        if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
        comm_ = o.comm_;
        o.comm_ = MPI_COMM_NULL;
    }
    return *this;
}

Communicator::~Communicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

Communicator Communicator::duplicate(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    FFTUNE_MPI_CHECK(MPI_Comm_dup(comm, &dup));
    FFTUNE_MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    return Communicator(dup);
}

Communicator Communicator::split(int color, int key) const {
    MPI_Comm out = MPI_COMM_NULL;
    FFTUNE_MPI_CHECK(MPI_Comm_split(comm_, color, key, &out));
    FFTUNE_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
    return Communicator(out);
}

int Communicator::rank() const {
    int r = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(comm_, &r));
    return r;
}

int Communicator::size() const {
    int s = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_size(comm_, &s));
    return s;
}

Datatype& Datatype::operator=(Datatype&& o) noexcept {
    if (this != &o) {
        if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
        type_ = o.type_;
        o.type_ = MPI_DATATYPE_NULL;
    }
    return *this;
}

Datatype::~Datatype() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

int ranks_per_node(MPI_Comm comm) {
    MPI_Comm node = MPI_COMM_NULL;
    FFTUNE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int mine = 0, most = 0;
    MPI_Comm_size(node, &mine);
    MPI_Comm_free(&node);
    FFTUNE_MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_MAX, comm));
    return most;
}

bool all_ok(MPI_Comm comm, bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
    return all == 1;
}

void agree_failure(MPI_Comm comm, std::exception_ptr failure) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = failure ? rank : size, first = size;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (failure) std::rethrow_exception(failure);
    if (first < size) throw PeerFailed(fmt::format("stopped because rank {} of {} failed", first, size));
}

std::optional<std::string> agree_error(MPI_Comm comm, const std::string& local_error, bool name_rank) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = local_error.empty() ? size : rank, first = size;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first == size) return std::nullopt;
    int len = rank == first ? static_cast<int>(local_error.size()) : 0;
    FFTUNE_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, first, comm));
    std::string msg = rank == first ? local_error : std::string(len, ' ');
    FFTUNE_MPI_CHECK(MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm));
    return size > 1 && name_rank ? fmt::format("rank {}: {}", first, msg) : msg;
}

int mpi_count(long long n, const char* what) {
    if (n < 0 || n > INT_MAX)
        throw std::overflow_error(fmt::format("{} = {} does not fit MPI's int count", what, n));
    return static_cast<int>(n);
}

}  // namespace fftune
