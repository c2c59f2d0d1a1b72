// The column convolution of a backend (FFTUNE_TEST_BACKEND, default fftw; CMake
// registers the binary again for cuda) against a direct O(L²) DFT
// convolution on the host, for lengths of every radix mix, kept < L and
// kept = L, column counts that leave a block partly filled, both precisions.
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

// out[x, c] = Σ_k K[k, c] e^{+2πi kx/L} Σ_{x' < kept} in[x', c] e^{−2πi kx'/L}, x < kept.
std::vector<cd> direct(const ColumnProblem& p, const std::vector<cd>& in, const std::vector<double>& k) {
    const index_t l = p.length, n = p.columns;
    std::vector<cd> out(std::size_t(p.kept * n));
    std::vector<cd> w(l);
    for (index_t m = 0; m < l; ++m) w[m] = std::polar(1.0, -2 * std::numbers::pi * double(m) / double(l));
    for (index_t c = 0; c < n; ++c) {
        std::vector<cd> spec(l);
        for (index_t q = 0; q < l; ++q) {
            cd s = 0;
            for (index_t x = 0; x < p.kept; ++x) s += in[x * n + c] * w[(q * x) % l];
            spec[q] = s * k[q * n + c];
        }
        for (index_t x = 0; x < p.kept; ++x) {
            cd s = 0;
            for (index_t q = 0; q < l; ++q) s += spec[q] * std::conj(w[(q * x) % l]);
            out[x * n + c] = s;
        }
    }
    return out;
}

// Runs the backend's convolution on random input; the largest error relative to max |out|.
double error(const ColumnProblem& p, std::uint32_t seed) {
    auto backend = Registry<Backend>::instance().create(backend_name());
    auto conv = Registry<ColumnConvolution>::instance().create(backend_name());
    conv->setup(*backend, p);
    const index_t l = p.length, n = p.columns;
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<cd> in(std::size_t(l * n), 0.0);  // rows from kept on are zero
    for (index_t i = 0; i < p.kept * n; ++i) in[i] = {u(gen), u(gen)};
    std::vector<double> k(std::size_t(l * n));
    for (auto& v : k) v = u(gen);
    const auto want = direct(p, in, k);
    const bool single = p.precision == Precision::single;
    const std::size_t cb = complex_bytes(p.precision), rb = real_bytes(p.precision);
    Buffer bin(*backend, in.size() * cb), bk(*backend, k.size() * rb), bout(*backend, in.size() * cb);
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
    put(bk, conv->arrange_kernel(k));
    std::vector<double> nan(flat.size(), std::nan(""));
    put(bout, nan);  // rows it does not write stay NaN; rows it must write cannot
    conv->run(bin.data(), bk.data(), bout.data());
    std::vector<double> got(flat.size());
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
    for (std::size_t i = 0; i < want.size(); ++i) {
        const cd g{got[2 * i], got[2 * i + 1]};
        if (!std::isfinite(g.real()) || !std::isfinite(g.imag())) return INFINITY;
        diff = std::max(diff, std::abs(g - want[i])), scale = std::max(scale, std::abs(want[i]));
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

TEST(ColumnConvolution, RefusesWhatItCannotRun) {
    auto conv = Registry<ColumnConvolution>::instance().create(backend_name());
    EXPECT_TRUE(conv->not_applicable({16, 17, 4, Precision::double_}));  // keeps more than its length
    EXPECT_FALSE(conv->not_applicable({16, 8, 4, Precision::double_}));
    if (backend_name() == "cuda") {
        EXPECT_EQ(*conv->not_applicable({14, 7, 4, Precision::double_}),
                  "the fused x-pass transforms lengths of prime factors 2, 3 and 5, not 14");
        EXPECT_EQ(*conv->not_applicable({8192, 4096, 4, Precision::single}),
                  "the fused x-pass transforms lengths up to 4096 in shared memory, not 8192");
    }
}

}  // namespace
}  // namespace fftune::poisson
