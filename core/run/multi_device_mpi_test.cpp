// The Plan's and the runner's path for a transform over every device of a
// process (what reference_cufftxt uses on the GPU), on the CPU: a stand-in
// backend whose MultiDeviceFft works like the cufftXt one (storage of its own
// in the padded in-place r2c layout, transformed in place, copied in and
// restored outside the timed part) but computes with FFTW. Checks validation
// through it, what is timed, and that a size the library refuses at creation
// is a skip with the library's reason. MPI test at 1 and 2 ranks (one process
// only: at 2 ranks every point is skipped).
#include <fftw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/run/runner.hpp"
#include "families/fft3d/fft3d.hpp"
#include "core/testing/forwarding_backend.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

int world_size() {
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

struct Counts {
    int loads = 0, reloads = 0, executes = 0, stores = 0;
};
Counts counts;

// Double precision only; real arrays dense (Nx, Ny, Nz), storage padded rows of 2(Nz/2+1).
class FakeMultiDeviceFft final : public MultiDeviceFft {
public:
    FakeMultiDeviceFft(const std::array<index_t, 3>& n, Backend& backend)
        : n_(n), row_(2 * (n[2] / 2 + 1)), backend_(backend),
          data_(static_cast<std::size_t>(n[0] * n[1] * row_)), loaded_(data_.size()) {
        auto* real = data_.data();
        auto* cplx = reinterpret_cast<fftw_complex*>(data_.data());
        r2c_ = fftw_plan_dft_r2c_3d(int(n[0]), int(n[1]), int(n[2]), real, cplx, FFTW_ESTIMATE);
        c2r_ = fftw_plan_dft_c2r_3d(int(n[0]), int(n[1]), int(n[2]), cplx, real, FFTW_ESTIMATE);
    }
    ~FakeMultiDeviceFft() override {
        fftw_destroy_plan(r2c_);
        fftw_destroy_plan(c2r_);
    }
    void load(Direction d, const void* in) override {
        ++counts.loads;
        if (d == Direction::forward) {
            const auto* src = static_cast<const double*>(in);
            for (index_t xy = 0; xy < n_[0] * n_[1]; ++xy)
                std::memcpy(&loaded_[xy * row_], src + xy * n_[2], n_[2] * sizeof(double));
        } else {
            std::memcpy(loaded_.data(), in, bytes());
        }
        reload(d);
    }
    void reload(Direction) override {
        ++counts.reloads;
        std::copy(loaded_.begin(), loaded_.end(), data_.begin());  // in place: the FFTW plans stay valid
    }
    void execute(Direction d) override {
        ++counts.executes;
        fftw_execute(d == Direction::forward ? r2c_ : c2r_);
    }
    void store(Direction d, void* out) override {
        ++counts.stores;
        if (d == Direction::forward) {
            std::memcpy(out, data_.data(), bytes());
        } else {
            auto* dst = static_cast<double*>(out);
            for (index_t xy = 0; xy < n_[0] * n_[1]; ++xy)
                std::memcpy(dst + xy * n_[2], &data_[xy * row_], n_[2] * sizeof(double));
        }
    }
    std::unique_ptr<PhaseClock> make_clock() override { return backend_.make_clock(); }
    int devices() const override { return 2; }
    std::size_t device_bytes() const override { return 2 * bytes(); }
    std::size_t host_bytes() const override { return 0; }
    // As the driver would see it: half of device_bytes() on each of the two.
    std::optional<std::size_t> measured_device_bytes() const override { return bytes(); }

private:
    std::size_t bytes() const { return data_.size() * sizeof(double); }
    std::array<index_t, 3> n_;
    index_t row_;
    Backend& backend_;
    std::vector<double> data_, loaded_;
    fftw_plan r2c_{}, c2r_{};
};

// The fftw backend plus the stand-in; refuses Nx = 7 at creation like cuFFT refusing a size.
class FakeMultiDeviceBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_multi_device"; }
    std::optional<std::string> multi_device_unavailable(const std::array<index_t, 3>&, Precision p) const override {
        if (p != Precision::double_) return std::string("the stand-in computes in double only");
        return std::nullopt;
    }
    std::unique_ptr<MultiDeviceFft> make_multi_device_fft(const std::array<index_t, 3>& n, Precision) override {
        if (n[0] == 7) throw Unsupported("injected: the library refuses Nx = 7");
        return std::make_unique<FakeMultiDeviceFft>(n, *this);
    }
};

// The same on a "device" whose free memory holds the stand-in's storage but
// not the whole grid's input and output besides (cufftXt at 2048^3 on 4 H200s).
class SmallDeviceMultiDeviceBackend final : public testing::ForwardingBackend {
public:
    static constexpr std::size_t free_bytes = 40000;  // {20, 20, 20}: real 64 kB, complex 35 kB
    std::string name() const override { return "test_multi_device_small"; }
    bool device_memory() const override { return true; }
    std::optional<DeviceMemory> device_memory_info() const override {
        return DeviceMemory{"test-device-0", free_bytes, 2 * free_bytes};
    }
    std::optional<std::string> multi_device_unavailable(const std::array<index_t, 3>&, Precision) const override {
        return std::nullopt;
    }
    std::unique_ptr<MultiDeviceFft> make_multi_device_fft(const std::array<index_t, 3>& n, Precision) override {
        return std::make_unique<FakeMultiDeviceFft>(n, *this);
    }
};

// reference_cufftxt's chain, registered in every build (reference_cufftxt needs CUDA).
class AllDevices final : public Decomposition {
public:
    int redistribution_phases() const override { return 0; }
    bool uses_process_grid() const override { return false; }
    std::optional<std::string> not_applicable(const Problem& problem, const Config&) const override {
        if (problem.ranks != 1) return std::string("one process only");
        return std::nullopt;
    }
    Chain chain(const Problem& problem, const Config&, int) const override {
        Chain c;
        c.layouts = {{{{0, 0, 0}, problem.size}, order_xyz}, {{{0, 0, 0}, complex_size(problem.size)}, order_xyz}};
        ChainStep all;
        all.axes = {axis_x, axis_y, axis_z};
        all.all_devices = true;
        c.steps = {all};
        return c;
    }
};

const bool registered_backend = register_variant<Backend, FakeMultiDeviceBackend>("test_multi_device");
const bool registered_small = register_variant<Backend, SmallDeviceMultiDeviceBackend>("test_multi_device_small");
const bool registered_decomposition = register_variant<Decomposition, AllDevices>("test_all_devices");

Fft3dPoint point(std::array<index_t, 3> n, Direction dir, const std::string& backend = "test_multi_device") {
    Fft3dPoint pt;
    pt.problem = {"fft3d", n, Precision::double_, dir, world_size()};
    pt.config = {backend, "test_all_devices", LayoutVariant::default_, {world_size(), 1}, {}, false};
    return pt;
}

TEST(MultiDevice, ValidatesAndTimesOnlyTheExecution) {
    const RunOptions options{2, 5, false, {"multi_device_mpi_test"}};
    for (auto dir : all_values<Direction>()) {
        counts = {};
        const json r = run_point(MPI_COMM_WORLD, point({9, 10, 11}, dir), options, machine_info());
        if (world_size() > 1) {
            EXPECT_EQ(r.at("status"), "skipped") << r.dump();
            EXPECT_EQ(r.at("reason"), "one process only");
            continue;
        }
        ASSERT_EQ(r.at("status"), "ok") << r.dump();
        const json& t = r.at("timing");
        EXPECT_EQ(t.at("devices"), 2);
        EXPECT_EQ(t.at("phase_order"), json::array({"fft.xyz"}));
        EXPECT_EQ(t.at("total").at("n"), 5);
        EXPECT_GT(r.at("workspace_bytes").get<long long>(), 0);
        // The input is loaded once, restored before each of the 7 runs, and
        // never copied out while timing; the inverse first makes its spectrum
        // with one whole forward (load, execute, store).
        const int extra = dir == Direction::inverse ? 1 : 0;
        EXPECT_EQ(counts.loads, 1 + extra) << to_string(dir);
        EXPECT_EQ(counts.reloads, 1 + extra + 7) << to_string(dir);
        EXPECT_EQ(counts.executes, 7 + extra) << to_string(dir);
        EXPECT_EQ(counts.stores, extra) << to_string(dir);
    }
}

TEST(MultiDevice, PlanValidatesThroughTheStandIn) {
    if (world_size() > 1) GTEST_SKIP() << "one process only";
    const RunOptions options{1, 2, true, {"multi_device_mpi_test"}};
    for (const std::array<index_t, 3> n : {std::array<index_t, 3>{9, 10, 11}, {12, 7, 6}})
        for (auto dir : all_values<Direction>()) {
            const json r = run_point(MPI_COMM_WORLD, point(n, dir), options, machine_info());
            ASSERT_EQ(r.at("status"), "ok") << r.dump();
            EXPECT_TRUE(r.at("validation").at("passed").get<bool>()) << r.dump();
            EXPECT_EQ(r.at("validation").at("checks").size(), 4u);
            EXPECT_LT(r.at("validation").at("max_rel_error").get<double>(), 1e-10);
        }
}

TEST(MultiDevice, TheCallersArraysAreHostMemoryLentOneAtATime) {
    if (world_size() > 1) GTEST_SKIP() << "one process only";
    const auto pt = point({9, 10, 11}, Direction::forward, "test_multi_device_small");
    Plan plan(MPI_COMM_WORLD, pt.problem, pt.config);
    EXPECT_TRUE(plan.buffers_on_host());
    EXPECT_EQ(plan.backend_bytes(), plan.workspace_bytes()) << "the caller's arrays are not on the device";
    EXPECT_GE(plan.host_staging_bytes(), plan.input_bytes() + plan.output_bytes());
    {
        Buffer in = plan.allocate_input(), out = plan.allocate_output();
        EXPECT_GE(in.bytes(), plan.input_bytes());
        EXPECT_THROW(plan.allocate_input(), std::logic_error) << "one array of a role at a time";
        EXPECT_THROW(plan.allocate_output(), std::logic_error);
    }
    Buffer again = plan.allocate_input();  // given back when the first ended
    EXPECT_NE(again.data(), nullptr);
}

TEST(MultiDevice, RunsWhereTheWholeGridWouldNotFitOnTheDevice) {
    if (world_size() > 1) GTEST_SKIP() << "one process only";
    const RunOptions options{1, 2, true, {"multi_device_mpi_test"}};
    // Input (64 kB) and output (35 kB) together exceed the device's 40 kB:
    // a plan keeping them in device memory would be skipped as not fitting.
    for (auto dir : all_values<Direction>()) {
        const json r = run_point(MPI_COMM_WORLD, point({20, 20, 20}, dir, "test_multi_device_small"), options,
                                 machine_info());
        ASSERT_EQ(r.at("status"), "ok") << r.dump();
        EXPECT_TRUE(r.at("validation").at("passed").get<bool>()) << r.dump();
        EXPECT_EQ(r.at("memory_bytes"), r.at("workspace_bytes")) << r.dump();
        EXPECT_GE(r.at("host_staging_bytes").get<long long>(), 20 * 20 * 20 * 8 + 20 * 20 * 11 * 16) << r.dump();
        // Measured on the fullest of its devices, not on the backend's one
        // (whose free memory this stand-in never changes).
        const json& m = r.at("device_memory");
        EXPECT_EQ(m.at("measured_bytes"), 20 * 20 * 22 * 8) << r.dump();
        EXPECT_EQ(m.at("devices_per_rank"), 2) << r.dump();
    }
    // A device plan of the same size on the same device does not fit.
    auto dev = point({20, 20, 20}, Direction::forward, "test_multi_device_small");
    dev.config.decomposition = "slab_2d1d";
    dev.config.redistribution = {"a2a_sync"};
    const json r = run_point(MPI_COMM_WORLD, dev, options, machine_info());
    EXPECT_EQ(r.at("status"), "skipped") << r.dump();
    EXPECT_NE(r.value("reason", "").find("does not fit in device memory"), std::string::npos) << r.dump();
}

TEST(MultiDevice, WhatTheBackendCannotDoIsSkippedWithTheReason) {
    if (world_size() > 1) GTEST_SKIP() << "one process only";
    const RunOptions options{1, 2, true, {"multi_device_mpi_test"}};
    // Refused when the plan is made: skipped, with the library's message.
    const json refused = run_point(MPI_COMM_WORLD, point({7, 10, 11}, Direction::forward), options, machine_info());
    EXPECT_EQ(refused.at("status"), "skipped") << refused.dump();
    EXPECT_EQ(refused.at("reason"), "injected: the library refuses Nx = 7");
    // Ruled out beforehand, by the backend.
    auto single = point({9, 10, 11}, Direction::forward);
    single.problem.precision = Precision::single;
    const json s = run_point(MPI_COMM_WORLD, single, options, machine_info());
    EXPECT_EQ(s.at("status"), "skipped") << s.dump();
    EXPECT_EQ(s.at("reason"), "the stand-in computes in double only");
    // A backend without such a transform.
    const json fftw = run_point(MPI_COMM_WORLD, point({9, 10, 11}, Direction::forward, "fftw"), options, machine_info());
    EXPECT_EQ(fftw.at("status"), "skipped") << fftw.dump();
    EXPECT_NE(fftw.at("reason").get<std::string>().find("several devices"), std::string::npos) << fftw.dump();
}

}  // namespace
}  // namespace fftune
