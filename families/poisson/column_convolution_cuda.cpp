// The cuda backend's column convolution (column_convolution.hpp): one kernel,
// column_convolution_cuda.cu, on the backend's stream. Lengths whose prime
// factors are 2, 3 and 5, up to 4096 (a block's columns twice in shared
// memory, padded: 144 KiB for one double column).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/platform/cuda_check.hpp"
#include "core/platform/parallel.hpp"
#include "families/poisson/column_convolution.hpp"
#include "families/poisson/column_convolution_launch.hpp"

namespace fftune::poisson {
namespace {

constexpr index_t longest = 4096;
constexpr std::size_t block_shared = 96 * 1024;  // two blocks per SM (228 KiB)


// Forward radices: first the largest power of two up to 16 (single) or 8
// (double) dividing n (even where n is: with the upper half zero its inputs
// r ≥ R/2 are not read), then 8s, a leftover 4 or 2 (a 2 folded into an 8 as
// a 16 where allowed), 3s and 5s, then pairs merged into one pass where the
// precision allows the radix (fewer sweeps of shared memory): 4·3 = 12,
// 2·5 = 10, 3·3 = 9, 2·3 = 6. Empty if another prime divides n. The inverse
// runs them reversed. (1440 = 16·10·9 in single, 8·4·5·9 in double.)
std::vector<int> radices(index_t n, Precision precision) {
    const bool single = precision == Precision::single;
    const int largest = single ? 16 : 8;
    std::vector<int> out;
    for (int r = largest; r >= 2; r /= 2)
        if (n % r == 0) {
            out.push_back(r), n /= r;
            break;
        }
    std::vector<int> rest;
    while (n % 8 == 0) rest.push_back(8), n /= 8;
    if (n % 4 == 0) {
        rest.push_back(4), n /= 4;
    } else if (n % 2 == 0) {
        if (!rest.empty() && rest.back() == 8 && largest >= 16) rest.back() = 16;
        else rest.push_back(2);
        n /= 2;
    }
    for (int p : {3, 5})
        while (n % p == 0) rest.push_back(p), n /= p;
    if (n != 1) return {};
    auto take = [&](int f) {
        const auto it = std::find(rest.begin(), rest.end(), f);
        if (it == rest.end()) return false;
        rest.erase(it);
        return true;
    };
    auto merge = [&](int a, int b, bool allowed) {
        while (allowed && std::count(rest.begin(), rest.end(), a) >= (a == b ? 2 : 1) &&
               std::count(rest.begin(), rest.end(), b) >= 1) {
            take(a), take(b);
            rest.push_back(a * b);
        }
    };
    merge(4, 3, single);
    merge(2, 5, single);
    merge(3, 3, true);
    merge(2, 3, true);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

class CudaColumnConvolution final : public ColumnConvolution {
public:
    std::optional<std::string> not_applicable(const ColumnProblem& p) const override {
        if (auto why = column_problem_error(p)) return why;
        if (p.length < 2) return std::string("the fused x-pass transforms lengths of 2 or more, not 1");
        if (p.length > longest)
            return fmt::format("the fused x-pass transforms lengths up to {} in shared memory, not {}", longest,
                               p.length);
        if (radices(p.length, p.precision).empty())
            return fmt::format("the fused x-pass transforms lengths of prime factors 2, 3 and 5, not {}", p.length);
        return std::nullopt;
    }
    void setup(Backend& backend, const ColumnProblem& p) override {
        if (auto why = not_applicable(p)) throw Unsupported(*why);
        p_ = p;
        stream_ = static_cast<cudaStream_t>(backend.native_stream());
        // The upper half zero: the first pass's inputs r ≥ R/2 are not read.
        launch_.zero_half = p.length % 2 == 0 && 2 * p.kept <= p.length;
        const std::vector<int> r = radices(p.length, p.precision);
        launch_.length = static_cast<int>(p.length);
        launch_.kept = static_cast<int>(p.kept);
        launch_.written = static_cast<int>(p.rows_written());
        launch_.sign = p.mode == ColumnMode::convolve ? 0 : p.mode == ColumnMode::forward ? -1 : +1;
        launch_.columns = p.columns;
        launch_.groups = p.groups;
        launch_.in_group_stride = p.in_group_stride;
        launch_.out_group_stride = p.out_group_stride;
        launch_.single = p.precision == Precision::single;
        launch_.passes = static_cast<int>(r.size());
        for (std::size_t i = 0; i < r.size(); ++i) launch_.radix[i] = r[i], launch_.inverse_radix[i] = r[r.size() - 1 - i];
        // A padding row every 8 where the length is a power of two: its
        // Stockham writes would land in few banks (up to 1.36x the wavefronts
        // at L = 1024 unpadded, 1.07x padded; other lengths gain nothing).
        launch_.pad_shift = (p.length & (p.length - 1)) == 0 ? 3 : 31;
        const index_t rows = column_rows(launch_.length, launch_.pad_shift);
        // 64-byte runs of columns per row (4 double, 8 single complex), fewer
        // when long (two blocks per SM), more when short (work per block).
        const std::size_t cb = complex_bytes(p.precision);
        index_t per_block = index_t(64 / cb);
        while (per_block > 1 && 2 * per_block * rows * cb > block_shared) per_block /= 2;
        while (per_block < 64 && per_block * p.length < 2048) per_block *= 2;
        launch_.per_block = static_cast<int>(per_block);
        while ((1 << launch_.per_block_log2) < per_block) ++launch_.per_block_log2;
        launch_.blocks_per_group = (p.columns + per_block - 1) / per_block;
        // One radix-8 butterfly per thread (8 elements; a radix-16 pass leaves
        // half the threads idle, smaller radices give each several), at most
        // 512 threads (the kernel's bound): two 512-thread blocks per SM fill
        // the registers; 256-thread blocks run three per SM where their shared
        // memory fits.
        launch_.threads = static_cast<int>(std::clamp<index_t>((per_block * p.length / 8 + 31) / 32 * 32, 32, 512));
        check(column_convolution_configure(launch_), "column convolution: shared memory");
        // Twiddles e^{-2πi m/L}, computed in double.
        twiddles_ = Buffer(backend, std::size_t(p.length) * cb);
        std::vector<double> d(2 * p.length);
        for (index_t m = 0; m < p.length; ++m) {
            const double a = -2.0 * std::numbers::pi * double(m) / double(p.length);
            d[2 * m] = std::cos(a), d[2 * m + 1] = std::sin(a);
        }
        if (launch_.single) {
            const std::vector<float> f(d.begin(), d.end());
            backend.copy_from_host(twiddles_.data(), f.data(), twiddles_.bytes());
        } else {
            backend.copy_from_host(twiddles_.data(), d.data(), twiddles_.bytes());
        }
        backend.synchronize();
    }
    // Block-major: the columns of block b = c / per_block at b·per_block·L, row
    // q at q·width + c mod per_block (width: the block's columns), so that the
    // last forward pass reads a block's K in runs, not 16-byte pieces.
    std::vector<KernelPiece> kernel_order() const override {
        const index_t l = p_.length, n = p_.columns, pb = launch_.per_block, blocks = n / pb, w = n - blocks * pb;
        std::vector<KernelPiece> out;
        if (blocks > 0)  // (block, q, c) from q·n + block·pb + c
            out.push_back({{{blocks, l, pb}, {l * pb, pb, 1}, 0}, {{blocks, l, pb}, {pb, n, 1}, 0}});
        if (w > 0)  // the last block, w columns wide
            out.push_back({{{1, l, w}, {l * w, w, 1}, blocks * pb * l}, {{1, l, w}, {w, n, 1}, blocks * pb}});
        return out;
    }
    void run(const void* in, const void* kernel, void* out) override {
        if ((kernel != nullptr) != (p_.mode == ColumnMode::convolve))
            throw std::invalid_argument("column stage: a convolution takes a kernel, a transform none");
        check(launch_column_convolution(launch_, in, kernel, out, twiddles_.data(), stream_), "column convolution");
    }
    std::size_t work_bytes() const override { return twiddles_.bytes(); }
    // The kept rows read, the written ones written, K read in full (convolve).
    std::size_t moved_bytes() const override {
        const std::size_t k = p_.mode == ColumnMode::convolve ? std::size_t(p_.length) * real_bytes(p_.precision) : 0;
        return std::size_t(p_.all_columns()) *
               (std::size_t(p_.kept + p_.rows_written()) * complex_bytes(p_.precision) + k);
    }

private:
    ColumnProblem p_;
    ColumnLaunch launch_;
    Buffer twiddles_;
    cudaStream_t stream_ = nullptr;
};

const bool registered = register_variant<ColumnConvolution, CudaColumnConvolution>("cuda");

}  // namespace
}  // namespace fftune::poisson
