// Test helper: device_fault_job RESULT_FILE. An MPI job whose last rank loses
// its device after a failed step while the other ranks wait in a receive
// that never completes, as peers wait in an exchange. unless_device_lost must
// end the job (non-zero exit) and leave its reason in RESULT_FILE.died; if it
// does not, the job hangs and the test fails at its timeout.
#include <mpi.h>

#include <iostream>
#include <stdexcept>

#include "core/platform/device_fault.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/testing/forwarding_backend.hpp"

namespace {

class LostDevice final : public fftune::testing::ForwardingBackend {
public:
    std::string name() const override { return "test_lost_device"; }
    std::optional<std::string> device_fault() override { return std::string("fake sticky fault"); }
};

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        std::cerr << "usage: device_fault_job RESULT_FILE\n";
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fftune::set_device_fault_note(argv[1]);
    if (rank == size - 1) {
        LostDevice backend;
        const auto failed = fftune::failure_of([] { throw std::runtime_error("injected FFT failure"); });
        (void)fftune::unless_device_lost(backend, MPI_COMM_WORLD, failed);
        std::cerr << "device_fault_job: rank " << rank << " went on after losing its device\n";
    } else {
        int never = 0;
        MPI_Recv(&never, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
