// MPI error checking and small RAII helpers. Communicators owned by fftune use
// MPI_ERRORS_RETURN so that FFTUNE_MPI_CHECK can turn failures into exceptions.
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fftune {

struct MpiError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

#define FFTUNE_MPI_CHECK(call)                                                     \
    do {                                                                           \
        const int fftune_mpi_rc_ = (call);                                         \
        if (fftune_mpi_rc_ != MPI_SUCCESS)                                         \
            ::fftune::throw_mpi_error(fftune_mpi_rc_, #call, __FILE__, __LINE__);  \
    } while (0)

// Owning communicator handle (MPI_Comm_free on destruction).
class Communicator {
public:
    Communicator() = default;
    explicit Communicator(MPI_Comm comm) : comm_(comm) {}
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    Communicator(Communicator&& o) noexcept : comm_(o.comm_) { o.comm_ = MPI_COMM_NULL; }
    Communicator& operator=(Communicator&& o) noexcept;
    ~Communicator();

    // Duplicate `comm` and switch the copy to MPI_ERRORS_RETURN.
    static Communicator duplicate(MPI_Comm comm);
    Communicator split(int color, int key) const;

    MPI_Comm get() const { return comm_; }
    int rank() const;
    int size() const;

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

// Owning derived datatype (MPI_Type_free on destruction).
class Datatype {
public:
    Datatype() = default;
    explicit Datatype(MPI_Datatype t) : type_(t) {}
    Datatype(const Datatype&) = delete;
    Datatype& operator=(const Datatype&) = delete;
    Datatype(Datatype&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
    Datatype& operator=(Datatype&& o) noexcept;
    ~Datatype();
    MPI_Datatype get() const { return type_; }

private:
    MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// Most ranks of `comm` on one node (shared-memory domain), agreed by all. Collective.
int ranks_per_node(MPI_Comm comm);

// All ranks of `comm` agree whether every rank succeeded (logical AND).
bool all_ok(MPI_Comm comm, bool ok);

// Some rank's error message, agreed by all ranks (the lowest failing rank's,
// prefixed "rank N: " when name_rank and there are several ranks), or nothing
// when every rank succeeded. Collective.
std::optional<std::string> agree_error(MPI_Comm comm, const std::string& local_error, bool name_rank = true);

// Thrown on the ranks whose own work succeeded when another rank's failed
// (agree_failure): they stop at the same point instead of waiting, in the next
// collective call, for a rank that has left. The failing rank reports why.
struct PeerFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Agrees on rank-local outcomes: when any rank has a failure, every rank
// throws, its own error where it failed, PeerFailed elsewhere. Collective.
void agree_failure(MPI_Comm comm, std::exception_ptr failure);

// Runs rank-local work, then agree_failure on it, so that a failure on one
// rank cannot leave the others in a collective call that it never makes.
// Collective calls inside must be ones that every rank reaches whatever fails
// before them (a transport's setup agrees its own failures first).
// With `earlier`, the failure of a collective step just run (a transform,
// caught by failure_of) is agreed with it, and the work is skipped after it:
// a rank whose transform fails after its last exchange then meets the others
// in this agreement instead of waiting in a different collective call.
// Collective.
template <class F>
void all_or_none(MPI_Comm comm, std::exception_ptr earlier, F&& local_work) {
    if (!earlier) {
        try {
            local_work();
        } catch (...) {
            earlier = std::current_exception();
        }
    }
    agree_failure(comm, earlier);
}

template <class F>
void all_or_none(MPI_Comm comm, F&& local_work) {
    all_or_none(comm, std::exception_ptr(), std::forward<F>(local_work));
}

// What `step` throws, caught; nothing when it returns.
template <class F>
std::exception_ptr failure_of(F&& step) noexcept {
    try {
        step();
        return nullptr;
    } catch (...) {
        return std::current_exception();
    }
}

// Whether MPI accepts device pointers (MPIX_Query_cuda_support where the MPI has
// it; false otherwise), and a short account of how that was decided.
bool mpi_gpu_aware();
std::string mpi_gpu_aware_evidence();

// Checked narrowing to MPI's int counts.
int mpi_count(long long n, const char* what);

}  // namespace fftune
