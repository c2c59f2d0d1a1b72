// reference_cufftxt on the GPU machine (label gpu, one rank): cufftXt over
// every visible GPU, both precisions and directions, on 64x48x40 and an odd
// size, through the runner (record, timing, validation) and the Plan (error
// bounds, the caller's input preserved), and a check that the all-device
// clock covers the execution. With fewer than 2 GPUs visible every point
// must be skipped with its reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/fft3d/fft3d.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/run/runner.hpp"
#include "core/engine/validation.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

int visible_gpus() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

const Config cufftxt{"cuda", "reference_cufftxt", LayoutVariant::default_, {1, 1}, {}, false};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

TEST(ReferenceCufftxt, IsRegistered) {
    EXPECT_TRUE(Registry<Decomposition>::instance().contains("reference_cufftxt"));
}

TEST(ReferenceCufftxt, RunsAndValidatesOrIsSkippedWithTheReason) {
    const int gpus = visible_gpus();
    const RunOptions options{1, 3, true, {"reference_cufftxt_gpu_test"}};
    const json machine = machine_info();
    for (const std::array<index_t, 3> n : {std::array<index_t, 3>{64, 48, 40}, {45, 27, 21}})
        for (auto precision : all_values<Precision>())
            for (auto direction : all_values<Direction>()) {
                Fft3dPoint pt;
                pt.problem = {"fft3d", n, precision, direction, 1};
                pt.config = cufftxt;
                const json r = run_point(MPI_COMM_WORLD, pt, options, machine);
                const std::string what =
                    size_string(n) + " " + to_string(precision) + " " + to_string(direction) + ": " + r.dump(1);
                const std::string status = r.at("status").get<std::string>();
                if (gpus < 2) {
                    EXPECT_EQ(status, "skipped") << what;
                    EXPECT_FALSE(r.value("reason", "").empty()) << what;
                    continue;
                }
                if (n[0] == 45 && status == "skipped") {
                    // cuFFT may refuse odd sizes on several GPUs: then the skip names its error.
                    EXPECT_NE(r.at("reason").get<std::string>().find("cufft"), std::string::npos) << what;
                    std::cout << "note: " << size_string(n) << " " << to_string(precision) << " skipped: "
                              << r.at("reason").get<std::string>() << "\n";
                    continue;
                }
                ASSERT_EQ(status, "ok") << what;
                EXPECT_TRUE(r.at("validation").at("passed").get<bool>()) << what;
                EXPECT_EQ(r.at("validation").at("checks").size(), 4u) << what;  // Laplacian, round trip, spot, oracle
                const json& t = r.at("timing");
                EXPECT_EQ(t.at("devices").get<int>(), gpus) << what;
                EXPECT_EQ(t.at("phase_order"), json::array({"fft.xyz"})) << what;
                const double total = t.at("total").at("median").get<double>();
                const double fft = t.at("phases").at("fft.xyz").at("median").get<double>();
                EXPECT_GT(total, 0) << what;
                EXPECT_GT(fft, 0) << what;
                EXPECT_LE(fft, total * 1.05 + 1e-3) << what;  // the phase lies inside the total
                EXPECT_GT(r.at("workspace_bytes").get<unsigned long long>(), 0u) << what;
                EXPECT_GT(r.at("host_staging_bytes").get<unsigned long long>(), 0u) << what;
            }
}

// A GPU without room for its slabs of cufftXt's two descriptors (another
// allocation holds the rest) makes the point a skip that says so, decided
// before cufftXtMalloc, not a failure.
TEST(ReferenceCufftxt, DescriptorsThatCannotFitAreSkippedBeforeAllocating) {
    const int gpus = visible_gpus();
    if (gpus < 2) GTEST_SKIP() << "cufftXt needs 2 or more GPUs";
    const Problem problem{"fft3d", {256, 256, 256}, Precision::double_, Direction::forward, 1};
    // The plans' work areas per GPU (on average), from a plan that fits.
    std::size_t work_per_gpu = 0, share = 0;
    {
        Plan plan(MPI_COMM_WORLD, problem, cufftxt);
        const std::size_t storage = 256ull * 256 * 129 * 16;
        share = (storage + gpus - 1) / gpus;
        work_per_gpu = (plan.workspace_bytes() - 2 * storage) / gpus;
    }
    // GPU 1 keeps room for its work areas and one and a half slabs, not two.
    int current = 0;
    cudaGetDevice(&current);
    cudaSetDevice(1);
    std::size_t free = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    const std::size_t leave = work_per_gpu + share + share / 2;
    ASSERT_GT(free, leave);
    void* hog = nullptr;
    ASSERT_EQ(cudaMalloc(&hog, free - leave), cudaSuccess);
    cudaSetDevice(current);
    Fft3dPoint pt;
    pt.problem = problem;
    pt.config = cufftxt;
    const json r = run_point(MPI_COMM_WORLD, pt, RunOptions{0, 1, false, {"reference_cufftxt_gpu_test"}}, machine_info());
    cudaSetDevice(1);
    cudaFree(hog);
    cudaSetDevice(current);
    EXPECT_EQ(r.at("status"), "skipped") << r.dump(1);
    EXPECT_NE(r.value("reason", "").find("does not fit in device memory"), std::string::npos) << r.dump(1);
    EXPECT_NE(r.value("reason", "").find("GPU 1"), std::string::npos) << r.dump(1);
}

TEST(ReferenceCufftxt, PlanMatchesTheOracleAndPreservesItsInput) {
    const int gpus = visible_gpus();
    if (gpus < 2) GTEST_SKIP() << "cufftXt needs 2 GPUs, " << gpus << " visible";
    for (auto precision : all_values<Precision>()) {
        const Problem problem{"fft3d", {64, 48, 40}, precision, Direction::forward, 1};
        ASSERT_FALSE(check_applicable(problem, cufftxt));
        Plan plan(MPI_COMM_WORLD, problem, cufftxt);
        EXPECT_EQ(plan.devices(), gpus);
        EXPECT_EQ(plan.phase_names(Direction::forward), std::vector<std::string>{"fft.xyz"});
        EXPECT_EQ(plan.phase_names(Direction::inverse), std::vector<std::string>{"fft.xyz"});
        const ValidationResult v = validate(plan);
        ASSERT_EQ(v.checks.size(), 4u);
        for (const auto& c : v.checks) {
            EXPECT_TRUE(c.passed) << to_string(precision) << " " << c.method << " error " << c.max_rel_error << " > "
                                  << c.tolerance;
            EXPECT_LE(c.max_rel_error, precision == Precision::double_ ? 1e-10 : 1e-4) << c.method;
        }
        // forward() and inverse() leave the caller's input as it was (cufftXt works in place on its own copy).
        const std::size_t rb = plan.input_bytes(), cb = plan.output_bytes();
        std::vector<char> real(rb), spectrum(cb), back(std::max(rb, cb));
        for (std::size_t i = 0; i < rb; ++i) real[i] = static_cast<char>(i * 7 % 13);  // any bit pattern is fine
        auto in = plan.allocate_input();
        auto out = plan.allocate_output();
        // The caller's arrays are pinned host memory: the whole grid need not fit on one GPU.
        EXPECT_TRUE(plan.buffers_on_host());
        EXPECT_EQ(plan.backend_bytes(), plan.workspace_bytes());
        for (const void* p : {in.data(), out.data()}) {
            cudaPointerAttributes a{};
            ASSERT_EQ(cudaPointerGetAttributes(&a, p), cudaSuccess);
            EXPECT_EQ(a.type, cudaMemoryTypeHost) << "pinned host memory";
        }
        plan.backend().copy_from_host(in.data(), real.data(), rb);
        plan.forward(in.data(), out.data());
        plan.backend().copy_to_host(back.data(), in.data(), rb);
        EXPECT_TRUE(std::equal(real.begin(), real.end(), back.begin())) << "forward changed its input";
        plan.backend().copy_to_host(spectrum.data(), out.data(), cb);
        plan.inverse(out.data(), in.data());
        plan.backend().copy_to_host(back.data(), out.data(), cb);
        EXPECT_TRUE(std::equal(spectrum.begin(), spectrum.end(), back.begin())) << "inverse changed its input";
    }
}

// The all-device clock against host time around the execution and a full
// synchronisation of every GPU: never longer, and not a small part of it
// (which would mean it misses work on some GPU).
TEST(ReferenceCufftxt, ClockCoversTheWholeExecution) {
    const int gpus = visible_gpus();
    if (gpus < 2) GTEST_SKIP() << "cufftXt needs 2 GPUs, " << gpus << " visible";
    const Problem problem{"fft3d", {512, 512, 256}, Precision::double_, Direction::forward, 1};
    Plan plan(MPI_COMM_WORLD, problem, cufftxt);
    auto in = plan.allocate_input();
    auto out = plan.allocate_output();
    std::vector<double> zeros(plan.input_count(), 0.0);
    plan.backend().copy_from_host(in.data(), zeros.data(), plan.input_bytes());
    auto clock = plan.make_clock();
    plan.stage(Direction::forward, in.data());
    int current = 0;
    cudaGetDevice(&current);
    std::vector<double> events, host;
    for (int it = 0; it < 12; ++it) {
        plan.restage(Direction::forward);
        const auto t0 = std::chrono::steady_clock::now();
        clock->start();
        plan.run_staged(Direction::forward, in.data(), out.data());
        clock->stop();
        for (int g = 0; g < gpus; ++g) {
            cudaSetDevice(g);
            cudaDeviceSynchronize();
        }
        const auto t1 = std::chrono::steady_clock::now();
        cudaSetDevice(current);
        const double ev = clock->elapsed_ms();
        clock->reset();
        plan.collect_phase_times(Direction::forward);
        if (it < 2) continue;  // warm-up
        events.push_back(ev);
        host.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const double e = median(events), h = median(host);
    std::cout << "512x512x256 double forward on " << gpus << " GPUs: events " << e << " ms, host " << h << " ms\n";
    EXPECT_LE(e, h * 1.05 + 0.05);
    EXPECT_GE(e, 0.5 * h) << "the clock misses work on some GPU";
}

}  // namespace
}  // namespace fftune
