// Validation must catch a swapped axis in any layout. A test-only backend wraps
// fftw and swaps the output strides of two equally long axes of one FFT
// stage (a transposed layout); every decomposition x layout must then fail.
#include "core/engine/validation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdlib>

#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"

namespace fftune {
namespace {

TEST(TestFunction, IsAsymmetricUnderEveryAxisPermutation) {
    const std::array<index_t, 3> n{8, 8, 8};
    const auto modes = test_modes(n);
    std::array<int, 3> perm{0, 1, 2};
    while (std::next_permutation(perm.begin(), perm.end())) {
        double diff = 0, lap_diff = 0;
        for (index_t x = 0; x < 8; ++x)
            for (index_t y = 0; y < 8; ++y)
                for (index_t z = 0; z < 8; ++z) {
                    const std::array<index_t, 3> g{x, y, z};
                    const index_t px = g[perm[0]], py = g[perm[1]], pz = g[perm[2]];
                    diff = std::max(diff, std::abs(test_function(modes, n, x, y, z) - test_function(modes, n, px, py, pz)));
                    lap_diff = std::max(lap_diff, std::abs(test_laplacian(modes, n, x, y, z) -
                                                           test_laplacian(modes, n, px, py, pz)));
                }
        EXPECT_GT(diff, 0.1) << perm[0] << perm[1] << perm[2];
        EXPECT_GT(lap_diff, 0.1) << perm[0] << perm[1] << perm[2];
    }
}

TEST(TestFunction, ModesStayBelowNyquistAndWavenumbersAreMinimal) {
    for (const auto& m : test_modes({4, 3, 64}))
        for (int a = 0; a < 3; ++a) EXPECT_LT(2 * m.k[a], (std::array<int, 3>{4, 3, 64}[a]));
    EXPECT_EQ(wavenumber(3, 8), 3);
    EXPECT_EQ(wavenumber(4, 8), 4);
    EXPECT_EQ(wavenumber(5, 8), -3);
    EXPECT_LT(transform_tolerance(Precision::double_, 1 << 20), 1e-12);
    EXPECT_LT(transform_tolerance(Precision::single, 1 << 20), 1e-4);
}

TEST(TestFunction, FilledFieldMatchesTheFormulaInEveryOrder) {
    const std::array<index_t, 3> n{9, 10, 11};
    const auto modes = test_modes(n);
    for (const auto order : {order_xyz, order_zxy, order_yzx}) {
        const Layout l{{{2, 3, 1}, {7, 10, 6}}, order};
        std::vector<double> f;
        fill_test_input(f, l, n);
        double err = 0;
        for (index_t x = 2; x < 7; ++x)
            for (index_t y = 3; y < 10; ++y)
                for (index_t z = 1; z < 6; ++z)
                    err = std::max(err, std::abs(f[l.offset_of({x, y, z})] - test_function(modes, n, x, y, z)));
        EXPECT_LT(err, 1e-13) << order_name(order);
    }
}

// Large enough that x-planes are split over threads (2^16 points per thread).
TEST(TestFunction, ThreadedFillMatchesTheFormula) {
    setenv("FFTUNE_HOST_THREADS", "4", 1);
    const std::array<index_t, 3> n{64, 60, 70};
    const auto modes = test_modes(n);
    const Layout l{{{3, 0, 1}, {64, 60, 70}}, order_zxy};
    std::vector<double> f;
    fill_test_input(f, l, n);
    unsetenv("FFTUNE_HOST_THREADS");
    double err = 0;
    for (index_t x = 3; x < 64; ++x)
        for (index_t y = 0; y < 60; ++y)
            for (index_t z = 1; z < 70; ++z)
                err = std::max(err, std::abs(f[l.offset_of({x, y, z})] - test_function(modes, n, x, y, z)));
    EXPECT_LT(err, 1e-12);
}

// The terms a backend fills the input from are the test function itself,
// also when asked again for a box or grid after another (the last ones are kept).
TEST(TestFunction, SeparableTermsAreTheFilledField) {
    auto be = Registry<Backend>::instance().create("fftw");
    const Layout a{{{5, 0, 2}, {17, 12, 9}}, order_zxy}, b{{{5, 0, 2}, {17, 12, 8}}, order_zxy};
    for (const auto& [n, l] : std::vector<std::pair<std::array<index_t, 3>, Layout>>{
             {{20, 12, 10}, a}, {{20, 12, 10}, b}, {{20, 12, 10}, a}, {{20, 12, 9}, a}, {{20, 12, 10}, a}}) {
        Buffer got(*be, l.box.count() * sizeof(double));
        be->fill_separable(got.data(), l, test_input_terms(n, l.box), Precision::double_);
        std::vector<double> want;
        fill_test_input(want, l, n);
        double err = 0;
        for (index_t i = 0; i < l.box.count(); ++i) err = std::max(err, std::abs(got.as<double>()[i] - want[i]));
        EXPECT_LT(err, 1e-14) << l.box.str() << " of " << n[0] << "x" << n[1] << "x" << n[2];
    }
}

int swaps = 0;

class SwappingBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "fftw_swapped_axes"; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        FftDescriptor d = desc;
        // Transpose the output of the forward transform's first stage that has two
        // equally long axes (transformed or batched; not the halved r2c axis).
        const bool forward = d.kind == FftKind::r2c || d.kind == FftKind::c2c_forward;
        std::vector<FftDim*> axes;
        for (std::size_t i = 0; i < d.dims.size(); ++i)
            if (d.kind != FftKind::r2c || i + 1 < d.dims.size()) axes.push_back(&d.dims[i]);
        for (auto& b : d.batch) axes.push_back(&b);
        for (std::size_t i = 0; i < axes.size() && forward && !swapped_; ++i)
            for (std::size_t j = i + 1; j < axes.size() && !swapped_; ++j)
                if (axes[i]->n == axes[j]->n && axes[i]->n > 1) {
                    std::swap(axes[i]->out_stride, axes[j]->out_stride);
                    swapped_ = true;
                    ++swaps;
                }
        return inner().make_fft(d);
    }

private:
    bool swapped_ = false;
};

const bool registered = register_variant<Backend, SwappingBackend>("fftw_swapped_axes");

// fftw that says its memory is a device's (it is the host's): checks take the
// device path (Plan::buffers_on_host false), through the Backend defaults.
class DeviceLikeBackend final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "fftw_device_like"; }
    bool device_memory() const override { return true; }
};
const bool device_like_registered = register_variant<Backend, DeviceLikeBackend>("fftw_device_like");

// The arrays a timed run of `d` leaves (Fft3dWorkload): the test input and its
// spectrum; after timed inverses the inverse of that spectrum in `real`.
struct TimedArrays {
    Buffer real, complex;
};
TimedArrays timed_arrays(Plan& plan, Direction d) {
    TimedArrays t{plan.allocate_input(), plan.allocate_output()};
    if (plan.problem().precision == Precision::single)
        fill_test_input(t.real.as<float>(), plan.input_layout(), plan.problem().size);
    else
        fill_test_input(t.real.as<double>(), plan.input_layout(), plan.problem().size);
    plan.forward(t.real.data(), t.complex.data());
    if (d == Direction::inverse) plan.inverse(t.complex.data(), t.real.data());
    return t;
}

TEST(Validation, CorrectPlansPassWithAllFourChecks) {
    const Problem problem{"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, 1};
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"}) {
        const Config config{"fftw", d, LayoutVariant::realigned, {1, 1},
                            std::string(d) == "pencil" ? std::vector<std::string>{"p2p_sync", "a2a_sync"}
                                                       : std::vector<std::string>{"a2a_sync"},
                            false};
        Plan plan(MPI_COMM_SELF, problem, config);
        const auto v = validate(plan);
        ASSERT_EQ(v.checks.size(), 4u);
        EXPECT_TRUE(v.passed()) << d;
        EXPECT_EQ(v.primary().method, "spectral_laplacian");
    }
}

TEST(Validation, CatchesASwappedAxisInEveryDecompositionAndLayout) {
    const Problem problem{"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, 1};
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>()) {
            const Config config{"fftw_swapped_axes", d, layout, {1, 1},
                                std::string(d) == "pencil" ? std::vector<std::string>{"p2p_sync", "p2p_sync"}
                                                           : std::vector<std::string>{"p2p_sync"},
                                false};
            const int before = swaps;
            Plan plan(MPI_COMM_SELF, problem, config);
            ASSERT_EQ(swaps, before + 1) << "no stage was transposed for " << config.key();
            const auto v = validate(plan);
            EXPECT_FALSE(v.passed()) << config.key();
            EXPECT_FALSE(v.primary().passed) << "the spectral Laplacian alone must catch it: " << config.key();
            auto t = timed_arrays(plan, Direction::forward);  // large grids' checks see it too
            EXPECT_FALSE(validate_timed(plan, t.real, t.complex, Direction::forward).passed()) << config.key();
        }
}

// The threaded comparison loops (grids over 2^17 points) must still see an error.
TEST(Validation, ThreadedChecksPassAndCatchASwappedAxis) {
    setenv("FFTUNE_HOST_THREADS", "3", 1);
    const Problem problem{"fft3d", {64, 64, 48}, Precision::double_, Direction::forward, 1};
    for (const char* backend : {"fftw", "fftw_swapped_axes"}) {
        const Config config{backend, "slab_2d1d", LayoutVariant::default_, {1, 1}, {"a2a_sync"}, false};
        Plan plan(MPI_COMM_SELF, problem, config);
        const auto v = validate(plan);
        EXPECT_EQ(v.passed(), std::string(backend) == "fftw") << backend << ": " << v.primary().max_rel_error;
        EXPECT_EQ(v.primary().passed, std::string(backend) == "fftw") << backend;
    }
    unsetenv("FFTUNE_HOST_THREADS");
}

TEST(SampledValidation, StartsAt256Cubed) {
    EXPECT_FALSE(validated_by_samples({"fft3d", {255, 256, 256}, Precision::double_, Direction::forward, 1}));
    EXPECT_TRUE(validated_by_samples({"fft3d", {256, 256, 256}, Precision::single, Direction::inverse, 4}));
    EXPECT_TRUE(validated_by_samples({"fft3d", {4096, 4096, 1}, Precision::double_, Direction::forward, 1}));
}

// Correct plans pass both checks after timed forwards and inverses, in every
// decomposition x layout and both precisions, with errors at rounding level.
TEST(SampledValidation, CorrectPlansPassInBothDirections) {
    for (auto precision : {Precision::double_, Precision::single})
        for (auto dir : {Direction::forward, Direction::inverse})
            for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
                for (auto layout : all_values<LayoutVariant>()) {
                    const Problem problem{"fft3d", {20, 12, 10}, precision, dir, 1};
                    const Config config{"fftw", d, layout, {1, 1},
                                        std::string(d) == "pencil" ? std::vector<std::string>{"p2p_sync", "a2a_sync"}
                                                                   : std::vector<std::string>{"a2a_sync"},
                                        false};
                    Plan plan(MPI_COMM_SELF, problem, config);
                    auto t = timed_arrays(plan, dir);
                    const auto v = validate_timed(plan, t.real, t.complex, dir);
                    ASSERT_EQ(v.checks.size(), 2u);
                    EXPECT_EQ(v.primary().method, "round_trip_sampled");
                    EXPECT_EQ(v.checks[1].method, "spectrum_spot");
                    EXPECT_TRUE(v.passed()) << config.key() << " " << v.checks[0].max_rel_error << " "
                                            << v.checks[1].max_rel_error;
                    std::vector<std::string> parts;
                    for (const auto& [part, ms] : v.parts_ms) parts.push_back(part);
                    const std::vector<std::string> want =
                        dir == Direction::forward ? std::vector<std::string>{"spot", "transform", "round_trip"}
                                                  : std::vector<std::string>{"spot", "round_trip"};
                    EXPECT_EQ(parts, want);
                    const double eps = precision == Precision::single ? 1e-6 : 1e-14;
                    EXPECT_LT(v.checks[0].max_rel_error, eps) << config.key();
                    EXPECT_LT(v.checks[1].max_rel_error, eps) << config.key();
                }
}

// What the sampled planes see of a wrong result: a whole chunk of planes off
// by a factor (a missing overlap chunk, a stage's wrong scale), the last plane
// (an index overflow at the end of the array); a single point between sampled
// planes is the documented blind spot.
// Both where the arrays are host memory (read in place) and where they are
// a device's (the reference written beside them, compared by the backend).
TEST(SampledValidation, SeesWrongChunksAndTheLastPlaneNotEveryPoint) {
  for (const char* backend : {"fftw", "fftw_device_like"}) {
    SCOPED_TRACE(backend);
    const std::array<index_t, 3> n{64, 8, 6};  // x slowest: 64 planes, 17 sampled
    const Problem problem{"fft3d", n, Precision::double_, Direction::inverse, 1};
    const Config config{backend, "slab_2d1d", LayoutVariant::default_, {1, 1}, {"a2a_sync"}, false};
    Plan plan(MPI_COMM_SELF, problem, config);
    ASSERT_EQ(plan.buffers_on_host(), std::string(backend) == "fftw");
    ASSERT_EQ(plan.input_layout().order[0], 0);
    const index_t plane = n[1] * n[2], total = n[0] * plane;
    auto check = [&](auto spoil) {
        auto t = timed_arrays(plan, Direction::inverse);
        spoil(t.real.as<double>());
        return validate_timed(plan, t.real, t.complex, Direction::inverse);
    };
    EXPECT_TRUE(check([](double*) {}).passed());
    // 4 planes (a chunk of overlap 16) doubled in the middle.
    EXPECT_FALSE(check([&](double* r) { for (index_t i = 30 * plane; i < 34 * plane; ++i) r[i] *= 2; }).primary().passed);
    EXPECT_FALSE(check([&](double* r) { r[total - 1] += 1.0 * double(total); }).primary().passed);
    // x = 1 is not sampled (0, 3, 7, ...: every (64 - 1) / 16 planes).
    EXPECT_TRUE(check([&](double* r) { r[plane + 5] += 1.0 * double(total); }).primary().passed);
    // A spectrum entry of a test mode changed: the spot check.
    auto t = timed_arrays(plan, Direction::forward);
    const auto k = test_modes(n)[0].k;
    t.complex.as<std::complex<double>>()[plan.output_layout().offset_of({index_t(k[0]), index_t(k[1]), index_t(k[2])})] *= 1.01;
    const auto v = validate_timed(plan, t.real, t.complex, Direction::forward);
    EXPECT_FALSE(v.checks[1].passed);
  }
}

}  // namespace
}  // namespace fftune
