// Example application (copy me): ask the tuning database for the best plan of
// a problem on this machine, run forward and inverse on your data, check it.
//   mpirun -n 4 fftune_example_app 64 48 40 [--db PATH]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/engine/validation.hpp"
#include "tuner/selector.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0) std::fprintf(stderr, "usage: %s NX NY NZ [--db PATH]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    fftune::SelectOptions options;
    if (argc >= 6 && std::strcmp(argv[4], "--db") == 0) options.database = argv[5];
    const fftune::Problem problem{"fft3d", {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3])},
                                  fftune::Precision::double_, fftune::Direction::forward, size};
    int rc = 0;
    try {
        fftune::Selection why;
        auto plan = fftune::make_plan(MPI_COMM_WORLD, problem, options, &why);
        if (rank == 0) std::printf("plan: %s\nchosen by: %s (%s)\n", plan->config().key().c_str(), why.rung.c_str(), why.reason.c_str());

        // Your data: this rank's box of the real grid, z fastest.
        std::vector<double> field;
        fftune::fill_test_input(field, plan->input_layout(), problem.size);
        auto in = plan->allocate_input(), spectrum = plan->allocate_output(), back = plan->allocate_input();
        plan->backend().copy_from_host(in.data(), field.data(), plan->input_bytes());
        plan->forward(in.data(), spectrum.data());
        plan->inverse(spectrum.data(), back.data());
        std::vector<double> result(field.size());
        plan->backend().copy_to_host(result.data(), back.data(), plan->input_bytes());

        // inverse(forward(f)) = N f
        const double n = double(problem.size[0] * problem.size[1] * problem.size[2]);
        double err = 0, global = 0;
        for (std::size_t i = 0; i < field.size(); ++i) err = std::max(err, std::abs(result[i] / n - field[i]));
        MPI_Allreduce(&err, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const bool ok = global < 1e-10;
        if (rank == 0) std::printf("round trip max error %.3g: %s\n", global, ok ? "ok" : "WRONG");
        rc = ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
