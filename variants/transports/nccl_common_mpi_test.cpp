// NCCL communicators are made once per group of ranks (nccl_common.hpp):
// congruent communicators share one after their plans are gone, other groups
// get their own, an aborted one is replaced, and whatever is returned moves
// data (an ncclAllReduce over it counts its members); a failed call inside
// nccl::group does not leave the group open.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <nccl.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "core/platform/backend.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

// Why NCCL cannot run here (no GPU, ranks sharing one), or nothing; creating
// the cuda backend selects this rank's device as every plan does.
std::optional<std::string> nccl_unavailable() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return "no CUDA device";
    const auto backend = Registry<Backend>::instance().create("cuda");
    if (auto why = nccl::not_applicable(*backend, false)) return why;
    return nccl::not_runnable_here(*backend);
}

// Members of `comm` counted through NCCL: the sum of one 1 per rank, reduced
// into a zeroed array (0 when the reduction never ran).
int members_through_nccl(const nccl::Comm& comm) {
    int* d = nullptr;  // d[0] = 1, d[1] = the sum
    int one = 1, sum = -1;
    cudaStream_t s = nullptr;
    EXPECT_EQ(cudaMalloc(&d, 2 * sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess);
    EXPECT_EQ(cudaMemset(d, 0, 2 * sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(ncclAllReduce(d, d + 1, 1, ncclInt, ncclSum, comm.get(), s), ncclSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(&sum, d + 1, sizeof sum, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaStreamDestroy(s);
    cudaFree(d);
    return sum;
}

int size_of(MPI_Comm comm) {
    int n = 0;
    MPI_Comm_size(comm, &n);
    return n;
}

TEST(NcclComm, CongruentCommunicatorsShareOneAfterTheFirstIsGone) {
    if (auto why = nccl_unavailable()) GTEST_SKIP() << *why;
    MPI_Comm first = MPI_COMM_NULL, second = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &first);
    auto a = nccl::shared_comm(first);
    const nccl::Comm* made = a.get();
    EXPECT_EQ(members_through_nccl(*a), size_of(MPI_COMM_WORLD));
    a.reset();  // the plan that made it is gone
    MPI_Comm_free(&first);
    MPI_Comm_dup(MPI_COMM_WORLD, &second);
    const auto b = nccl::shared_comm(second);
    EXPECT_EQ(b.get(), made);
    EXPECT_FALSE(b->aborted());
    EXPECT_EQ(members_through_nccl(*b), size_of(MPI_COMM_WORLD));
    MPI_Comm_free(&second);
}

TEST(NcclComm, OtherGroupsGetTheirOwn) {
    if (auto why = nccl_unavailable()) GTEST_SKIP() << *why;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm half = MPI_COMM_NULL;  // even and odd ranks
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    const auto world = nccl::shared_comm(MPI_COMM_WORLD);
    const auto part = nccl::shared_comm(half);
    const auto self = nccl::shared_comm(MPI_COMM_SELF);
    EXPECT_EQ(members_through_nccl(*part), size_of(half));
    EXPECT_EQ(members_through_nccl(*self), 1);
    if (size_of(MPI_COMM_WORLD) == 1) {  // all three are the group {0}
        EXPECT_EQ(world.get(), part.get());
        EXPECT_EQ(world.get(), self.get());
    } else {
        EXPECT_NE(world.get(), part.get());
        EXPECT_NE(world.get(), self.get());
        EXPECT_EQ(part.get() == self.get(), size_of(half) == 1);
    }
    MPI_Comm_free(&half);
}

TEST(NcclComm, AnAbortedCommunicatorIsReplaced) {
    if (auto why = nccl_unavailable()) GTEST_SKIP() << *why;
    const auto old = nccl::shared_comm(MPI_COMM_WORLD);
    old->abort();  // as nccl::wait does on a timeout
    EXPECT_TRUE(old->aborted());
    const auto fresh = nccl::shared_comm(MPI_COMM_WORLD);
    EXPECT_NE(fresh.get(), old.get());
    EXPECT_FALSE(fresh->aborted());
    EXPECT_EQ(members_through_nccl(*fresh), size_of(MPI_COMM_WORLD));
}

// A job's start-up (core/run/job_start.hpp) makes the communicator of its
// ranks and connects them; the plans' transports then make none.
TEST(NcclStartJob, MakesTheCommunicatorThePlansThenShare) {
    if (auto why = nccl_unavailable()) GTEST_SKIP() << *why;
    const auto backend = Registry<Backend>::instance().create("cuda");
    const auto transport = Registry<Transport>::instance().create("nccl_a2a");
    MPI_Comm job = MPI_COMM_NULL, plan = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &job);
    nccl::shared_comm(MPI_COMM_WORLD)->abort();  // what an earlier test left is unusable: the start makes one
    const int before = nccl::communicators_made();
    transport->start_job(job, *backend);
    const int made = nccl::communicators_made();
    EXPECT_EQ(made, before + 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &plan);  // a plan's own duplicate of the job's ranks
    const auto shared = nccl::shared_comm(plan);
    EXPECT_EQ(nccl::communicators_made(), made);
    EXPECT_EQ(members_through_nccl(*shared), size_of(MPI_COMM_WORLD));
    MPI_Comm_free(&plan);
    MPI_Comm_free(&job);
}

// A call that fails inside nccl::group ends the group: the thread's next NCCL
// call runs on its own instead of joining a group nobody ends.
TEST(NcclGroup, AFailedCallEndsItsGroup) {
    if (auto why = nccl_unavailable()) GTEST_SKIP() << *why;
    const auto comm = nccl::shared_comm(MPI_COMM_WORLD);
    const int ranks = size_of(MPI_COMM_WORLD);
    char* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 1), cudaSuccess);
    EXPECT_THROW(nccl::group([&] {
                     // Rank `ranks` does not exist: ncclInvalidArgument.
                     nccl::check(ncclSend(d, 1, ncclUint8, ranks, comm->get(), nullptr), "ncclSend");
                 }),
                 std::runtime_error);
    cudaFree(d);
    EXPECT_EQ(members_through_nccl(*comm), ranks);
}

}  // namespace
}  // namespace fftune
