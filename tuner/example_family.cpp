// Example application for any problem family (copy me): the best configuration
// of a problem on this machine from the tuning database, built, run once and
// checked, in one call (make_workload).
//   mpirun -n 2 fftune_example_family '{"kind":"poisson","size":[32,32,32]}' [--db PATH]
// Fields left out take their defaults: fftune best --problem NAME --help.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>

#include <nlohmann/json.hpp>

#include "tuner/selector.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--db") == 0)) {
        if (rank == 0) std::fprintf(stderr, "usage: %s PROBLEM_JSON [--db PATH]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    fftune::SelectOptions options;
    if (argc == 4) options.database = argv[3];
    int rc = 0;
    try {
        const auto problem = nlohmann::json::parse(argv[1]);
        fftune::Selection why;
        auto work = fftune::make_workload(MPI_COMM_WORLD, problem, options, &why);
        if (rank == 0)
            std::printf("configuration: %s\nchosen by: %s (%s)\n", why.key.c_str(), why.rung.c_str(), why.reason.c_str());
        // As the runner drives it: set up, fill the inputs, one step (a
        // transform, a solve, a convolution), then check against the family's oracles.
        work->setup(MPI_COMM_WORLD);
        work->prepare(MPI_COMM_WORLD);
        work->phase_names();
        work->stage();
        work->step();
        work->backend().synchronize();
        work->release();
        const auto v = work->validate(MPI_COMM_WORLD);
        if (rank == 0) std::printf("validation: %s\n", v.passed() ? "passed" : "FAILED");
        rc = v.passed() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
