// PoissonKernels of the backend FFTUNE_TEST_BACKEND (default fftw, the host
// oracle; CMake registers cuda) against green.cpp's host functions: the
// spectral kernel (FFTW's DCT-I, REDFT00), TestProblem's ρ and φ.
#include "families/poisson/device_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/base/registry.hpp"

namespace fftune::poisson {
namespace {

std::unique_ptr<Backend> test_backend() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return Registry<Backend>::instance().create(env ? env : "fftw");
}

template <class T>
std::vector<double> read_back(Backend& be, const Buffer& b, std::size_t count) {
    std::vector<T> host(count);
    be.copy_to_host(host.data(), b.data(), count * sizeof(T));
    be.synchronize();
    return {host.begin(), host.end()};
}

// Every boundary and kernel, odd and even sizes, the whole r2c spectrum and
// a sub-box in another axis order, both precisions, rows in one chunk and in
// chunks of a few rows with a shorter last one: the kernel built in backend
// memory is spectral_kernel's, to rounding.
TEST(PoissonKernels, SpectralKernelOnTheBackendIsTheHostOne) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    ASSERT_TRUE(kernels);
    int built = 0;
    for (const Size n : {Size{8, 6, 5}, Size{7, 9, 4}})
        for (auto b : all_values<Boundary>())
            for (auto k : all_values<Kernel>()) {
                if (kernel_not_applicable(b, k)) continue;
                if (auto why = kernels->not_applicable(b)) {
                    std::printf("%s on %s: %s\n", to_string(b).c_str(), be->name().c_str(), why->c_str());
                    EXPECT_EQ(b, Boundary::wire) << *why;  // the only one without device functions
                    continue;
                }
                const GreenTable g = green_table(n, b, k);
                const Size m = g.m;
                for (const Layout& l : {Layout{{{0, 0, 0}, {m[0], m[1], m[2] / 2 + 1}}, order_xyz},
                                        Layout{{{1, 2, 0}, {m[0], m[1] - 1, m[2] / 2}}, order_yzx}})
                    for (auto precision : {Precision::double_, Precision::single})
                        for (std::size_t chunk : {std::size_t(256) << 20, std::size_t(700)}) {
                            const auto want = spectral_kernel(n, b, k, l);
                            Buffer out(*be, want.size() * real_bytes(precision));
                            spectral_kernel_on(*be, *kernels, g, l, precision, out.data(), chunk);
                            const auto got = precision == Precision::single
                                                 ? read_back<float>(*be, out, want.size())
                                                 : read_back<double>(*be, out, want.size());
                            double scale = 0, err = 0;
                            for (std::size_t i = 0; i < want.size(); ++i) {
                                scale = std::max(scale, std::abs(want[i]));
                                err = std::max(err, std::abs(got[i] - want[i]));
                            }
                            EXPECT_LE(err, (precision == Precision::single ? 1e-6 : 1e-13) * scale)
                                << to_string(b) << " " << to_string(k) << " " << size_string(n) << " "
                                << order_name(l.order) << " " << to_string(precision) << " chunk " << chunk;
                            ++built;
                        }
            }
    EXPECT_GE(built, 2 * 4 * 2 * 2 * 2);  // free (2 kernels), surface, periodic at least
}

// ρ written into a strided part of a larger array: every point the host's
// TestProblem::rho, nothing outside it touched.
TEST(PoissonKernels, RhoIsWrittenInPlaceAtEveryPointOfTheBox) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const Size n{20, 18, 16};
    const Layout whole{{{2, 0, 0}, {12, 18, 20}}, order_zxy};  // an x-slab, rows longer than N_z
    const Box3 box{{2, 0, 0}, {12, 18, 16}};
    for (auto b : all_values<Boundary>()) {
        if (kernels->not_applicable(b)) continue;
        for (auto precision : {Precision::double_, Precision::single}) {
            const std::size_t count = std::size_t(whole.box.count());
            Buffer array(*be, count * real_bytes(precision));
            std::vector<double> sentinel(count, 7.0);
            if (precision == Precision::single) {
                const std::vector<float> f(sentinel.begin(), sentinel.end());
                be->copy_from_host(array.data(), f.data(), count * sizeof(float));
            } else {
                be->copy_from_host(array.data(), sentinel.data(), count * sizeof(double));
            }
            const TestProblem t{n, b};
            GridArray a;
            a.data = array.data(), a.box = box;
            const auto st = whole.strides();
            for (int d = 0; d < 3; ++d) a.region.extent[d] = box.extent(d), a.region.stride[d] = st[d];
            a.region.offset = whole.offset_of(box.lo);
            kernels->fill_rho(*be, a, t, precision);
            const auto got = precision == Precision::single ? read_back<float>(*be, array, count)
                                                            : read_back<double>(*be, array, count);
            const double tol = precision == Precision::single ? 1e-6 : 1e-13;
            double scale = 0;
            for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
                for (index_t j = 0; j < n[1]; ++j)
                    for (index_t l = 0; l < n[2]; ++l) scale = std::max(scale, std::abs(t.rho(i, j, l)));
            for (index_t i = whole.box.lo[0]; i < whole.box.hi[0]; ++i)
                for (index_t j = 0; j < whole.box.hi[1]; ++j)
                    for (index_t l = 0; l < whole.box.hi[2]; ++l) {
                        const double v = got[std::size_t(whole.offset_of({i, j, l}))];
                        if (l >= n[2]) {
                            ASSERT_EQ(v, 7.0) << "wrote outside the box at z " << l;
                            continue;
                        }
                        ASSERT_NEAR(v, t.rho(i, j, l), tol * scale)
                            << to_string(b) << " " << to_string(precision) << " " << i << " " << j << " " << l;
                    }
        }
    }
}

// φ = exact × (1 + 10⁻³ ε(i, j, l)) on the planes checked: the reduction's
// max and sums are the host's; the unchecked planes (set to 10⁶) do not
// count; a NaN in a checked plane is reported, one outside it is not.
TEST(PoissonKernels, PhiErrorsAreTheHostsOverTheCheckedPlanes) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const Size n{24, 20, 18};
    const Box3 box{{4, 0, 0}, {16, 20, 18}};
    const Layout layout{box, order_xyz};
    const std::vector<index_t> planes{4, 7, 8, 15};
    for (auto b : all_values<Boundary>()) {
        if (kernels->not_applicable(b)) continue;
        const TestProblem t{n, b};
        const std::size_t count = std::size_t(box.count());
        std::vector<double> phi(count, 1e6);
        PhiErrors want;
        for (index_t i : planes)
            for (index_t j = 0; j < n[1]; ++j)
                for (index_t l = 0; l < n[2]; ++l) {
                    const double exact = t.phi(i, j, l), eps = 1e-3 * std::sin(double(i * 7 + j * 3 + l));
                    const double v = exact * (1 + eps), e = v - exact;
                    phi[std::size_t(layout.offset_of({i, j, l}))] = v;
                    want.max_error = std::max(want.max_error, std::abs(e));
                    want.max_exact = std::max(want.max_exact, std::abs(exact));
                    want.sum_error2 += e * e;
                    want.sum_exact2 += exact * exact;
                }
        for (auto precision : {Precision::double_, Precision::single}) {
            Buffer array(*be, count * real_bytes(precision));
            auto upload = [&](const std::vector<double>& v) {
                if (precision == Precision::single) {
                    const std::vector<float> f(v.begin(), v.end());
                    be->copy_from_host(array.data(), f.data(), count * sizeof(float));
                } else {
                    be->copy_from_host(array.data(), v.data(), count * sizeof(double));
                }
            };
            upload(phi);
            GridArray a;
            a.data = array.data(), a.box = box;
            a.region = {{box.extent(0), box.extent(1), box.extent(2)}, {n[1] * n[2], n[2], 1}, 0};
            const PhiErrors got = kernels->phi_errors(*be, a, planes, t, precision);
            // Single: φ rounded to float, an error of 2^-24 |φ| on top of 10⁻³.
            const double rel = precision == Precision::single ? 1e-3 : 1e-12;
            EXPECT_FALSE(got.not_finite);
            EXPECT_NEAR(got.max_error, want.max_error, rel * want.max_error) << to_string(b);
            EXPECT_NEAR(got.max_exact, want.max_exact, 1e-12 * want.max_exact) << to_string(b);
            EXPECT_NEAR(got.sum_error2, want.sum_error2, 10 * rel * want.sum_error2) << to_string(b);
            EXPECT_NEAR(got.sum_exact2, want.sum_exact2, 1e-12 * want.sum_exact2) << to_string(b);
            auto with_nan = phi;
            with_nan[std::size_t(layout.offset_of({5, 3, 2}))] = std::numeric_limits<double>::quiet_NaN();
            upload(with_nan);
            EXPECT_FALSE(kernels->phi_errors(*be, a, planes, t, precision).not_finite) << "plane 5 is not checked";
            with_nan[std::size_t(layout.offset_of({8, 19, 17}))] = std::numeric_limits<double>::quiet_NaN();
            upload(with_nan);
            EXPECT_TRUE(kernels->phi_errors(*be, a, planes, t, precision).not_finite) << to_string(b);
        }
    }
}

}  // namespace
}  // namespace fftune::poisson
