// ConvolutionKernels of the backend FFTUNE_TEST_BACKEND (default fftw, the
// host oracle; CMake registers cuda) against the host functions.
#include "families/convolution/device_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <random>

#include "core/base/registry.hpp"

namespace fftune::convolution {
namespace {

std::size_t max_points_of(const std::vector<Cell>& cells) {
    std::size_t most = 0;
    for (const Cell& c : cells) most = std::max(most, std::size_t(c.box.count()));
    return most;
}

std::unique_ptr<Backend> test_backend() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return Registry<Backend>::instance().create(env ? env : "fftw");
}

// g on boxes of a padded 2n grid (n = 5 × 3 × 4 → 10 × 6 × 8): the whole grid,
// a box off the origin in another axis order, and a box reaching past the
// padded grid (set to 0 there); every point against green() at its signed
// offset, scaled; nothing written outside the box.
TEST(ConvolutionKernels, FillGreenWritesTheSignedOffsetsKernel) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const Size3 n{5, 3, 4};
    for (auto k : {GreenKernel::gaussian, GreenKernel::inverse_r})
        for (const Layout& l : {Layout{{{0, 0, 0}, {10, 6, 8}}, order_xyz}, Layout{{{3, 1, 2}, {9, 6, 7}}, order_zxy},
                                Layout{{{6, 4, 5}, {12, 6, 9}}, order_yzx}}) {
            const std::size_t count = std::size_t(l.box.count());
            Buffer out(*be, (count + 1) * sizeof(double));
            std::vector<double> host(count + 1, 123.0);
            be->copy_from_host(out.data(), host.data(), host.size() * sizeof(double));
            kernels->fill_green(*be, out.as<double>(), l, n, k, 0.25);
            be->copy_to_host(host.data(), out.data(), host.size() * sizeof(double));
            be->synchronize();
            auto d = [&](int a, index_t i) { return i < n[a] ? i : i - 2 * n[a]; };
            for (index_t i = l.box.lo[0]; i < l.box.hi[0]; ++i)
                for (index_t j = l.box.lo[1]; j < l.box.hi[1]; ++j)
                    for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z) {
                        const bool inside = i < 2 * n[0] && j < 2 * n[1] && z < 2 * n[2];
                        const double want = inside ? 0.25 * green(k, d(0, i), d(1, j), d(2, z)) : 0.0;
                        EXPECT_NEAR(host[std::size_t(l.offset_of({i, j, z}))], want, 1e-16)
                            << order_name(l.order) << " " << i << " " << j << " " << z;
                    }
            EXPECT_EQ(host[count], 123.0) << "wrote past the box";
        }
    // The signed offsets: the padded grid's point 2n − 1 is offset −1.
    EXPECT_EQ(green(GreenKernel::inverse_r, -1, 0, 0), green(GreenKernel::inverse_r, 1, 0, 0));
    EXPECT_THROW(green_kernel("lorentz"), std::invalid_argument);
}

// separable_spectrum against its oracle, the DFT of fill_green's array summed
// directly over the whole padded grid: n = 4 × 3 × 5 (the lone offset −n is
// not negligible there, exp(−2)), over the r2c half-spectrum and a box off the
// origin; and one long axis (n = 100), where g's terms underflow to 0 long
// before n. inverse_r does not factor.
TEST(ConvolutionKernels, SeparableSpectrumIsTheDftOfFillGreen) {
    auto dft = [](const Size3& n, const std::array<index_t, 3>& k, double scale) {
        const Size3 m{2 * n[0], 2 * n[1], 2 * n[2]};
        auto d = [&](int a, index_t i) { return i < n[a] ? i : i - m[a]; };
        std::complex<double> s = 0;
        for (index_t i = 0; i < m[0]; ++i)
            for (index_t j = 0; j < m[1]; ++j)
                for (index_t l = 0; l < m[2]; ++l) {
                    const double phase = -2 * std::numbers::pi *
                                         (double(k[0] * i) / double(m[0]) + double(k[1] * j) / double(m[1]) +
                                          double(k[2] * l) / double(m[2]));
                    s += scale * green(GreenKernel::gaussian, d(0, i), d(1, j), d(2, l)) * std::polar(1.0, phase);
                }
        return s;
    };
    struct Case {
        Size3 n;
        Box3 box;
    };
    for (const Case& c : {Case{{4, 3, 5}, {{0, 0, 0}, {8, 6, 6}}}, Case{{4, 3, 5}, {{3, 1, 2}, {7, 5, 6}}},
                          Case{{100, 1, 1}, {{0, 0, 0}, {200, 2, 2}}}}) {
        const double scale = 1.0 / double(8 * c.n[0] * c.n[1] * c.n[2]);
        const auto terms = separable_spectrum(GreenKernel::gaussian, c.n, c.box, scale);
        ASSERT_TRUE(terms.has_value());
        ASSERT_EQ(terms->axis.size(), 1u);
        for (int a = 0; a < 3; ++a) ASSERT_EQ(index_t(terms->axis[0][std::size_t(a)].size()), c.box.extent(a));
        for (index_t i = c.box.lo[0]; i < c.box.hi[0]; ++i)
            for (index_t j = c.box.lo[1]; j < c.box.hi[1]; ++j)
                for (index_t l = c.box.lo[2]; l < c.box.hi[2]; ++l) {
                    const std::complex<double> want = dft(c.n, {i, j, l}, scale);
                    const std::complex<double> got = terms->axis[0][0][std::size_t(i - c.box.lo[0])] *
                                                     terms->axis[0][1][std::size_t(j - c.box.lo[1])] *
                                                     terms->axis[0][2][std::size_t(l - c.box.lo[2])];
                    EXPECT_NEAR(want.imag(), 0.0, 1e-13) << "g is even: its spectrum is real";
                    EXPECT_NEAR(got.real(), want.real(), 1e-13 * scale * double(8 * c.n[0] * c.n[1] * c.n[2]))
                        << c.n[0] << " at " << i << " " << j << " " << l;
                    EXPECT_EQ(got.imag(), 0.0);
                }
    }
    EXPECT_FALSE(separable_spectrum(GreenKernel::inverse_r, {4, 3, 5}, {{0, 0, 0}, {8, 6, 6}}, 1.0).has_value());
}

// fill_input writes the region only, in the layout's order (noise: the same
// hash bit for bit; blobs within rounding of exp); direct_sums against the
// host oracle (the fftw kernels) on a 9 × 7 × 10 grid, probes inside and on
// its corners, both kernels, the planes added in order.
TEST(ConvolutionKernels, InputAndDirectSumsMatchTheHostOracle) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    auto host = Registry<ConvolutionKernels>::instance().create("fftw");
    const Size3 n{9, 7, 10};
    for (auto field : {InputField::blobs, InputField::noise}) {
        const Layout l{{{2, 1, 0}, {8, 7, 10}}, order_zxy};
        const Box3 region{{3, 2, 4}, {7, 6, 9}};
        const std::size_t count = std::size_t(l.box.count());
        std::vector<double> got(count, -7.0);
        Buffer out(*be, count * sizeof(double));
        be->copy_from_host(out.data(), got.data(), count * sizeof(double));
        kernels->fill_input(*be, out.as<double>(), l, region, n, field);
        be->copy_to_host(got.data(), out.data(), count * sizeof(double));
        be->synchronize();
        for (index_t i = l.box.lo[0]; i < l.box.hi[0]; ++i)
            for (index_t j = l.box.lo[1]; j < l.box.hi[1]; ++j)
                for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z) {
                    const double v = got[std::size_t(l.offset_of({i, j, z}))];
                    const bool inside = i >= region.lo[0] && i < region.hi[0] && j >= region.lo[1] &&
                                        j < region.hi[1] && z >= region.lo[2] && z < region.hi[2];
                    if (!inside) EXPECT_EQ(v, -7.0) << "wrote outside the region";
                    else if (field == InputField::noise) EXPECT_EQ(v, input_value(field, n, i, j, z));
                    else EXPECT_NEAR(v, input_value(field, n, i, j, z), 1e-15);
                }
        const Box3 all{{0, 0, 0}, n};
        std::vector<double> x(std::size_t(all.count()));
        host->fill_input(*be, x.data(), Layout{all, order_xyz}, all, n, field);
        const std::vector<index_t> probes{0, 0, 0, 8, 6, 9, 4, 3, 5, 1, 6, 2};
        for (auto k : {GreenKernel::gaussian, GreenKernel::inverse_r}) {
            std::vector<double> want(4 * std::size_t(n[0])), sums(want.size());
            host->direct_sums(*be, x.data(), n, k, probes.data(), 4, want.data());
            Buffer xd(*be, x.size() * sizeof(double)), pd(*be, probes.size() * sizeof(index_t)),
                sd(*be, sums.size() * sizeof(double));
            be->copy_from_host(xd.data(), x.data(), x.size() * sizeof(double));
            be->copy_from_host(pd.data(), probes.data(), probes.size() * sizeof(index_t));
            kernels->direct_sums(*be, xd.as<const double>(), n, k, pd.as<const index_t>(), 4, sd.as<double>());
            be->copy_to_host(sums.data(), sd.data(), sums.size() * sizeof(double));
            be->synchronize();
            for (std::size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(sums[s], want[s], 1e-12 * (1 + std::abs(want[s])));
            // The oracle itself: probe 2's plane 3 by a plain sum.
            double plain = 0;
            for (index_t b = 0; b < n[1]; ++b)
                for (index_t c = 0; c < n[2]; ++c)
                    plain += input_value(field, n, 3, b, c) * green(k, 4 - 3, 3 - b, 5 - c);
            EXPECT_NEAR(want[2 * std::size_t(n[0]) + 3], plain, 1e-13 * (1 + std::abs(plain)));
        }
    }
}

// Sampling and interpolation against the host functions (sampling.cpp): every scheme, a stride that divides no cell
// (3), cells of 5³, clipped cells, sources below and above the region, a grid
// whose strides do not start at the origin. Samples are copies (equal);
// interpolation may contract a lerp into an FMA (1e-14 of the field).
TEST(ConvolutionKernels, SampleAndInterpolateMatchTheHostOracle) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const Box3 grid{{0, 0, 0}, {40, 17, 23}};
    const std::array<index_t, 3> stride{17 * 23, 23, 1};
    const index_t base = 11;  // the grid starts 11 values into its array
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> field(std::size_t(base + grid.count()));
    for (double& v : field) v = u(rng);
    Buffer field_dev(*be, field.size() * sizeof(double));
    be->copy_from_host(field_dev.data(), field.data(), field.size() * sizeof(double));
    const GridView host_view{field.data(), base, stride}, dev_view{field_dev.as<const double>(), base, stride};

    std::vector<SamplingScheme> schemes = sampling_schemes();
    schemes.push_back({"stride3", 4, {3}, 2});
    schemes.push_back({"cell5", 5, {1, 2, 4}, 2});
    const Box3 region{{13, 1, 2}, {31, 17, 23}};  // 18 x 16 x 21: clipped along every axis
    for (const auto& scheme : schemes)
        for (const Box3& source : {Box3{{0, 0, 0}, {5, 17, 23}}, Box3{{31, 0, 0}, {40, 17, 23}}}) {
            const auto cells = tile(region, source, scheme);
            const DeviceTiling t(*be, *kernels, tiling(region, source, scheme));
            ASSERT_EQ(t.samples, sample_count(cells));
            std::vector<double> want;
            sample(cells, host_view, want);
            Buffer got_dev(*be, std::max<std::size_t>(want.size(), 1) * sizeof(double));
            kernels->sample(*be, t, dev_view, got_dev.as<double>());
            std::vector<double> got(want.size());
            be->copy_to_host(got.data(), got_dev.data(), got.size() * sizeof(double));
            be->synchronize();
            ASSERT_EQ(got, want) << scheme.name << " from x " << source.lo[0];

            std::vector<double> out(std::size_t(region.count()));
            for (double& v : out) v = u(rng);
            std::vector<double> expect = out;
            interpolate_add(cells, want.data(), region, expect.data());
            Buffer out_dev(*be, out.size() * sizeof(double));
            be->copy_from_host(out_dev.data(), out.data(), out.size() * sizeof(double));
            kernels->interpolate_add(*be, t, got_dev.as<const double>(), region, out_dev.as<double>());
            be->copy_to_host(out.data(), out_dev.data(), out.size() * sizeof(double));
            be->synchronize();
            double worst = 0;
            for (std::size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - expect[i]));
            EXPECT_LT(worst, 1e-14) << scheme.name << " from x " << source.lo[0];
        }
}

// The tiling made from its numbers (fill_tiling) against tile()'s loops and
// sample_offsets: every scheme, a cell of 5 and a stride that divides no cell,
// sources below, above and inside the region, a region off the origin clipped
// on every axis, a region thinner than a cell, no cell at all, and the test
// seam's dropped cell (first, inside, last).
TEST(ConvolutionKernels, FillTilingMakesTheCellsAndOffsetsOfTile) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    auto same = [&](const Box3& region, const Box3& source, const SamplingScheme& s) {
        const auto want = tile(region, source, s);
        const auto want_off = sample_offsets(want);
        const DeviceTiling t(*be, *kernels, tiling(region, source, s));
        EXPECT_EQ(t.count, want.size());
        EXPECT_EQ(t.samples, want_off.back());
        EXPECT_GE(t.max_points, max_points_of(want));
        std::vector<Cell> got(want.size());
        std::vector<std::size_t> got_off(want_off.size());
        if (!got.empty()) be->copy_to_host(got.data(), t.cells.data(), got.size() * sizeof(Cell));
        be->copy_to_host(got_off.data(), t.offsets.data(), got_off.size() * sizeof(std::size_t));
        be->synchronize();
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < want.size(); ++k) wrong += got[k].box != want[k].box || got[k].rate != want[k].rate;
        EXPECT_EQ(wrong, 0u) << s.name << " " << region.str() << " from " << source.str();
        EXPECT_EQ(got_off, want_off) << s.name << " " << region.str() << " from " << source.str();
    };
    std::vector<SamplingScheme> schemes = sampling_schemes();
    schemes.push_back({"stride3", 4, {3}, 2});
    schemes.push_back({"cell5", 5, {1, 2, 4}, 2});
    const Box3 region{{13, 1, 2}, {71, 19, 27}};  // 58 x 18 x 25
    for (const auto& s : schemes)
        for (const Box3& source : {Box3{{0, 0, 0}, {13, 19, 27}}, Box3{{71, 0, 0}, {90, 19, 27}},
                                   Box3{{30, 0, 0}, {41, 19, 27}}})
            same(region, source, s);
    const Box3 below{{0, 0, 0}, {13, 19, 27}};
    same(Box3{{13, 0, 0}, {40, 3, 2}}, below, sampling_scheme("coarse"));  // thinner than a cell in y and z
    same(Box3{{13, 0, 0}, {40, 0, 9}}, below, sampling_scheme("fine"));   // no cell
    const std::size_t cells = tile(region, below, sampling_scheme("fine")).size();
    for (const std::size_t k : {std::size_t(0), std::size_t(345), cells - 1}) {
        dropped_cell_for_testing() = DroppedCell{region, k};
        same(region, below, sampling_scheme("fine"));
        dropped_cell_for_testing().reset();
    }
}

// check_values: the grid's values at check_points() (given, then random over
// a domain off the origin) inside a region, 0 outside it, against a host loop
// over check_points(); 3 given points (one outside) and 5000 random ones.
TEST(ConvolutionKernels, CheckValuesAreTheGridAtTheCheckPointsInTheRegion) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const Box3 domain{{2, 1, 0}, {30, 17, 23}}, region{{9, 1, 0}, {30, 17, 23}};
    const std::array<index_t, 3> stride{17 * 23, 23, 1};
    const index_t base = 5;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> field(std::size_t(base + 30 * stride[0]));
    for (double& v : field) v = u(rng);
    Buffer field_dev(*be, field.size() * sizeof(double));
    be->copy_from_host(field_dev.data(), field.data(), field.size() * sizeof(double));
    const std::vector<index_t> given{9, 3, 4, 29, 16, 22, 4, 2, 2};  // the last below the region
    const std::size_t random = 5000;
    std::vector<std::array<index_t, 3>> points{{9, 3, 4}, {29, 16, 22}, {4, 2, 2}};
    for (const auto& p : check_points({}, domain, 4, 16, random)) points.push_back(p);
    std::vector<double> want(points.size());
    std::size_t inside = 0;
    for (std::size_t k = 0; k < points.size(); ++k) {
        const auto& p = points[k];
        if (region.contains(p)) want[k] = field[std::size_t(base + p[0] * stride[0] + p[1] * stride[1] + p[2])], ++inside;
    }
    ASSERT_GT(inside, 3000u);  // most of them (21 of 28 planes), not all
    ASSERT_LT(inside, points.size());
    Buffer given_dev(*be, given.size() * sizeof(index_t)), out_dev(*be, points.size() * sizeof(double));
    be->copy_from_host(given_dev.data(), given.data(), given.size() * sizeof(index_t));
    kernels->check_values(*be, GridView{field_dev.as<const double>(), base, stride}, region, given_dev.as<const index_t>(),
                          3, domain, random, out_dev.as<double>());
    std::vector<double> got(points.size());
    be->copy_to_host(got.data(), out_dev.data(), got.size() * sizeof(double));
    be->synchronize();
    EXPECT_EQ(got, want);
}

// compare: the sums and the max over 10^5 values against a host loop; a NaN
// in y is reported and left out of the sums; max |exact| counts every value.
TEST(ConvolutionKernels, CompareReducesLikeTheHost) {
    auto be = test_backend();
    auto kernels = kernels_for(*be);
    const std::size_t count = 100003;
    std::vector<double> y(count), exact(count);
    for (std::size_t i = 0; i < count; ++i) {
        exact[i] = std::sin(0.001 * double(i)) * (i == 777 ? 50.0 : 1.0);
        y[i] = exact[i] * (1 + 1e-3 * std::cos(double(i)));
    }
    y[4242] = std::numeric_limits<double>::quiet_NaN();
    double want_e = 0, want_x = 0, want_max = 0;
    for (std::size_t i = 0; i < count; ++i) {
        want_max = std::max(want_max, std::abs(exact[i]));
        if (i == 4242) continue;
        want_e += (y[i] - exact[i]) * (y[i] - exact[i]), want_x += exact[i] * exact[i];
    }
    Buffer dy(*be, count * sizeof(double)), dx(*be, count * sizeof(double));
    be->copy_from_host(dy.data(), y.data(), count * sizeof(double));
    be->copy_from_host(dx.data(), exact.data(), count * sizeof(double));
    const Comparison c = kernels->compare(*be, dy.as<const double>(), dx.as<const double>(), count);
    EXPECT_TRUE(c.not_finite);
    EXPECT_NEAR(c.sum_error2, want_e, 1e-12 * want_e);
    EXPECT_NEAR(c.sum_exact2, want_x, 1e-12 * want_x);
    EXPECT_EQ(c.max_exact, want_max);
    y[4242] = 0;
    be->copy_from_host(dy.data(), y.data(), count * sizeof(double));
    EXPECT_FALSE(kernels->compare(*be, dy.as<const double>(), dx.as<const double>(), count).not_finite);
}

// compare_points: the sums and max at the given indices against a loop over
// every index that skips the others; a NaN or a huge error at an index left
// out counts for nothing, a NaN at a given one (the last) is seen.
TEST(ConvolutionKernels, ComparePointsSumsTheGivenIndicesAsALoopDoes) {
    const std::size_t n = 10003;
    std::vector<double> y(n), exact(n);
    for (std::size_t i = 0; i < n; ++i) {
        exact[i] = std::cos(0.003 * double(i));
        y[i] = exact[i] + 1e-4 * std::sin(double(i));
    }
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < n; ++i)
        if (i % 3 != 1) at.push_back(i);
    y[4] = std::numeric_limits<double>::quiet_NaN(), exact[7] = 1e6, y[7] = -1e6;  // left out
    double want_e = 0, want_x = 0, want_max = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 3 == 1) continue;
        want_e += (y[i] - exact[i]) * (y[i] - exact[i]), want_x += exact[i] * exact[i];
        want_max = std::max(want_max, std::abs(exact[i]));
    }
    const Comparison c = compare_points(y.data(), exact.data(), at);
    EXPECT_FALSE(c.not_finite);
    EXPECT_EQ(c.sum_error2, want_e);
    EXPECT_EQ(c.sum_exact2, want_x);
    EXPECT_EQ(c.max_exact, want_max);
    y[at.back()] = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(compare_points(y.data(), exact.data(), at).not_finite);
    EXPECT_EQ(compare_points(y.data(), exact.data(), {}).sum_exact2, 0.0);
}

}  // namespace
}  // namespace fftune::convolution
