// Backend conformance: every FFT stage shape the decompositions use, checked
// against a naive DFT, and strided copies against index arithmetic. The backend
// under test is FFTUNE_TEST_BACKEND (default fftw); CMake registers the same
// binary for each backend built.
#include "core/platform/backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <set>

#include "core/engine/fft_descriptor.hpp"
#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/metered_backend.hpp"

namespace fftune {
namespace {

std::string backend_name() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return env ? env : "fftw";
}

std::unique_ptr<Backend> make_backend() {
    auto b = Registry<Backend>::instance().create(backend_name());
    if (auto why = b->unavailable()) throw std::runtime_error("backend unavailable: " + *why);
    return b;
}

using Index = std::array<index_t, 3>;

// A plan used on its own gets the work area it asks for, and gives it back.
TEST(StandaloneFft, HoldsTheWorkAreaItsPlanAsksFor) {
    testing::MeteredBackend be;
    auto& meter = testing::Meter::instance();
    FftDescriptor d;
    d.precision = Precision::double_;
    d.kind = FftKind::c2c_forward;
    d.dims = {{8, 1, 1}};
    d.in_elements = d.out_elements = 8;
    Buffer in(be, 8 * 16), out(be, 8 * 16);
    const std::size_t live = meter.live;
    EXPECT_THROW(be.make_fft(d)->execute(in.data(), out.data()), std::logic_error);
    {
        auto plan = make_standalone_fft(be, d);
        EXPECT_EQ(meter.live - live, 8 * 1024u);
        EXPECT_NO_THROW(plan->execute(in.data(), out.data()));
    }
    EXPECT_EQ(meter.live, live);
}

template <class F>
void for_each(const Box3& b, F&& f) {
    for (index_t x = b.lo[0]; x < b.hi[0]; ++x)
        for (index_t y = b.lo[1]; y < b.hi[1]; ++y)
            for (index_t z = b.lo[2]; z < b.hi[2]; ++z) f(Index{x, y, z});
}

// Naive multi-axis DFT of a complex field over `box`, along `axes`.
std::vector<std::complex<double>> naive_dft(const Layout& l, const std::vector<std::complex<double>>& in,
                                            const std::vector<int>& axes, int sign, const Layout& out_l) {
    std::vector<std::complex<double>> out(out_l.box.count());
    for_each(out_l.box, [&](const Index& k) {
        std::complex<double> sum = 0;
        for_each(l.box, [&](const Index& j) {
            double phase = 0;
            for (int a = 0; a < 3; ++a) {
                const bool transformed = std::find(axes.begin(), axes.end(), a) != axes.end();
                if (!transformed && j[a] != k[a]) return;
                if (transformed) phase += double(j[a] * k[a] % l.box.extent(a)) / l.box.extent(a);
            }
            sum += in[l.offset_of(j)] * std::polar(1.0, sign * 2 * std::numbers::pi * phase);
        });
        out[out_l.offset_of(k)] = sum;
    });
    return out;
}

template <class T>
double tolerance() { return sizeof(T) == 4 ? 2e-5 : 1e-12; }

struct Shape {
    std::vector<int> axes;
    AxisOrder in_order, out_order;
};

const Box3 real_box{{0, 0, 0}, {5, 6, 7}};
const Box3 half_box{{0, 0, 0}, {5, 6, 4}};  // 7 / 2 + 1

template <class T>
class BackendTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BackendTyped, Precisions);

template <class T>
Precision precision_of() { return sizeof(T) == 4 ? Precision::single : Precision::double_; }

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> v(n);
    for (auto& x : v) {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) x = static_cast<T>(u(rng));
        else x = T(u(rng), u(rng));
    }
    return v;
}

// Complex-to-complex stages along one or two axes, between the memory orders the
// decompositions produce (default and realigned). On cuda, two axes whose fastest
// axis is strided on both sides run as 1D passes (in -> out, then in place):
// xyz -> xyz and xyz -> yzx (whose axes do not nest, so one 2D plan could not take it).
TYPED_TEST(BackendTyped, ComplexStagesMatchNaiveDft) {
    using T = TypeParam;
    using C = std::complex<T>;
    auto be = make_backend();
    const std::vector<Shape> shapes{{{axis_x}, order_xyz, order_xyz}, {{axis_x}, order_yzx, order_xyz},
                                    {{axis_y}, order_xyz, order_xyz}, {{axis_y}, order_zxy, order_yzx},
                                    {{axis_x, axis_y}, order_xyz, order_xyz}, {{axis_y}, order_zxy, order_zxy},
                                    {{axis_x, axis_y}, order_zxy, order_xyz}, {{axis_x, axis_y}, order_xyz, order_zxy},
                                    {{axis_x, axis_y}, order_zxy, order_zxy}, {{axis_x, axis_y}, order_xyz, order_yzx}};
    for (const auto& s : shapes)
        for (auto kind : {FftKind::c2c_forward, FftKind::c2c_backward}) {
            const Layout in_l{half_box, s.in_order}, out_l{half_box, s.out_order};
            const auto d = fft_descriptor(in_l, out_l, s.axes, kind, precision_of<T>(), 7);
            ASSERT_TRUE(d.has_value());
            const auto host = random_values<C>(half_box.count(), 3);
            Buffer in(*be, host.size() * sizeof(C)), out(*be, host.size() * sizeof(C));
            be->copy_from_host(in.data(), host.data(), host.size() * sizeof(C));
            make_standalone_fft(*be, *d)->execute(in.data(), out.data());
            std::vector<C> got(host.size());
            be->copy_to_host(got.data(), out.data(), got.size() * sizeof(C));
            std::vector<std::complex<double>> wide(host.begin(), host.end());
            const auto want = naive_dft(in_l, wide, s.axes, kind == FftKind::c2c_forward ? -1 : 1, out_l);
            double err = 0;
            for (std::size_t i = 0; i < got.size(); ++i)
                err = std::max(err, std::abs(std::complex<double>(got[i]) - want[i]));
            EXPECT_LT(err, tolerance<T>() * 10) << "axes " << s.axes.size() << " " << order_name(s.in_order)
                                                << "->" << order_name(s.out_order);
        }
}

// r2c along z (and y,z) into every output order, then c2r back: r2c against the
// naive DFT, the round trip against N * input. On cuda a 1D c2r into another
// order copies first only from length 1024 on, hence the long z box.
TYPED_TEST(BackendTyped, RealStagesMatchNaiveDftAndInvert) {
    using T = TypeParam;
    using C = std::complex<T>;
    auto be = make_backend();
    const Box3 long_z{{0, 0, 0}, {3, 2, 1024}};
    const std::vector<std::pair<Shape, Box3>> cases{{{{axis_z}, order_xyz, order_xyz}, real_box},
                                                    {{{axis_z}, order_xyz, order_zxy}, real_box},
                                                    {{{axis_z}, order_xyz, order_zxy}, long_z},
                                                    {{{axis_y, axis_z}, order_xyz, order_xyz}, real_box},
                                                    {{{axis_y, axis_z}, order_xyz, order_yzx}, real_box}};
    for (const auto& [s, real] : cases) {
        Box3 half = real;
        half.hi[2] = real.extent(2) / 2 + 1;
        const index_t nz = real.extent(2);
        const Layout r_l{real, s.in_order}, c_l{half, s.out_order};
        const auto fwd = fft_descriptor(r_l, c_l, s.axes, FftKind::r2c, precision_of<T>(), nz);
        const auto inv = fft_descriptor(c_l, r_l, s.axes, FftKind::c2r, precision_of<T>(), nz);
        ASSERT_TRUE(fwd && inv);
        const auto host = random_values<T>(real.count(), 5);
        Buffer r(*be, host.size() * sizeof(T)), c(*be, half.count() * sizeof(C)), back(*be, host.size() * sizeof(T));
        be->copy_from_host(r.data(), host.data(), host.size() * sizeof(T));
        make_standalone_fft(*be, *fwd)->execute(r.data(), c.data());
        std::vector<C> spec(half.count());
        be->copy_to_host(spec.data(), c.data(), spec.size() * sizeof(C));

        std::vector<std::complex<double>> wide(host.begin(), host.end());
        const Layout full{real, s.in_order};
        const auto want = naive_dft(r_l, wide, s.axes, -1, full);
        double err = 0;
        for_each(half, [&](const Index& k) {
            err = std::max(err, std::abs(std::complex<double>(spec[c_l.offset_of(k)]) - want[full.offset_of(k)]));
        });
        EXPECT_LT(err, tolerance<T>() * 10) << "r2c " << order_name(s.out_order) << " nz " << nz;

        make_standalone_fft(*be, *inv)->execute(c.data(), back.data());
        std::vector<T> got(host.size());
        be->copy_to_host(got.data(), back.data(), got.size() * sizeof(T));
        const double n = s.axes.size() == 1 ? double(nz) : double(nz * real.extent(1));
        double rt = 0;
        for (std::size_t i = 0; i < got.size(); ++i) rt = std::max(rt, std::abs(double(got[i]) / n - double(host[i])));
        EXPECT_LT(rt, tolerance<T>()) << "c2r " << order_name(s.out_order) << " nz " << nz;
    }
}

// One plan run again and again, on the same buffers and on others: a y-FFT in
// xyz batches z and loops over x (on cuda a CUDA graph per buffer pair).
TEST(Backend, APlanRerunsOnTheSameAndOtherBuffers) {
    using C = std::complex<double>;
    auto be = make_backend();
    const Layout l{half_box, order_xyz};
    const auto d = fft_descriptor(l, l, {axis_y}, FftKind::c2c_forward, Precision::double_, 7);
    ASSERT_TRUE(d);
    auto fft = make_standalone_fft(*be, *d);
    const std::size_t n = half_box.count(), bytes = n * sizeof(C);
    Buffer in_a(*be, bytes), in_b(*be, bytes), out_a(*be, bytes), out_b(*be, bytes);
    const auto a = random_values<C>(n, 11), b = random_values<C>(n, 12);
    be->copy_from_host(in_a.data(), a.data(), bytes);
    be->copy_from_host(in_b.data(), b.data(), bytes);
    auto check = [&](const std::vector<C>& input, Buffer& out, const char* what) {
        std::vector<C> got(n);
        be->copy_to_host(got.data(), out.data(), bytes);
        const auto want = naive_dft(l, std::vector<std::complex<double>>(input.begin(), input.end()), {axis_y}, -1, l);
        double err = 0;
        for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(got[i] - want[i]));
        EXPECT_LT(err, 1e-11) << what;
    };
    const std::vector<C> zeros(n);
    for (int round = 0; round < 2; ++round) {
        for (auto* out : {&out_a, &out_b}) be->copy_from_host(out->data(), zeros.data(), bytes);
        fft->execute(in_a.data(), out_a.data());
        check(a, out_a, "in_a -> out_a");
        fft->execute(in_b.data(), out_b.data());
        check(b, out_b, "in_b -> out_b");
        fft->execute(in_b.data(), out_a.data());
        check(b, out_a, "in_b -> out_a");
    }
    // More buffer pairs than a plan keeps graphs for, then the first again.
    std::vector<Buffer> outs;
    for (int i = 0; i < 6; ++i) {
        outs.emplace_back(*be, bytes);
        fft->execute(in_a.data(), outs.back().data());
        check(a, outs.back(), "in_a -> a new buffer");
    }
    be->copy_from_host(out_a.data(), zeros.data(), bytes);
    fft->execute(in_a.data(), out_a.data());
    check(a, out_a, "in_a -> out_a after eviction");
}

// A plan made again after the last one like it is gone (on cuda it takes that
// one's cuFFT plans: PassPool) computes on the new backend's queue, and a
// plan along the same axis in another memory order, whose strides differ,
// gets plans of its own. The buffers outlive the plans, so later rounds
// also run on the pairs the first ones ran on.
TEST(Backend, APlanMadeAgainComputesItsOwnTransform) {
    using C = std::complex<double>;
    auto keeper = make_backend();  // holds the buffers
    const Layout xyz{half_box, order_xyz}, zxy{half_box, order_zxy};
    const auto d = fft_descriptor(xyz, xyz, {axis_y}, FftKind::c2c_forward, Precision::double_, 7);
    const auto e = fft_descriptor(zxy, zxy, {axis_y}, FftKind::c2c_forward, Precision::double_, 7);
    ASSERT_TRUE(d && e);
    const std::size_t n = half_box.count(), bytes = n * sizeof(C);
    Buffer in(*keeper, bytes), out(*keeper, bytes);
    const auto values = random_values<C>(n, 21);
    keeper->copy_from_host(in.data(), values.data(), bytes);
    const std::vector<std::complex<double>> wide(values.begin(), values.end());
    const std::vector<C> zeros(n);
    for (int round = 0; round < 3; ++round)
        for (const Layout* l : {&xyz, &zxy}) {
            auto be = make_backend();  // a queue of its own, gone with the round
            auto fft = make_standalone_fft(*be, l == &xyz ? *d : *e);
            be->copy_from_host(out.data(), zeros.data(), bytes);
            fft->execute(in.data(), out.data());
            std::vector<C> got(n);
            be->copy_to_host(got.data(), out.data(), bytes);
            const auto want = naive_dft(*l, wide, {axis_y}, -1, *l);
            double err = 0;
            for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(got[i] - want[i]));
            EXPECT_LT(err, 1e-11) << "round " << round << " order " << order_name(l->order);
        }
}

// A c2c plan's reversed twin (FftPlan::reversed) transforms the other way, on
// one work area with it: along x (one cuFFT call) and y (it loops over x: on
// cuda a CUDA graph per buffer pair, which the twin, sharing the plan's cuFFT
// passes, must not replay for the pair the plan ran on), alternating, in both
// rounds; a 2D c2c whose fastest axis is strided (two cuFFT passes). Then a
// plan of the other direction made after both are gone (on cuda it takes
// their passes from the pool). cuda makes twins; FFTW's plans hold their sign
// and make none; an r2c has none anywhere.
TEST(Backend, AReversedPlanTransformsTheOtherWay) {
    using C = std::complex<double>;
    auto be = make_backend();
    const std::size_t n = half_box.count(), bytes = n * sizeof(C);
    const auto host = random_values<C>(n, 17);
    const std::vector<std::complex<double>> wide(host.begin(), host.end());
    Buffer in(*be, bytes), out(*be, bytes);
    auto check = [&](FftPlan& fft, const Layout& from, const Layout& to, const std::vector<int>& axes, int sign,
                     const std::string& what) {
        be->copy_from_host(in.data(), host.data(), bytes);
        fft.execute(in.data(), out.data());
        std::vector<C> got(n);
        be->copy_to_host(got.data(), out.data(), bytes);
        const auto want = naive_dft(from, wide, axes, sign, to);
        double err = 0;
        for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(got[i] - want[i]));
        EXPECT_LT(err, 1e-11) << what;
    };
    struct Case {
        std::vector<int> axes;
        AxisOrder in, out;
    };
    for (const Case& c : {Case{{axis_x}, order_xyz, order_xyz}, Case{{axis_y}, order_xyz, order_xyz},
                          Case{{axis_x, axis_y}, order_xyz, order_xyz}})
        for (auto kind : {FftKind::c2c_forward, FftKind::c2c_backward}) {
            const Layout from{half_box, c.in}, to{half_box, c.out};
            const auto d = fft_descriptor(from, to, c.axes, kind, Precision::double_, 7);
            ASSERT_TRUE(d);
            const int sign = kind == FftKind::c2c_forward ? -1 : 1;
            const std::string what = fmt::format("{} axes, made {}", c.axes.size(), sign < 0 ? "forward" : "backward");
            {
                auto fft = be->make_fft(*d);
                auto twin = fft->reversed();
                if (backend_name() == "cuda") ASSERT_NE(twin, nullptr) << what;
                if (!twin) continue;
                EXPECT_EQ(twin->work_bytes(), fft->work_bytes());
                Buffer area(*be, std::max<std::size_t>(fft->work_bytes(), 1));
                fft->set_work_area(area.data());
                twin->set_work_area(area.data());
                for (int round = 0; round < 2; ++round) {
                    check(*fft, from, to, c.axes, sign, what + ", the plan");
                    check(*twin, from, to, c.axes, -sign, what + ", its twin");
                }
            }
            FftDescriptor other = *d;
            other.kind = kind == FftKind::c2c_forward ? FftKind::c2c_backward : FftKind::c2c_forward;
            check(*make_standalone_fft(*be, other), from, to, c.axes, -sign, what + ", the other way made after");
        }
    const Layout r_l{real_box, order_xyz}, c_l{half_box, order_xyz};
    const auto r2c = fft_descriptor(r_l, c_l, {axis_z}, FftKind::r2c, Precision::double_, 7);
    ASSERT_TRUE(r2c);
    EXPECT_EQ(be->make_fft(*r2c)->reversed(), nullptr);
}

// A c2c plan executed in place (in == out; FFTW needs a plan made so), along
// each axis of one layout (a pruned transform's passes over the spectrum,
// families/convolution/pruned_transform.hpp), and after running out of place.
TEST(Backend, AComplexPlanRunsInPlace) {
    using C = std::complex<double>;
    auto be = make_backend();
    const Box3 box{{0, 0, 0}, {24, 20, 4}};  // at 5 x 6 x 4 FFTW ran out-of-place plans in place right
    const Layout l{box, order_xyz};
    const std::size_t n = box.count(), bytes = n * sizeof(C);
    const auto host = random_values<C>(n, 13);
    Buffer a(*be, bytes), b(*be, bytes);
    for (int axis : {axis_x, axis_y, axis_z})
        for (auto kind : {FftKind::c2c_forward, FftKind::c2c_backward}) {
            const auto d = fft_descriptor(l, l, {axis}, kind, Precision::double_, 7);
            ASSERT_TRUE(d);
            auto fft = make_standalone_fft(*be, *d);
            const auto want = naive_dft(l, std::vector<std::complex<double>>(host.begin(), host.end()), {axis},
                                        kind == FftKind::c2c_forward ? -1 : 1, l);
            for (bool out_of_place_first : {false, true}) {
                be->copy_from_host(a.data(), host.data(), bytes);
                if (out_of_place_first) fft->execute(a.data(), b.data());
                fft->execute(a.data(), a.data());
                std::vector<C> got(n);
                be->copy_to_host(got.data(), a.data(), bytes);
                double err = 0;
                for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(got[i] - want[i]));
                EXPECT_LT(err, 1e-11) << "axis " << axis_name(axis) << (out_of_place_first ? " after out of place" : "");
            }
        }
}

TEST(Backend, BatchStridesOfEveryStageAreTheLayoutStrides) {
    // yzx in, xyz out along x: batch over y and z with different strides on each side.
    const Layout in{half_box, order_yzx}, out{half_box, order_xyz};
    const auto d = fft_descriptor(in, out, {axis_x}, FftKind::c2c_forward, Precision::double_, 7);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->dims.size(), 1u);
    EXPECT_EQ(d->dims[0].n, 5);
    EXPECT_EQ(d->dims[0].in_stride, 1);
    EXPECT_EQ(d->dims[0].out_stride, 24);
    ASSERT_EQ(d->batch.size(), 2u);
    EXPECT_EQ(d->batch[0].in_stride, 20);  // y in yzx: extent z 4 x extent x 5
    EXPECT_EQ(d->batch[0].out_stride, 4);
    EXPECT_EQ(d->batch[1].in_stride, 5);   // z
    EXPECT_EQ(d->batch[1].out_stride, 1);
    EXPECT_FALSE(fft_descriptor(Layout{Box3{}, order_xyz}, out, {axis_x}, FftKind::c2c_forward, Precision::double_, 7));
    EXPECT_THROW(fft_descriptor(in, Layout{real_box, order_xyz}, {axis_x}, FftKind::c2c_forward, Precision::double_, 7),
                 std::logic_error);
}

TEST(Backend, CopyRegionMovesExactlyTheRegion) {
    auto be = make_backend();
    const Layout src_l{{{0, 0, 0}, {4, 5, 6}}, order_zxy}, dst_l{{{1, 2, 3}, {3, 4, 6}}, order_zxy};
    const Box3 sub = dst_l.box;
    std::vector<double> src(src_l.box.count());
    for_each(src_l.box, [&](const Index& g) { src[src_l.offset_of(g)] = g[0] * 100 + g[1] * 10 + g[2]; });
    Buffer s(*be, src.size() * 8), d(*be, sub.count() * 8), packed(*be, sub.count() * 8 + 16);
    be->copy_from_host(s.data(), src.data(), src.size() * 8);
    std::vector<double> fill(sub.count() + 2, -1);
    be->copy_from_host(packed.data(), fill.data(), fill.size() * 8);
    // Strided -> packed at an offset, then packed -> another strided array.
    be->copy_region(packed.data(), packed_region(src_l, sub, 2), s.data(), region_of(src_l, sub), 8);
    be->copy_region(d.data(), region_of(dst_l, sub), packed.data(), packed_region(src_l, sub, 2), 8);
    std::vector<double> got(sub.count()), pk(fill.size());
    be->copy_to_host(got.data(), d.data(), got.size() * 8);
    be->copy_to_host(pk.data(), packed.data(), pk.size() * 8);
    be->synchronize();
    EXPECT_EQ(pk[0], -1);
    EXPECT_EQ(pk[1], -1);
    for_each(sub, [&](const Index& g) { EXPECT_EQ(got[dst_l.offset_of(g)], g[0] * 100 + g[1] * 10 + g[2]); });
}

// `copy` moves region `sub` of array `l` (holding `src`) to a packed buffer
// and back into an array of -1s: afterwards that array holds src inside
// `sub` and -1 everywhere else. copy(dst, dst_region, src, src_region).
template <class Copy>
void expect_region_round_trip(Backend& be, const Layout& l, const std::vector<double>& src, const Box3& sub, Copy copy) {
    Buffer s(be, src.size() * 8), d(be, src.size() * 8), packed(be, src.size() * 8);
    be.copy_from_host(s.data(), src.data(), src.size() * 8);
    const std::vector<double> fill(src.size(), -1);
    be.copy_from_host(d.data(), fill.data(), fill.size() * 8);
    copy(packed.data(), packed_region(l, sub, 0), s.data(), region_of(l, sub));
    copy(d.data(), region_of(l, sub), packed.data(), packed_region(l, sub, 0));
    std::vector<double> got(src.size());
    be.copy_to_host(got.data(), d.data(), got.size() * 8);
    be.synchronize();
    for_each(l.box, [&](const Index& g) {
        const double want = intersect(sub, Box3{g, {g[0] + 1, g[1] + 1, g[2] + 1}}).empty() ? -1 : src[l.offset_of(g)];
        ASSERT_EQ(got[l.offset_of(g)], want) << sub.str() << " at " << g[0] << "," << g[1] << "," << g[2];
    });
}

// Short rows (one thread per element on cuda) and long ones (a block per row),
// strided to packed and back, as poisson's arranged kernel and the
// transports' packing copy them: every element of the region and nothing else.
TEST(Backend, CopyRegionMovesShortAndLongRows) {
    auto be = make_backend();
    const Layout l{{{0, 0, 0}, {6, 50, 300}}, order_xyz};
    std::vector<double> src(l.box.count());
    for_each(l.box, [&](const Index& g) { src[l.offset_of(g)] = g[0] * 1e6 + g[1] * 1e3 + g[2]; });
    for (const Box3 sub : {Box3{{1, 3, 0}, {5, 40, 4}}, Box3{{0, 0, 7}, {6, 50, 8}}, Box3{{0, 1, 10}, {6, 49, 290}}})
        expect_region_round_trip(*be, l, src, sub, [&](void* to, const StridedRegion& t, const void* from, const StridedRegion& f) {
            be->copy_region(to, t, from, f, 8);
        });
}

// fill_separable writes sum_m Re(t_x t_y t_z) over a box that does not start
// at the origin, in every axis order and both precisions (cuda: its kernel;
// fftw: the host default), and leaves nothing else of the array.
TEST(Backend, FillSeparableWritesTheFieldInEveryAxisOrder) {
    auto be = make_backend();
    const Box3 box{{2, 1, 3}, {7, 5, 9}};  // 5 x 4 x 6
    SeparableTerms terms;
    for (int m = 0; m < 3; ++m) {
        std::array<std::vector<std::complex<double>>, 3> t;
        for (int a = 0; a < 3; ++a)
            for (index_t j = 0; j < box.extent(a); ++j)
                t[a].push_back(std::polar(1.0 + 0.1 * m + 0.01 * a, 0.3 * double(j + 1) * double(m + a + 1)));
        terms.axis.push_back(std::move(t));
    }
    auto want = [&](const Index& g) {
        double v = 0;
        for (const auto& t : terms.axis)
            v += (t[0][g[0] - box.lo[0]] * t[1][g[1] - box.lo[1]] * t[2][g[2] - box.lo[2]]).real();
        return v;
    };
    for (const auto& order : {order_xyz, order_zxy, order_yzx})
        for (auto precision : {Precision::double_, Precision::single}) {
            const Layout l{box, order};
            const std::size_t bytes = real_bytes(precision);
            Buffer out(*be, (box.count() + 1) * bytes);
            std::vector<char> sentinel((box.count() + 1) * bytes, 0x7f);
            be->copy_from_host(out.data(), sentinel.data(), sentinel.size());
            be->fill_separable(out.data(), l, terms, precision);
            std::vector<char> got(sentinel.size());
            be->copy_to_host(got.data(), out.data(), got.size());
            be->synchronize();
            auto at = [&](std::size_t i) {
                if (precision == Precision::single) return double(reinterpret_cast<const float*>(got.data())[i]);
                return reinterpret_cast<const double*>(got.data())[i];
            };
            const double tol = precision == Precision::single ? 1e-6 : 1e-14;
            for_each(box, [&](const Index& g) {
                EXPECT_NEAR(at(l.offset_of(g)), want(g), tol * 4) << order_name(order) << " " << g[0] << g[1] << g[2];
            });
            EXPECT_EQ(std::memcmp(got.data() + box.count() * bytes, sentinel.data(), bytes), 0) << "wrote past the box";
        }
}

// max_difference: the largest |a·scale − b| and |b| of 300001 values (many
// blocks on cuda),
// each at a known place; a NaN in a is infinity; both precisions.
TEST(Backend, MaxDifferenceFindsTheLargestDeviationAndReference) {
    auto be = make_backend();
    const index_t count = 300001;
    for (auto precision : {Precision::double_, Precision::single}) {
        std::vector<double> a(static_cast<std::size_t>(count)), b(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) b[i] = std::sin(0.01 * double(i)), a[i] = 4 * b[i];
        a[123457] += 4 * 0.25;  // |a/4 - b| = 0.25 there
        b[299999] = -3;         // the largest |b|
        a[299999] = -12;
        auto upload = [&](const std::vector<double>& v, Buffer& out) {
            if (precision == Precision::single) {
                const std::vector<float> f(v.begin(), v.end());
                be->copy_from_host(out.data(), f.data(), f.size() * sizeof(float));
            } else {
                be->copy_from_host(out.data(), v.data(), v.size() * sizeof(double));
            }
        };
        Buffer da(*be, a.size() * real_bytes(precision)), db(*be, b.size() * real_bytes(precision));
        upload(a, da), upload(b, db);
        const auto d = be->max_difference(da.data(), 0.25, db.data(), count, precision);
        const double tol = precision == Precision::single ? 1e-6 : 1e-15;
        EXPECT_NEAR(d[0], 0.25, tol) << to_string(precision);
        EXPECT_NEAR(d[1], 3.0, tol) << to_string(precision);
        a[17] = std::numeric_limits<double>::quiet_NaN();
        upload(a, da);
        EXPECT_EQ(be->max_difference(da.data(), 0.25, db.data(), count, precision)[0],
                  std::numeric_limits<double>::infinity());
    }
}

// zero clears exactly [p, p + bytes): a range that starts and ends off any
// alignment, and the base class's chunked copy past one chunk (64 MiB + 3).
TEST(Backend, ZeroClearsExactlyItsRange) {
    auto be = make_backend();
    for (std::size_t bytes : {std::size_t(13), (std::size_t(64) << 20) + 3}) {
        Buffer b(*be, bytes + 8);
        std::vector<unsigned char> host(bytes + 8, 0xab);
        be->copy_from_host(b.data(), host.data(), host.size());
        be->zero(static_cast<char*>(b.data()) + 5, bytes);
        std::vector<unsigned char> got(host.size());
        be->copy_to_host(got.data(), b.data(), got.size());
        be->synchronize();
        for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], i >= 5 && i < 5 + bytes ? 0 : 0xab) << "byte " << i << " of " << bytes;
    }
    // The base class: its chunks cover the range and stop at its end.
    struct Chunked : Backend {
        std::string name() const override { return "chunked"; }
        std::vector<std::pair<std::string, std::string>> versions() const override { return {}; }
        bool device_memory() const override { return false; }
        void* allocate(std::size_t n) override { return std::malloc(n); }
        void deallocate(void* p) override { std::free(p); }
        void* allocate_host(std::size_t n) override { return std::malloc(n); }
        void deallocate_host(void* p) override { std::free(p); }
        void copy_region(void*, const StridedRegion&, const void*, const StridedRegion&, std::size_t) override {}
        void copy_to_host(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
        void copy_from_host(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
        void synchronize() override {}
        std::unique_ptr<FftPlan> make_fft(const FftDescriptor&) override { return nullptr; }
        std::unique_ptr<PhaseClock> make_clock() override { return nullptr; }
    } chunked;
    const std::size_t bytes = (std::size_t(64) << 20) * 2 + 7;
    std::vector<unsigned char> v(bytes + 16, 0xcd);
    chunked.zero(v.data() + 8, bytes);
    for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(v[i], i >= 8 && i < 8 + bytes ? 0 : 0xcd) << "byte " << i;
}

// The warm-up's descriptors: each FftKind at ranks 1-3 once, whose strides
// reach exactly the last element of the arrays they name (the real side's
// last axis n, the complex side's n/2+1).
TEST(WarmUp, DescriptorsAreEveryKindAtEveryRankAndFillTheirArrays) {
    for (Precision precision : all_values<Precision>()) {
        std::set<std::pair<FftKind, std::size_t>> seen;
        for (const FftDescriptor& d : warm_up_descriptors(precision)) {
            EXPECT_EQ(d.precision, precision);
            EXPECT_TRUE(seen.emplace(d.kind, d.dims.size()).second) << "kind and rank twice";
            index_t in_last = 0, out_last = 0;
            const index_t n = d.dims.back().n;
            for (std::size_t a = 0; a < d.dims.size(); ++a) {
                const bool last = a + 1 == d.dims.size();
                in_last += (last && d.kind == FftKind::c2r ? n / 2 : d.dims[a].n - 1) * d.dims[a].in_stride;
                out_last += (last && d.kind == FftKind::r2c ? n / 2 : d.dims[a].n - 1) * d.dims[a].out_stride;
            }
            for (const FftDim& b : d.batch) in_last += (b.n - 1) * b.in_stride, out_last += (b.n - 1) * b.out_stride;
            EXPECT_EQ(in_last + 1, d.in_elements) << d.dims.size() << "D kind " << int(d.kind);
            EXPECT_EQ(out_last + 1, d.out_elements) << d.dims.size() << "D kind " << int(d.kind);
        }
        EXPECT_EQ(seen.size(), 12u);
    }
}

// The warm-up makes and runs each of its transforms, copies, fills and
// compares, and gives back all it allocated.
TEST(WarmUp, RunsEveryTransformAndKernelOnceAndKeepsNoMemory) {
    struct Counted final : testing::ForwardingBackend {
        explicit Counted(const std::string& inner) : ForwardingBackend(inner) {}
        std::string name() const override { return "warm_up_counted"; }
        void* allocate(std::size_t b) override { return ++live, ForwardingBackend::allocate(b); }
        void deallocate(void* p) override { --live, ForwardingBackend::deallocate(p); }
        void copy_region(void* d, const StridedRegion& dr, const void* s, const StridedRegion& sr,
                         std::size_t e) override {
            ++copies;
            ForwardingBackend::copy_region(d, dr, s, sr, e);
        }
        void fill_separable(void* out, const Layout& l, const SeparableTerms& t, Precision p) override {
            ++fills;
            Backend::fill_separable(out, l, t, p);
        }
        std::array<double, 2> max_difference(const void* a, double s, const void* b, index_t n,
                                             Precision p) override {
            ++compares;
            return Backend::max_difference(a, s, b, n, p);
        }
        std::unique_ptr<FftPlan> make_fft(const FftDescriptor& d) override {
            const auto what = std::make_pair(d.kind, d.dims.size());
            made.insert(what);
            return std::make_unique<testing::HookedFft>(ForwardingBackend::make_fft(d), [this, what] { ran.insert(what); });
        }
        int live = 0, copies = 0, fills = 0, compares = 0;
        std::set<std::pair<FftKind, std::size_t>> made, ran;
    };
    for (Precision precision : all_values<Precision>()) {
        Counted be(backend_name());
        warm_up_every_kind(be, precision);
        EXPECT_EQ(be.made.size(), 12u) << to_string(precision);
        EXPECT_EQ(be.ran, be.made) << to_string(precision);
        EXPECT_GE(be.copies, 1);
        EXPECT_GE(be.fills, 1);
        EXPECT_GE(be.compares, 1);
        EXPECT_EQ(be.live, 0) << "allocations not given back";
    }
    // The backend's own warm-up runs (the cuda one: warm_up_every_kind on the device).
    auto be = make_backend();
    for (Precision precision : all_values<Precision>()) EXPECT_NO_THROW(be->warm_up(precision));
}

// peer_copy_region_on (copy engines on the cuda backend where the regions are
// rows of at least 4 KiB: one row, rows of a pitch, planes of rows, and short
// rows left to the kernel) moves what copy_region does, on a side queue.
TEST(Backend, PeerCopyRegionMovesExactlyTheRegion) {
    auto be = make_backend();
    const Layout l{{{0, 0, 0}, {5, 7, 600}}, order_xyz};  // a z-row is 4800 bytes
    std::vector<double> src(l.box.count());
    for_each(l.box, [&](const Index& g) { src[l.offset_of(g)] = g[0] * 1e6 + g[1] * 1e3 + g[2]; });
    const int q = be->queue_count() > 1 ? 1 : 0;
    for (const Box3 sub : {Box3{{1, 0, 0}, {3, 7, 600}}, Box3{{1, 2, 0}, {4, 5, 600}}, Box3{{1, 2, 0}, {4, 5, 560}},
                           Box3{{0, 1, 3}, {5, 6, 40}}})
        expect_region_round_trip(*be, l, src, sub, [&](void* to, const StridedRegion& t, const void* from, const StridedRegion& f) {
            be->queue_wait(q, 0);
            be->peer_copy_region_on(q, to, t, from, f, 8);
            be->queue_wait(0, q);
        });
}

// Side queues (CUDA streams on the cuda backend): a chain of copies across
// every queue, linked only by queue_wait, ends with the first copy's data, and
// when_done has reported by the time the main queue has waited for the chain.
TEST(Backend, QueuesOrderWorkByWaitsAndReportCompletion) {
    auto be = make_backend();
    const int queues = be->queue_count();
    ASSERT_GE(queues, 1);
    const index_t n = 1 << 22;  // 32 MiB: long enough for a missing wait to show on a GPU
    const StridedRegion all{{1, 1, n}, {n, n, 1}, 0};
    std::vector<double> a(n);
    for (index_t i = 0; i < n; ++i) a[i] = double(i % 1000) + 0.5;
    std::vector<Buffer> bufs;
    for (int k = 0; k <= queues; ++k) bufs.emplace_back(*be, n * 8);
    be->copy_from_host(bufs[0].data(), a.data(), n * 8);
    std::vector<double> zeros(n, 0.0);
    for (int k = 1; k <= queues; ++k) be->copy_from_host(bufs[k].data(), zeros.data(), n * 8);
    std::atomic<int> reported{0};
    int previous = 0;  // buffer k+1 := buffer k on queue (k + 1) % queues, after the queue that wrote buffer k
    for (int k = 0; k < queues; ++k) {
        const int q = (k + 1) % queues;
        be->queue_wait(q, previous);
        be->copy_region_on(q, bufs[k + 1].data(), all, bufs[k].data(), all, 8);
        be->when_done(q, [&reported] { reported.fetch_add(1); });
        previous = q;
    }
    be->queue_wait(0, previous);
    std::vector<double> got(n, -1.0);
    be->copy_to_host(got.data(), bufs[queues].data(), n * 8);
    EXPECT_EQ(got, a);
    EXPECT_EQ(reported.load(), queues);
}


// A device allocation that cannot fit says how much was asked and how much was free.
TEST(Backend, AnAllocationTooLargeNamesItsSizeAndTheFreeMemory) {
    auto be = make_backend();
    const auto memory = be->device_memory_info();
    if (!memory) GTEST_SKIP() << "backend " << be->name() << " reports no device memory";
    const std::size_t bytes = memory->total + (std::size_t(1) << 30);
    try {
        Buffer b(*be, bytes);
        FAIL() << "allocating " << bytes << " bytes of a " << memory->total << "-byte device succeeded";
    } catch (const std::exception& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(std::to_string(bytes) + " bytes"), std::string::npos) << what;
        EXPECT_NE(what.find("GiB free"), std::string::npos) << what;
        EXPECT_NE(what.find("out of memory"), std::string::npos) << what;
    }
    Buffer small(*be, 1 << 20);  // the failure left the device usable
    EXPECT_NE(small.data(), nullptr);
}

// An array peers map: host backends leave its size alone; cuda pads a whole
// number of 2 MiB from 512 MiB on by a MiB, whose mapping costs 4 ms, not 19.
TEST(Backend, ArraysPeersMapArePaddedWhereMappingThemIsSlow) {
    auto be = make_backend();
    constexpr std::size_t mib = std::size_t(1) << 20;
    for (std::size_t b : {std::size_t(0), 64 * mib, 510 * mib, 511 * mib, 513 * mib, 538968064 + std::size_t(8)})
        EXPECT_EQ(be->mapped_array_bytes(b), b) << b;
    for (std::size_t b : {512 * mib, 514 * mib, 4112 * mib}) {
        if (be->name() == "cuda") EXPECT_EQ(be->mapped_array_bytes(b), b + mib) << b;
        else EXPECT_EQ(be->mapped_array_bytes(b), b) << be->name();
    }
}
}  // namespace
}  // namespace fftune
