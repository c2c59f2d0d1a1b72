// Launcher of the cuda column convolution (column_convolution_cuda.cu), in
// plain C++17 types for the C++20 side (column_convolution_cuda.cpp).
#pragma once

#include <cuda_runtime.h>

namespace fftune::poisson {

struct ColumnLaunch {
    int length = 0;
    int kept = 0;     // rows read (the rest are zero)
    int written = 0;  // rows written
    int sign = 0;     // 0: convolve; -1 / +1: a forward / inverse transform alone
    long long columns = 0;  // of a group (the row stride)
    long long groups = 1, blocks_per_group = 1;
    long long in_group_stride = 0, out_group_stride = 0;
    int per_block = 0;       // columns a block transforms together (a power of two)
    int per_block_log2 = 0;
    int threads = 0;         // at most 512
    int passes = 0;          // Stockham passes, product of the radices = length
    int radix[32] = {};          // forward order: 16, 12, 10 (single only), 9, 8, 6, 5, 4, 3, 2; the first even where length is
    int inverse_radix[32] = {};  // radix reversed: the turn needs inverse_radix[0] == radix[passes - 1]
                                 // (a transform alone runs radix[] in its own sign)
    bool zero_half = false;      // kept ≤ length / 2: the first pass's inputs r ≥ R/2 are zero, unread
    bool single = false;
    int pad_shift = 31;          // a padding row after every 2^pad_shift rows in shared memory (31: none)
};
// Rows of one shared array: `length` and the padding rows among them.
__host__ __device__ inline int column_rows(int length, int pad_shift) {
    return length + ((length - 1) >> pad_shift);
}
// Shared memory a block holds: 2 · per_block · column_rows complex values.
long long column_shared_bytes(const ColumnLaunch& l);
// Once, before the first launch: lets the kernel hold that much shared memory.
cudaError_t column_convolution_configure(const ColumnLaunch& l);
// `twiddles`: e^{-2πi m / length}, m < length, complex of the precision;
// `kernel`: K block-major (column_convolution_cuda.cpp: arrange_kernel), or
// nullptr for a transform alone.
cudaError_t launch_column_convolution(const ColumnLaunch& l, const void* in, const void* kernel, void* out,
                                      const void* twiddles, cudaStream_t stream);

}  // namespace fftune::poisson
