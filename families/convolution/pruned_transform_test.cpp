// PrunedTransform against the engine's 1-rank plan of the padded grid (the
// octree's full local transform), on the backend FFTUNE_TEST_BACKEND (default
// fftw; CMake registers cuda): the forward of an input that is nonzero only
// on a slab's rows, every spectrum value; the inverse of a Hermitian spectrum
// on the rows the octree reads (x < Nx, y < Ny), nothing else written; the
// input restored after it transforms as before. Cubes and non-cubic grids, every
// slab of 1-4 ranks (uneven, the last), and an empty slab.
#include "families/convolution/pruned_transform.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "core/engine/plan.hpp"

namespace fftune::convolution {
namespace {

using C = std::complex<double>;
using Size = std::array<index_t, 3>;

std::string backend_name() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return env ? env : "fftw";
}

std::vector<double> random_reals(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

template <class T>
std::vector<T> read(Backend& be, const Buffer& b, std::size_t count) {
    std::vector<T> host(count);
    be.copy_to_host(host.data(), b.data(), count * sizeof(T));
    be.synchronize();
    return host;
}
template <class T>
void write(Backend& be, Buffer& b, const std::vector<T>& host) {
    be.copy_from_host(b.data(), host.data(), host.size() * sizeof(T));
    be.synchronize();
}

// The padded grid's engine plan (reference_3d: one 3D transform).
struct Full {
    Plan plan;
    explicit Full(const Size& n)
        : plan(MPI_COMM_SELF, fftune::Problem{"fft3d", {2 * n[0], 2 * n[1], 2 * n[2]}, Precision::double_,
                                              Direction::forward, 1},
               Config{backend_name(), "reference_3d", LayoutVariant::default_, {1, 1}, {}, false}) {}
};

// The x-slabs [x0, x1) to try on a grid of Nx planes: each rank's at 1-4
// ranks (where every rank gets a plane) and an empty one.
std::vector<std::pair<index_t, index_t>> slabs(index_t nx) {
    std::vector<std::pair<index_t, index_t>> out{{nx / 2, nx / 2}};
    for (int p = 1; p <= 4; ++p)
        for (int r = 0; r < p && p <= nx; ++r) out.push_back({split_lo(nx, p, r), split_hi(nx, p, r)});
    return out;
}

const std::vector<Size> grids{{6, 6, 6}, {12, 10, 14}, {9, 16, 7}, {5, 3, 2}};

TEST(PrunedTransform, ForwardEqualsTheFullTransformAndInverseWhereRead) {
    for (const Size& n : grids) {
        Full full(n);
        Plan& plan = full.plan;
        Backend& be = plan.backend();
        const Layout& rl = plan.input_layout();
        const Layout& cl = plan.output_layout();
        const auto reals = std::size_t(plan.input_count()), complexes = std::size_t(plan.output_count());
        Buffer in = plan.allocate_input(), spectrum = plan.allocate_output(), got = plan.allocate_output(),
               back = plan.allocate_input();
        for (const auto& [x0, x1] : slabs(n[0])) {
            const std::string what = fmt::format("{} slab [{}, {})", size_string(n), x0, x1);
            PrunedTransform pruned(be, rl, cl, n, x0, x1);
            const Box3 own{{x0, 0, 0}, {x1, n[1], n[2]}};
            EXPECT_EQ(pruned.own_box(), own) << what;

            // Forward: the input nonzero on the slab's rows only; the pruned
            // spectrum starts as garbage, so every value must be written.
            const auto field = random_reals(reals, unsigned(x0 * 31 + x1));
            std::vector<double> x(reals, 0.0);
            for (index_t i = x0; i < x1; ++i)
                for (index_t j = 0; j < n[1]; ++j)
                    for (index_t l = 0; l < n[2]; ++l) {
                        const auto at = std::size_t(rl.offset_of({i, j, l}));
                        x[at] = field[at];
                    }
            write(be, in, x);
            plan.forward(in.data(), spectrum.data());
            write(be, got, std::vector<C>(complexes, C(7, -7)));
            pruned.forward(in.data(), got.data());
            const auto want = read<C>(be, spectrum, complexes), have = read<C>(be, got, complexes);
            double scale = 0, err = 0;
            for (std::size_t k = 0; k < complexes; ++k)
                scale = std::max(scale, std::abs(want[k])), err = std::max(err, std::abs(have[k] - want[k]));
            EXPECT_LE(err, 1e-12 * std::max(scale, 1.0)) << what << ": forward, largest value " << scale;
            if (x0 == x1) EXPECT_EQ(err, 0.0) << what << ": an empty slab transforms to zero";

            // Inverse of a Hermitian spectrum (the full transform of a field on
            // the whole padded grid), against the full inverse on the rows x <
            // Nx, y < Ny; the rest of the output keeps what was there.
            write(be, back, random_reals(reals, 99));
            plan.forward(back.data(), spectrum.data());
            be.copy_region(got.data(), StridedRegion{{1, 1, index_t(complexes)}, {0, 0, 1}, 0}, spectrum.data(),
                           StridedRegion{{1, 1, index_t(complexes)}, {0, 0, 1}, 0}, sizeof(C));
            plan.inverse(spectrum.data(), back.data());
            const auto inv_want = read<double>(be, back, reals);
            const double sentinel = -123.5;
            write(be, in, std::vector<double>(reals, sentinel));
            pruned.inverse(got.data(), in.data());
            const auto inv_have = read<double>(be, in, reals);
            double inv_scale = 0, inv_err = 0;
            std::size_t touched = 0;
            for (index_t i = 0; i < 2 * n[0]; ++i)
                for (index_t j = 0; j < 2 * n[1]; ++j)
                    for (index_t l = 0; l < 2 * n[2]; ++l) {
                        const auto at = std::size_t(rl.offset_of({i, j, l}));
                        if (i < n[0] && j < n[1]) {
                            inv_scale = std::max(inv_scale, std::abs(inv_want[at]));
                            inv_err = std::max(inv_err, std::abs(inv_have[at] - inv_want[at]));
                        } else if (inv_have[at] != sentinel) {
                            ++touched;
                        }
                    }
            EXPECT_LE(inv_err, 1e-12 * inv_scale) << what << ": inverse, largest value " << inv_scale;
            EXPECT_EQ(touched, 0u) << what << ": the inverse wrote outside x < Nx, y < Ny";

            // Restored from the packed slab, the input transforms as the first forward did.
            std::vector<double> packed;
            for (index_t i = x0; i < x1; ++i)
                for (index_t j = 0; j < n[1]; ++j)
                    for (index_t l = 0; l < n[2]; ++l) packed.push_back(x[std::size_t(rl.offset_of({i, j, l}))]);
            Buffer source(be, std::max<std::size_t>(packed.size(), 1) * sizeof(double));
            if (!packed.empty()) write(be, source, packed);
            // What inverse() writes on rows the forward reads: the slab's rows, all z.
            write(be, in, inv_have);
            pruned.restore(in.data(), source.data());
            pruned.forward(in.data(), got.data());
            const auto again = read<C>(be, got, complexes);
            double again_err = 0;
            for (std::size_t k = 0; k < complexes; ++k) again_err = std::max(again_err, std::abs(again[k] - want[k]));
            EXPECT_LE(again_err, 1e-12 * std::max(scale, 1.0)) << what << ": forward after restore";
        }
    }
}

// Arrays other than the padded grid and its spectrum, or planes outside the
// grid, are refused before any plan is made, naming what was expected.
TEST(PrunedTransform, BadArraysAndSlabsAreRefused) {
    const Size n{6, 4, 5};
    Full full(n);
    Backend& be = full.plan.backend();
    const Layout& rl = full.plan.input_layout();
    const Layout& cl = full.plan.output_layout();
    auto message = [&](const Layout& r, const Layout& c, index_t x0, index_t x1) -> std::string {
        try {
            const PrunedTransform made(be, r, c, n, x0, x1);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(message(rl, cl, 4, 7), "pruned transform: the own x-planes [4, 7) must lie in [0, 6)");
    EXPECT_EQ(message(rl, cl, 3, 2), "pruned transform: the own x-planes [3, 2) must lie in [0, 6)");
    EXPECT_NE(message(cl, cl, 0, 2).find("the arrays must be the padded grid"), std::string::npos);
    EXPECT_EQ(message(rl, cl, 0, 6), "accepted");
}

}  // namespace
}  // namespace fftune::convolution
