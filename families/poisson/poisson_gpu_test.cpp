// The poisson family on the GPU (label gpu): each algorithm and boundary on
// the cuda backend gives the CPU backend's φ on the same ρ (each backend's
// own fill_rho, and each its own spectral kernel), within
// 1e-12 (double) and 2e-5 (single) of max |φ|; no value is NaN.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/testing/world.hpp"
#include "families/poisson/solver.hpp"

namespace fftune::poisson {
namespace {

using json = nlohmann::json;

std::vector<double> solve(const Problem& p, json config, const std::string& backend) {
    config["backend"] = backend;
    auto s = make_solver(MPI_COMM_WORLD, p, config);
    fill_rho(*s, {p.n, p.boundary}, p.precision);  // in place where the backend's kernels can (not wire on cuda)
    s->solve();
    return s->phi();
}

TEST(PoissonGpu, CudaAgreesWithTheCpuBackend) {
    if (testing::world_size() != 1) GTEST_SKIP() << "one rank";
    if (Registry<Backend>::instance().create("cuda")->unavailable()) GTEST_SKIP() << "no usable GPU";
    const json padded{{"algorithm", "padded"}, {"decomposition", "slab_2d1d"}, {"layout", "default"},
                      {"process_grid", {1, 1}}, {"redistribution", {"a2a_sync"}}, {"gpu_aware", false}};
    const json skipping{{"algorithm", "zero_skipping"}, {"redistribution", {"a2a_sync"}}};
    const json fused{{"algorithm", "zero_skipping_fused"}, {"redistribution", {"a2a_sync"}}};  // the shared-memory x-stage
    for (auto precision : {Precision::double_, Precision::single})
        for (auto b : all_values<Boundary>())
            for (const auto& config : {padded, skipping, fused}) {
                const Problem p{{36, 30, 24}, b, Kernel::hockney, precision, 1};  // padded lengths of factors 2, 3 (the fused x-pass)
                const auto cpu = solve(p, config, "fftw"), gpu = solve(p, config, "cuda");
                ASSERT_EQ(cpu.size(), gpu.size());
                double diff = 0, scale = 0;
                for (std::size_t i = 0; i < cpu.size(); ++i) {
                    ASSERT_TRUE(std::isfinite(cpu[i]) && std::isfinite(gpu[i])) << to_string(b) << " at " << i;
                    diff = std::max(diff, std::abs(cpu[i] - gpu[i])), scale = std::max(scale, std::abs(cpu[i]));
                }
                EXPECT_LT(diff / scale, precision == Precision::double_ ? 1e-12 : 2e-5)
                    << to_string(b) << " " << config.at("algorithm") << " " << to_string(precision);
            }
}

// The transformed Green's function table is kept for the next point of the
// same grid, boundary and kernel (build_spectral_kernel): another algorithm
// or precision folds it ("backend (table kept)") and still gives the CPU
// backend's φ; another boundary builds its own, and the first is gone.
TEST(PoissonGpu, TheKernelTableIsKeptForTheNextPointOfTheProblem) {
    if (testing::world_size() != 1) GTEST_SKIP() << "one rank";
    if (Registry<Backend>::instance().create("cuda")->unavailable()) GTEST_SKIP() << "no usable GPU";
    const json fused{{"algorithm", "zero_skipping_fused"}, {"redistribution", {"a2a_sync"}}};
    const json padded{{"algorithm", "padded"}, {"decomposition", "slab_2d1d"}, {"layout", "default"},
                      {"process_grid", {1, 1}}, {"redistribution", {"a2a_sync"}}, {"gpu_aware", false}};
    auto built = [](const Problem& p, json config) {
        config["backend"] = "cuda";
        return make_solver(MPI_COMM_WORLD, p, config)->kernel_built();
    };
    const Problem free{{40, 30, 24}, Boundary::free, Kernel::hockney, Precision::double_, 1};
    Problem single = free, surface = free;
    single.precision = Precision::single;
    surface.boundary = Boundary::surface;
    EXPECT_EQ(built(free, fused), "backend");
    EXPECT_EQ(built(single, padded), "backend (table kept)");
    EXPECT_EQ(built(surface, fused), "backend");
    EXPECT_EQ(built(surface, padded), "backend (table kept)");
    EXPECT_EQ(built(free, padded), "backend");
    for (const auto& config : {fused, padded}) {  // both kept: φ as the CPU's
        const auto cpu = solve(single, config, "fftw"), gpu = solve(single, config, "cuda");
        ASSERT_EQ(cpu.size(), gpu.size());
        double diff = 0, scale = 0;
        for (std::size_t i = 0; i < cpu.size(); ++i)
            diff = std::max(diff, std::abs(cpu[i] - gpu[i])), scale = std::max(scale, std::abs(cpu[i]));
        EXPECT_LT(diff / scale, 2e-5) << config.at("algorithm");
    }
}

}  // namespace
}  // namespace fftune::poisson
