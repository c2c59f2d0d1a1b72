// Test helper: hung_probe_job RESULT_FILE. An MPI job running fft probes whose
// first transform never returns on the last rank (the other ranks wait for it
// in the probe's agreement), with --timeout 1. The probe's watchdog must end
// the job (non-zero exit) and leave rank 0's reason in RESULT_FILE.died, as
// fftune probe's job does; if it does not, the job hangs and the test fails
// at its timeout.
#include <mpi.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "core/platform/device_fault.hpp"
#include "core/run/probe.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/world.hpp"

namespace {

using fftune::testing::world_rank;
using fftune::testing::world_size;

class HangsInFftOnLastRank final : public fftune::testing::ForwardingBackend {
public:
    std::string name() const override { return "test_hangs_in_fft_on_last_rank"; }
    std::unique_ptr<fftune::FftPlan> make_fft(const fftune::FftDescriptor& d) override {
        return std::make_unique<fftune::testing::HookedFft>(ForwardingBackend::make_fft(d), [] {
            if (world_rank() == world_size() - 1)
                for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        });
    }
};
const bool registered =
    fftune::register_variant<fftune::Backend, HangsInFftOnLastRank>("test_hangs_in_fft_on_last_rank");

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc != 2) {
        std::cerr << "usage: hung_probe_job RESULT_FILE\n";
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fftune::ProbeOptions o;
    o.bytes_per_peer = {8};
    o.fft_lengths = {8};
    o.fft_points = 16;
    o.backends = {"test_hangs_in_fft_on_last_rank"};
    o.transports = {"a2a_sync"};
    o.warmup = 0;
    o.iterations = 2;
    o.timeout_s = 1;
    fftune::set_device_fault_note(argv[1]);
    fftune::run_probe(MPI_COMM_WORLD, o, [](const nlohmann::json&) {});
    std::cerr << "hung_probe_job: rank " << world_rank() << " finished the probe it should have hung in\n";
    MPI_Finalize();
    return 0;
}
