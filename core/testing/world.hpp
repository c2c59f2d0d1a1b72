// Test helper: this process's rank and the rank count of MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

namespace fftune::testing {

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int world_size() {
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

}  // namespace fftune::testing
