// What does opening a peer's array with CUDA IPC cost, by size? cuda_ipc_push
// points spent 1.3 ms (512^3 single, 269 MB per array) but 18-22 ms from
// 512^3 double (539 MB) to 1024^3 double (4.3 GB) in their transports part
// (results/h100x2-2026-11-28-kept-arrays). Two ranks, one GPU each: per size
// the host time of cudaMalloc, cudaIpcGetMemHandle, cudaIpcOpenMemHandle of
// the peer's array, a first 1 MiB copy into it, a second open of the same
// handle while open, cudaIpcCloseMemHandle, a reopen after closing, cudaFree.
// Host clocks: every call timed here blocks the host.
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                            \
        }                                                                            \
    } while (0)

using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, devices = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CK(cudaGetDeviceCount(&devices));
    CK(cudaSetDevice(rank % devices));
    CK(cudaFree(nullptr));
    const int peer = (rank + 1) % size;
    // bytes: 64 MiB ... and the engine's arrays (512^3 single/double, 1024^3 single/double per rank of 2)
    const std::vector<size_t> sizes{64ull << 20, 256ull << 20, 269484032ull, 384ull << 20, 511ull << 20, 512ull << 20,
                                    513ull << 20, 538968064ull, 1024ull << 20, 2155872256ull, 4311744512ull};
    if (rank == 0)
        std::printf("bytes,malloc_ms,get_handle_ms,open_ms,first_copy_ms,open_again_ms,close_ms,reopen_ms,free_ms\n");
    for (int rep = 0; rep < 2; ++rep)
        for (size_t bytes : sizes) {
            double t[8] = {};
            void* mine = nullptr;
            auto c = Clock::now();
            CK(cudaMalloc(&mine, bytes));
            t[0] = ms(c);
            cudaIpcMemHandle_t h{}, theirs{};
            c = Clock::now();
            CK(cudaIpcGetMemHandle(&h, mine));
            t[1] = ms(c);
            MPI_Sendrecv(&h, sizeof h, MPI_BYTE, peer, 0, &theirs, sizeof theirs, MPI_BYTE, (rank + size - 1) % size, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            void* mapped = nullptr;
            c = Clock::now();
            CK(cudaIpcOpenMemHandle(&mapped, theirs, cudaIpcMemLazyEnablePeerAccess));
            t[2] = ms(c);
            c = Clock::now();
            CK(cudaMemcpy(mapped, mine, 1 << 20, cudaMemcpyDeviceToDevice));
            t[3] = ms(c);
            void* again = nullptr;
            c = Clock::now();
            const cudaError_t e = cudaIpcOpenMemHandle(&again, theirs, cudaIpcMemLazyEnablePeerAccess);
            t[4] = ms(c);
            if (e != cudaSuccess) t[4] = -1, cudaGetLastError();
            else if (again != mapped) t[4] = -2;
            if (e == cudaSuccess) CK(cudaIpcCloseMemHandle(again));
            c = Clock::now();
            CK(cudaIpcCloseMemHandle(mapped));
            t[5] = ms(c);
            c = Clock::now();
            CK(cudaIpcOpenMemHandle(&mapped, theirs, cudaIpcMemLazyEnablePeerAccess));
            t[6] = ms(c);
            CK(cudaIpcCloseMemHandle(mapped));
            MPI_Barrier(MPI_COMM_WORLD);  // peers closed before the exporter frees
            c = Clock::now();
            CK(cudaFree(mine));
            t[7] = ms(c);
            double most[8];
            MPI_Reduce(t, most, 8, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                std::printf("%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", bytes, most[0], most[1], most[2], most[3],
                            most[4], most[5], most[6], most[7]);
        }
    MPI_Finalize();
}
