// The krylov family on the GPU (label gpu): every format x fusion (none, fused, folded, one_pass) x
// preconditioner of the cuda kernels, and cusparse_csr, validates (SpMV against
// the CPU stencil oracle, true residual, manufactured solution) and converges
// in the iterations the CPU backend takes (to one: sums in another order).
#include <gtest/gtest.h>

#include <array>

#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/run/family.hpp"
#include "core/testing/world.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {
namespace {

using json = nlohmann::json;

using Grid = std::array<index_t, 3>;

json problem(const Grid& n, bool curlcurl = false, int iterations = 4) {
    return {{"kind", "krylov"},
            {"ranks", testing::world_size()},
            {"size", n},
            {"operator", curlcurl ? "curlcurl13" : "poisson7"},
            {"precision", curlcurl ? "complex_double" : "double"},
            {"iterations", {iterations}}};
}
json problem(index_t n, bool curlcurl = false) { return problem(Grid{n, n, n}, curlcurl); }

json solve(const Grid& n, const json& config, bool curlcurl = false, int iterations = 4) {
    Point pt;
    pt.problem = problem(n, curlcurl, iterations);
    pt.config = config;
    const Family& f = family_named("krylov");
    EXPECT_FALSE(f.not_applicable(pt.problem, pt.config)) << config.dump();
    auto w = f.workload(pt);
    w->setup(MPI_COMM_WORLD);
    w->prepare(MPI_COMM_WORLD);
    w->stage();
    w->step();
    const ValidationResult v = w->validate(MPI_COMM_WORLD);
    for (const auto& c : v.checks)
        EXPECT_TRUE(c.passed) << config.dump() << " " << c.method << ": " << c.max_rel_error << " > " << c.tolerance;
    json record;
    w->annotate(MPI_COMM_WORLD, record);
    return record["krylov"];
}
json solve(index_t n, const json& config, bool curlcurl = false) { return solve(Grid{n, n, n}, config, curlcurl); }

TEST(KrylovGpu, CudaKernelsAgreeWithTheCpuBackend) {
    if (Registry<Backend>::instance().create("cuda")->unavailable()) GTEST_SKIP() << "no usable GPU";
    const index_t n = 21;
    int compared = 0;
    for (const auto& format : format_names())
        for (const char* fusion : {"none", "fused", "folded", "one_pass"})
            for (const char* pre : {"none", "jacobi"}) {
                json c{{"solver", "cg"}, {"format", format}, {"fusion", fusion}, {"preconditioner", pre}, {"backend", "cuda"}};
                if (family_named("krylov").not_applicable(problem(n), c)) continue;
                const json gpu = solve(n, c);
                c["backend"] = "fftw";
                if (format == "cusparse_csr") c["format"] = "csr";
                const json cpu = solve(n, c);
                EXPECT_NEAR(gpu["converged_iterations"].get<int>(), cpu["converged_iterations"].get<int>(), 1)
                    << format << " " << fusion << " " << pre;
                EXPECT_GT(gpu["copy_GBps"].get<double>(), 0);
                ++compared;
            }
    EXPECT_EQ(compared, 3 * 4 * 2 + 2);  // cusparse_csr: unfused only
}

// The complex kernels and the library reference (cuSPARSE, cuBLAS Z
// routines): every solver of curlcurl13 x format x fusion x preconditioner on
// cuda converges with every check passing, in the CPU backend's iteration
// count (to one).
TEST(KrylovGpu, ComplexKernelsAgreeWithTheCpuBackend) {
    if (Registry<Backend>::instance().create("cuda")->unavailable()) GTEST_SKIP() << "no usable GPU";
    const index_t n = 9;
    int compared = 0;
    for (const char* solver : {"cocg", "bicg", "qmr", "qmr_sym"})
        for (const char* format : {"csr", "ell", "cusparse_csr"})
            for (const char* fusion : {"none", "fused", "folded", "one_pass"})
                for (const char* pre : {"none", "jacobi"}) {
                    json c{{"solver", solver}, {"format", format}, {"fusion", fusion}, {"preconditioner", pre},
                           {"backend", "cuda"}};
                    if (family_named("krylov").not_applicable(problem(n, true), c)) continue;
                    const json gpu = solve(n, c, true);
                    c["backend"] = "fftw";
                    if (std::string(format) == "cusparse_csr") c["format"] = "csr";
                    const json cpu = solve(n, c, true);
                    EXPECT_NEAR(gpu["converged_iterations"].get<int>(), cpu["converged_iterations"].get<int>(), 1)
                        << solver << " " << format << " " << fusion << " " << pre;
                    ++compared;
                }
    // cocg in every fusion; bicg, qmr, qmr_sym unfused; cusparse_csr (the library reference) unfused
    EXPECT_EQ(compared, 2 * 4 * 2 + 3 * 2 * 2 + 4 * 2);
}

// Non-cubic grids (issue 45; the 3D stencil launch's x and y extents differ) and
// 1000 timed iterations on 19^3 (restarts at the residual floor): every cuda
// format and fusion of CG validates, restarting as often as on the CPU (to one);
// COCG on a non-cubic curl-curl grid.
TEST(KrylovGpu, NonCubicGridsAndAThousandIterations) {
    if (Registry<Backend>::instance().create("cuda")->unavailable()) GTEST_SKIP() << "no usable GPU";
    for (const auto& format : format_names())
        for (const char* fusion : {"none", "fused", "folded", "one_pass"}) {
            json c{{"solver", "cg"}, {"format", format}, {"fusion", fusion}, {"preconditioner", "jacobi"}, {"backend", "cuda"}};
            if (family_named("krylov").not_applicable(problem(19), c)) continue;
            for (const Grid& n : {Grid{40, 24, 56}, Grid{21, 18, 23}}) solve(n, c);
            const json gpu = solve(Grid{19, 19, 19}, c, false, 1000);
            c["backend"] = "fftw";
            if (format == "cusparse_csr") c["format"] = "csr";
            const json cpu = solve(Grid{19, 19, 19}, c, false, 1000);
            EXPECT_NEAR(gpu["restarts"].get<int>(), cpu["restarts"].get<int>(), 1) << format << " " << fusion;
        }
    for (const char* format : {"csr", "ell", "cusparse_csr"})
        solve(Grid{21, 18, 23}, {{"solver", "cocg"}, {"format", format}, {"fusion", "none"}, {"preconditioner", "none"},
                                 {"backend", "cuda"}}, true);
}

}  // namespace
}  // namespace fftune::krylov
