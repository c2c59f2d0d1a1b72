// The spectrum spot check (MPI test, 2-3 ranks): a plan whose c2c FFTs have
// forward and backward swapped mirrors the spectrum along k_x (and k_y where
// y is a c2c axis) while its round trip stays the identity and the spectral
// Laplacian is even in k. Above the oracle's size only the spot check can
// fail it (issue 42: slab_2d1d at 2 ranks on 160x128x128 validated ok).
// At one rank the forward is a single r2c (no c2c stage to mirror).
#include <gtest/gtest.h>

#include <string>

#include "core/base/registry.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/validation.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/world.hpp"

namespace fftune {
namespace {

using testing::world_size;

int mirrored_forward = 0, mirrored_inverse = 0;  // c2c stages made with the other sign

// fftw with the sign of every c2c transform flipped: X'[k] = X[-k] along its axes.
class MirroringBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "fftw_mirrored"; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        FftDescriptor d = desc;
        if (d.kind == FftKind::c2c_forward) d.kind = FftKind::c2c_backward, ++mirrored_forward;
        else if (d.kind == FftKind::c2c_backward) d.kind = FftKind::c2c_forward, ++mirrored_inverse;
        return inner().make_fft(d);
    }
};
const bool registered = register_variant<Backend, MirroringBackend>("fftw_mirrored");

// The same two in host memory that they call backend memory, as a GPU's is: the
// checks then read the arrays through the backend's copies, not directly.
template <bool Mirrored>
class AsDeviceBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return Mirrored ? "fftw_mirrored_as_device" : "fftw_as_device"; }
    bool device_memory() const override { return true; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        FftDescriptor d = desc;
        if (Mirrored && d.kind == FftKind::c2c_forward) d.kind = FftKind::c2c_backward;
        else if (Mirrored && d.kind == FftKind::c2c_backward) d.kind = FftKind::c2c_forward;
        return inner().make_fft(d);
    }
};
const bool as_device = register_variant<Backend, AsDeviceBackend<false>>("fftw_as_device") &&
                       register_variant<Backend, AsDeviceBackend<true>>("fftw_mirrored_as_device");

const Check& check_named(const ValidationResult& v, const std::string& method) {
    for (const auto& c : v.checks)
        if (c.method == method) return c;
    throw std::runtime_error("no check " + method);
}

Config config_of(const std::string& backend, const char* decomposition) {
    return Config{backend, decomposition, LayoutVariant::default_, {world_size(), 1}, {"a2a_sync"}, false};
}

// 160x128x128 (2.6M points, no oracle): the correct plan passes every check
// in both precisions; the mirrored one passes the round trip and the Laplacian
// and fails the spot check by the mirrored modes' amplitude (|X| = N/2 moved away).
TEST(SpectrumSpotCheck, SeesAMirroredSpectrumAboveTheOracleLimit) {
    const std::array<index_t, 3> n{160, 128, 128};
    ASSERT_GT(n[0] * n[1] * n[2], oracle_max_points);
    // slab_2d1d: one c2c stage (x) each way, so the round trip undoes the mirror.
    const char* d = "slab_2d1d";
    for (const char* backend : {"fftw", "fftw_mirrored"})
        for (auto precision : {Precision::double_, Precision::single}) {
            const bool mirrored = std::string(backend) == "fftw_mirrored";
            if (mirrored && precision == Precision::single) continue;
            const Problem problem{"fft3d", n, precision, Direction::forward, world_size()};
            const int forward = mirrored_forward, inverse = mirrored_inverse;
            Plan plan(MPI_COMM_WORLD, problem, config_of(backend, d));
            if (mirrored) ASSERT_TRUE(mirrored_forward > forward && mirrored_inverse > inverse) << d;
            const auto v = validate(plan);
            ASSERT_EQ(v.checks.size(), 3u) << d;
            EXPECT_TRUE(check_named(v, "round_trip").passed) << d << " " << backend;
            EXPECT_TRUE(check_named(v, "spectral_laplacian").passed) << d << " " << backend;
            const Check& spot = check_named(v, "spectrum_spot");
            EXPECT_EQ(spot.passed, !mirrored) << d << " " << backend << ": " << spot.max_rel_error;
            EXPECT_EQ(v.passed(), !mirrored) << d << " " << backend;
            if (mirrored) EXPECT_GT(spot.max_rel_error, 0.1) << d;
            else EXPECT_LT(spot.max_rel_error, precision == Precision::double_ ? 1e-13 : 1e-6) << d;
        }
}

// Below the limit the oracle sees it too, and the spot check agrees with it.
TEST(SpectrumSpotCheck, AgreesWithTheOracleOnSmallGrids) {
    for (const char* backend : {"fftw", "fftw_mirrored"}) {
        const bool mirrored = std::string(backend) == "fftw_mirrored";
        const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, world_size()};
        Plan plan(MPI_COMM_WORLD, problem, config_of(backend, "slab_2d1d"));
        const auto v = validate(plan);
        ASSERT_EQ(v.checks.size(), 4u);
        EXPECT_EQ(check_named(v, "oracle_forward").passed, !mirrored) << backend;
        EXPECT_EQ(check_named(v, "spectrum_spot").passed, !mirrored) << backend;
        EXPECT_TRUE(check_named(v, "round_trip").passed) << backend;
    }
}

// Sampled validation (large grids, validate_timed) on 2-3 ranks: every rank's
// planes and spot entries count; a mirrored spectrum fails the spot check,
// read directly or through the backend's copies.
TEST(SampledValidation, PassesOnEveryRankAndSeesAMirroredSpectrum) {
    for (const char* backend : {"fftw", "fftw_mirrored", "fftw_as_device", "fftw_mirrored_as_device"})
        for (auto dir : {Direction::forward, Direction::inverse})
            for (const char* d : {"slab_2d1d", "slab_1d2d"}) {
                const bool mirrored = std::string(backend).find("mirrored") != std::string::npos;
                const Problem problem{"fft3d", {24, 18, 16}, Precision::double_, dir, world_size()};
                Plan plan(MPI_COMM_WORLD, problem, config_of(backend, d));
                Buffer real = plan.allocate_input(), complex = plan.allocate_output();
                fill_test_input(real.as<double>(), plan.input_layout(), problem.size);
                plan.forward(real.data(), complex.data());
                if (dir == Direction::inverse) plan.inverse(complex.data(), real.data());
                const auto v = validate_timed(plan, real, complex, dir);
                EXPECT_TRUE(check_named(v, "round_trip_sampled").passed) << d << " " << backend;
                EXPECT_EQ(check_named(v, "spectrum_spot").passed, !mirrored) << d << " " << backend;
                if (!mirrored) EXPECT_LT(check_named(v, "spectrum_spot").max_rel_error, 1e-13) << d;
            }
}

}  // namespace
}  // namespace fftune
