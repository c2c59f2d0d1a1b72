// The column stages of a backend (FFTUNE_TEST_BACKEND, default fftw; CMake
// registers the binary again for cuda) against direct O(L²) DFT sums on the
// host: the convolution and the transforms alone, for lengths of every radix
// mix, kept < L and kept = L, column counts that leave a block partly filled,
// column groups with gaps, both precisions.
#include "families/poisson/column_convolution.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <numbers>
#include <random>

namespace fftune::poisson {
namespace {

std::string backend_name() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return env ? env : "fftw";
}

using cd = std::complex<double>;

index_t in_stride(const ColumnProblem& p) { return p.groups > 1 ? p.in_group_stride : p.kept * p.columns; }
index_t out_stride(const ColumnProblem& p) { return p.groups > 1 ? p.out_group_stride : p.rows_written() * p.columns; }

// Direct O(L²) sums on the host, per group g and column c (element (x, c) at
// g·stride + x·columns + c): S[q] = Σ_{x < kept} in[x] e^{−2πi qx/L}; forward:
// out[q] = S[q]; inverse: the same with e^{+}; convolve: out[x] = Σ_q K[q] S[q] e^{+2πi qx/L}.
std::vector<cd> direct(const ColumnProblem& p, const std::vector<cd>& in, const std::vector<double>& k) {
    const index_t l = p.length, n = p.columns;
    std::vector<cd> out(std::size_t(p.groups * out_stride(p)));
    std::vector<cd> w(l);
    for (index_t m = 0; m < l; ++m) w[m] = std::polar(1.0, -2 * std::numbers::pi * double(m) / double(l));
    const bool inverse = p.mode == ColumnMode::inverse;
    for (index_t g = 0; g < p.groups; ++g)
        for (index_t c = 0; c < n; ++c) {
            const cd* src = in.data() + g * in_stride(p) + c;
            cd* dst = out.data() + g * out_stride(p) + c;
            std::vector<cd> spec(l);
            for (index_t q = 0; q < l; ++q) {
                cd s = 0;
                for (index_t x = 0; x < p.kept; ++x) s += src[x * n] * (inverse ? std::conj(w[(q * x) % l]) : w[(q * x) % l]);
                spec[q] = p.mode == ColumnMode::convolve ? s * k[q * n + c] : s;
            }
            for (index_t x = 0; x < p.rows_written(); ++x) {
                if (p.mode != ColumnMode::convolve) {
                    dst[x * n] = spec[x];
                    continue;
                }
                cd s = 0;
                for (index_t q = 0; q < l; ++q) s += spec[q] * std::conj(w[(q * x) % l]);
                dst[x * n] = s;
            }
        }
    return out;
}

// Runs the backend's stage on random input; the largest error relative to max
// |out|. Where the input has no data (rows from kept on, gaps between groups)
// it holds NaN, which a stage that reads it carries into its output; the
// output's own gaps and rows from `written` on must stay the NaN they start as.
double error(const ColumnProblem& p, std::uint32_t seed) {
    auto backend = Registry<Backend>::instance().create(backend_name());
    auto conv = Registry<ColumnConvolution>::instance().create(backend_name());
    conv->setup(*backend, p);
    const index_t l = p.length, n = p.columns;
    const double nan = std::nan("");
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    // One group: L rows as the x-stage's array (rows from kept on NaN).
    const index_t in_size = p.groups > 1 ? p.groups * p.in_group_stride : l * n;
    std::vector<cd> in(std::size_t(in_size), cd(nan, nan));
    for (index_t g = 0; g < p.groups; ++g)
        for (index_t i = 0; i < p.kept * n; ++i) in[g * in_stride(p) + i] = {u(gen), u(gen)};
    std::vector<double> k(std::size_t(l * n));
    for (auto& v : k) v = u(gen);
    const auto want = direct(p, in, k);
    const bool single = p.precision == Precision::single;
    const std::size_t cb = complex_bytes(p.precision), rb = real_bytes(p.precision);
    const index_t out_size = p.groups > 1 ? p.groups * p.out_group_stride : l * n;
    Buffer bin(*backend, in.size() * cb), bk(*backend, k.size() * rb), bout(*backend, std::size_t(out_size) * cb);
    auto put = [&](const Buffer& b, const std::vector<double>& v) {
        if (single) {
            const std::vector<float> f(v.begin(), v.end());
            backend->copy_from_host(b.data(), f.data(), b.bytes());
        } else {
            backend->copy_from_host(b.data(), v.data(), b.bytes());
        }
    };
    std::vector<double> flat(2 * in.size());
    for (std::size_t i = 0; i < in.size(); ++i) flat[2 * i] = in[i].real(), flat[2 * i + 1] = in[i].imag();
    put(bin, flat);
    const bool convolve = p.mode == ColumnMode::convolve;
    if (convolve) {  // K as it comes, then in the order the implementation reads it (in backend memory)
        Buffer raw(*backend, bk.bytes());
        put(raw, k);
        arrange_kernel(*backend, *conv, p, raw.data(), bk.data());
    }
    put(bout, std::vector<double>(2 * std::size_t(out_size), nan));
    conv->run(bin.data(), convolve ? bk.data() : nullptr, bout.data());
    std::vector<double> got(2 * std::size_t(out_size));
    if (single) {
        std::vector<float> f(got.size());
        backend->copy_to_host(f.data(), bout.data(), bout.bytes());
        backend->synchronize();
        got.assign(f.begin(), f.end());
    } else {
        backend->copy_to_host(got.data(), bout.data(), bout.bytes());
        backend->synchronize();
    }
    double diff = 0, scale = 0;
    for (index_t i = 0; i < out_size; ++i) {
        const cd g{got[2 * i], got[2 * i + 1]};
        const index_t group = i / out_stride(p), row = i % out_stride(p) / n;
        const bool written = group < p.groups && row < p.rows_written() && (p.groups > 1 || i < p.rows_written() * n);
        if (!written) {
            if (!std::isnan(g.real())) return INFINITY;  // written where it must not be
            continue;
        }
        if (!std::isfinite(g.real()) || !std::isfinite(g.imag())) return INFINITY;
        const cd want_i = want[std::size_t(group * out_stride(p) + i % out_stride(p))];
        diff = std::max(diff, std::abs(g - want_i)), scale = std::max(scale, std::abs(want_i));
    }
    return diff / scale;
}

TEST(ColumnConvolution, EqualsTheDirectConvolution) {
    if (auto why = Registry<Backend>::instance().create(backend_name())->unavailable()) GTEST_SKIP() << *why;
    struct Case {
        index_t length, kept, columns;
    };
    // Radix mixes (column_convolution_cuda.cpp: radices; single / double where
    // they differ): one pass (2, 3, 8, 16), 8·2, 8·3, 2·5, 16·6 / 8·4·3,
    // 16·12 / 8·8·3, 16·10 / 8·4·5, 16·9 / 8·2·9, 4·9, 16·16 / 8·8·4, 16·8·4 /
    // 8·8·8, 16·8·8 / 8·8·8·2, 16·16·3 / 8·8·4·3, 16·10·9 / 8·4·5·9 (1440),
    // 16·8·16 / 8·8·8·4, 16·8·8·4 / 8·8·8·8; half kept (the free axis), less
    // than half, more than half and all kept (periodic); columns not a block
    // multiple.
    const std::vector<Case> cases{{16, 8, 5},      {24, 12, 33},    {10, 10, 7},   {120, 60, 9},    {96, 40, 7},
                                  {30, 20, 4},     {1440, 720, 3},  {768, 384, 5}, {1024, 512, 6},  {2, 1, 3},
                                  {4096, 2048, 3}, {3, 2, 5},       {8, 4, 3},     {16, 16, 9},     {48, 24, 11},
                                  {256, 128, 17},  {512, 256, 9},   {2048, 1024, 3}, {1024, 1024, 2}, {512, 100, 5},
                                  {192, 96, 5},    {160, 80, 3},    {144, 72, 5},  {36, 18, 7}};
    for (auto precision : {Precision::double_, Precision::single})
        for (const auto& c : cases) {
            const ColumnProblem p{c.length, c.kept, c.columns, precision};
            const double e = error(p, std::uint32_t(c.length * 7 + c.columns));
            EXPECT_LT(e, precision == Precision::single ? 2e-5 : 1e-12)
                << "L " << c.length << " kept " << c.kept << " columns " << c.columns << " " << to_string(precision);
        }
}

// The y-passes of zero_skipping_fused: a zero-padded forward transform (the
// Ny rows of a compact group to all My) and a truncated inverse (all My rows to
// Ny), over x-plane groups with gaps; every radix mix of one and more passes.
TEST(ColumnConvolution, TransformsAloneEqualTheDirectSums) {
    if (auto why = Registry<Backend>::instance().create(backend_name())->unavailable()) GTEST_SKIP() << *why;
    struct Case {
        index_t length, ny, columns, groups;
    };
    const std::vector<Case> cases{{16, 8, 5, 3},    {2, 1, 3, 2},     {24, 12, 9, 4},  {1440, 720, 3, 2}, {1024, 512, 5, 2},
                                  {256, 128, 17, 3}, {36, 36, 7, 2}, {160, 80, 33, 1}, {512, 512, 4, 2}, {96, 40, 6, 3}};
    for (auto precision : {Precision::double_, Precision::single})
        for (const auto& c : cases) {
            const index_t l = c.length, n = c.columns;
            const ColumnProblem forward{l, c.ny, n, precision, ColumnMode::forward, l, c.groups, c.ny * n + 3, l * n + 5},
                inverse{l, l, n, precision, ColumnMode::inverse, c.ny, c.groups, l * n + 1, c.ny * n + 7};
            for (const auto& p : {forward, inverse}) {
                const double e = error(p, std::uint32_t(l * 11 + n));
                EXPECT_LT(e, precision == Precision::single ? 2e-5 : 1e-12)
                    << (p.mode == ColumnMode::forward ? "forward" : "inverse") << " L " << l << " kept " << p.kept
                    << " written " << p.rows_written() << " columns " << n << " groups " << c.groups << " "
                    << to_string(precision);
            }
        }
}

TEST(ColumnConvolution, RefusesWhatItCannotRun) {
    auto conv = Registry<ColumnConvolution>::instance().create(backend_name());
    EXPECT_TRUE(conv->not_applicable({16, 17, 4, Precision::double_}));  // keeps more than its length
    EXPECT_FALSE(conv->not_applicable({16, 8, 4, Precision::double_}));
    EXPECT_EQ(*conv->not_applicable({16, 8, 4, Precision::double_, ColumnMode::convolve, 8, 2, 64, 64}),
              "a column convolution takes one column group (its kernel's order), not 2");
    EXPECT_EQ(*conv->not_applicable({16, 8, 4, Precision::double_, ColumnMode::forward, 16, 2, 32, 60}),
              "column groups 32 and 60 elements apart overlap rows of 8 x 4 and 16 x 4");
    EXPECT_EQ(*conv->not_applicable({16, 16, 4, Precision::double_, ColumnMode::inverse, 17}),
              "a column stage of length 16 cannot write 17 rows");
    if (backend_name() == "cuda") {
        EXPECT_EQ(*conv->not_applicable({14, 7, 4, Precision::double_}),
                  "the fused x-pass transforms lengths of prime factors 2, 3 and 5, not 14");
        EXPECT_EQ(*conv->not_applicable({8192, 4096, 4, Precision::single}),
                  "the fused x-pass transforms lengths up to 4096 in shared memory, not 8192");
    }
}

}  // namespace
}  // namespace fftune::poisson
