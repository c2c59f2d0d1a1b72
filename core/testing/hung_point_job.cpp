// Test helper: hung_point_job RESULT_FILE. An MPI job running one point whose
// exchange never returns on the last rank (the other ranks go on and wait for
// it in the next collective call), under a point_timeout_s of 1 s. The
// watchdog must end the job (non-zero exit) and leave rank 0's reason in
// RESULT_FILE.died; if it does not, the job hangs and the test fails at its
// timeout.
#include <mpi.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/run/runner.hpp"
#include "core/run/testcase.hpp"
#include "core/testing/world.hpp"
#include "core/engine/transport.hpp"

namespace {

using fftune::testing::world_rank;
using fftune::testing::world_size;

struct HangsOnLastRank final : fftune::Transport {
    bool separate_pack_phases() const override { return false; }
    bool runs_alone() const override { return true; }  // it hangs at one rank too
    void execute(const fftune::ReshapeContext&, const void*, void*, fftune::PhaseTimer&,
                 const fftune::ReshapePhases&) override {
        if (world_rank() == world_size() - 1)
            for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
};
const bool registered = fftune::register_variant<fftune::Transport, HangsOnLastRank>("test_hangs_on_last_rank");

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc != 2) {
        std::cerr << "usage: hung_point_job RESULT_FILE\n";
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const nlohmann::json j{{"name", "hung point"},         {"problem", "fft3d"},
                           {"sizes", {8}},                 {"ranks", world_size()},
                           {"decomposition", "slab_2d1d"}, {"layout", "default"},
                           {"redistribution", "test_hangs_on_last_rank"},
                           {"precision", "double"},        {"direction", "forward"},
                           {"warmup", 0},                  {"iterations", 2},
                           {"point_timeout_s", 1}};
    const auto tc = fftune::parse_testcase(j, "hung_point_job");
    fftune::run_job(MPI_COMM_WORLD, tc, argv[1], 0, {"hung_point_job"});
    std::cerr << "hung_point_job: rank " << world_rank() << " finished the point it should have hung in\n";
    MPI_Finalize();
    return 0;
}
