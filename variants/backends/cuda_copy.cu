#include "variants/backends/cuda_copy.hpp"

#include <algorithm>

namespace fftune {
namespace {

// dst[dst_region] = src[src_region]: one thread per element of the fastest
// dimension, rows over blockIdx.y (grid-strided), planes over blockIdx.z.
template <class T>
__global__ void copy_region_kernel(T* __restrict__ dst, const T* __restrict__ src, long long e0, long long e1,
                                   long long e2, long long ds0, long long ds1, long long ds2, long long ss0,
                                   long long ss1, long long ss2) {
    for (long long i0 = blockIdx.z; i0 < e0; i0 += gridDim.z)
        for (long long i1 = blockIdx.y; i1 < e1; i1 += gridDim.y)
            for (long long i2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; i2 < e2;
                 i2 += (long long)gridDim.x * blockDim.x)
                dst[i0 * ds0 + i1 * ds1 + i2 * ds2] = src[i0 * ss0 + i1 * ss1 + i2 * ss2];
}

// The same copy with one thread per element of the whole region (flat index
// i = (i0 e1 + i1) e2 + i2): for short rows, where a block per row would leave
// most of its threads idle (poisson's arranged kernel has rows of 4 elements:
// 31 GB/s at 512^3 through copy_region_kernel).
template <class T>
__global__ void copy_flat_kernel(T* __restrict__ dst, const T* __restrict__ src, long long e1, long long e2,
                                 long long count, long long ds0, long long ds1, long long ds2, long long ss0,
                                 long long ss1, long long ss2) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
        const long long i2 = i % e2, rest = i / e2, i1 = rest % e1, i0 = rest / e1;
        dst[i0 * ds0 + i1 * ds1 + i2 * ds2] = src[i0 * ss0 + i1 * ss1 + i2 * ss2];
    }
}

// The same copy where the destination's fastest axis is axis `j` (0 or 1) of
// the source's order, not axis 2: a 32x32 tile of (j, 2) goes through shared
// memory, so that reads run along axis 2 and writes along axis j, both
// coalesced; the remaining axis `o` over blockIdx.z.
template <class T>
__global__ void transpose_region_kernel(T* __restrict__ dst, const T* __restrict__ src, long long eo, long long ej,
                                        long long e2, long long dso, long long dsj, long long ds2, long long sso,
                                        long long ssj, long long ss2) {
    __shared__ T tile[32][33];  // +1 column: no bank conflicts on the transposed read
    const long long j0 = blockIdx.y * 32LL, i0 = blockIdx.x * 32LL;
    for (long long o = blockIdx.z; o < eo; o += gridDim.z) {
        for (int r = threadIdx.y; r < 32; r += blockDim.y) {
            const long long j = j0 + r, i = i0 + threadIdx.x;
            if (j < ej && i < e2) tile[r][threadIdx.x] = src[o * sso + j * ssj + i * ss2];
        }
        __syncthreads();
        for (int r = threadIdx.y; r < 32; r += blockDim.y) {
            const long long i = i0 + r, j = j0 + threadIdx.x;
            if (j < ej && i < e2) dst[o * dso + j * dsj + i * ds2] = tile[threadIdx.x][r];
        }
        __syncthreads();
    }
}

template <class T>
cudaError_t launch_copy(void* dst, const CopyRegion& d, const void* src, const CopyRegion& s, cudaStream_t stream) {
    // The destination's fastest moving axis; tiles when it is not the source's.
    int j = 2;
    for (int k = 0; k < 2; ++k)
        if (s.extent[k] > 1 && (s.extent[j] == 1 || d.stride[k] < d.stride[j])) j = k;
    if (j != 2 && s.extent[2] > 1 && (s.extent[j] + 31) / 32 <= 65535) {
        const int o = 1 - j;
        const dim3 block(32, 8);
        const dim3 grid(static_cast<unsigned>((s.extent[2] + 31) / 32), static_cast<unsigned>((s.extent[j] + 31) / 32),
                        static_cast<unsigned>(std::min<long long>(s.extent[o], 65535)));
        transpose_region_kernel<T><<<grid, block, 0, stream>>>(
            static_cast<T*>(dst) + d.offset, static_cast<const T*>(src) + s.offset, s.extent[o], s.extent[j],
            s.extent[2], d.stride[o], d.stride[j], d.stride[2], s.stride[o], s.stride[j], s.stride[2]);
        return cudaGetLastError();
    }
    const long long count = s.extent[0] * s.extent[1] * s.extent[2];
    if (s.extent[2] < 128 && count > s.extent[2]) {  // short rows: one thread per element
        const unsigned blocks = static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535LL * 16));
        copy_flat_kernel<T><<<blocks, 256, 0, stream>>>(static_cast<T*>(dst) + d.offset, static_cast<const T*>(src) + s.offset,
                                                        s.extent[1], s.extent[2], count, d.stride[0], d.stride[1],
                                                        d.stride[2], s.stride[0], s.stride[1], s.stride[2]);
        return cudaGetLastError();
    }
    const dim3 block(256);
    const dim3 grid(static_cast<unsigned>(std::min<long long>((s.extent[2] + 255) / 256, 1024)),
                    static_cast<unsigned>(std::min<long long>(s.extent[1], 65535)),
                    static_cast<unsigned>(std::min<long long>(s.extent[0], 65535)));
    copy_region_kernel<T><<<grid, block, 0, stream>>>(static_cast<T*>(dst) + d.offset, static_cast<const T*>(src) + s.offset,
                                                      s.extent[0], s.extent[1], s.extent[2], d.stride[0], d.stride[1],
                                                      d.stride[2], s.stride[0], s.stride[1], s.stride[2]);
    return cudaGetLastError();
}

}  // namespace

namespace {

template <class C, class R>
__global__ void multiply_real_kernel(C* __restrict__ data, const R* __restrict__ factor, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const R f = factor[i];
        C v = data[i];
        v.x *= f;
        v.y *= f;
        data[i] = v;
    }
}

}  // namespace

cudaError_t cuda_multiply_real(void* data, const void* factor, long long n, std::size_t complex_bytes,
                               cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    const unsigned blocks = static_cast<unsigned>(std::min<long long>((n + 255) / 256, 65535LL * 16));
    if (complex_bytes == 8)
        multiply_real_kernel<<<blocks, 256, 0, stream>>>(static_cast<float2*>(data), static_cast<const float*>(factor), n);
    else if (complex_bytes == 16)
        multiply_real_kernel<<<blocks, 256, 0, stream>>>(static_cast<double2*>(data), static_cast<const double*>(factor), n);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

cudaError_t cuda_copy_region(void* dst, const CopyRegion& d, const void* src, const CopyRegion& s,
                             std::size_t elem_bytes, cudaStream_t stream) {
    switch (elem_bytes) {  // element width in bytes
        case 4: return launch_copy<float>(dst, d, src, s, stream);
        case 8: return launch_copy<float2>(dst, d, src, s, stream);
        case 16: return launch_copy<double2>(dst, d, src, s, stream);
        default: return cudaErrorInvalidValue;
    }
}

namespace {

struct FillShape {
    long long e1, e2;       // extents of the two fastest memory dimensions
    int axis_of[3];         // global axis of each memory dimension, slow -> fast
    long long base[3];      // offset of each global axis' table within a term
    long long term_stride;  // n_x + n_y + n_z
};

template <class T>
__global__ void fill_separable_kernel(T* __restrict__ out, long long count, FillShape s, int terms,
                                      const double2* __restrict__ tables) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
        const long long j2 = i % s.e2, rest = i / s.e2;
        const long long j[3] = {rest / s.e1, rest % s.e1, j2};
        long long at[3];
        for (int k = 0; k < 3; ++k) at[s.axis_of[k]] = j[k];
        double v = 0;
        for (int m = 0; m < terms; ++m) {
            const double2* t = tables + m * s.term_stride;
            const double2 a = t[s.base[0] + at[0]], b = t[s.base[1] + at[1]], c = t[s.base[2] + at[2]];
            const double rx = a.x * b.x - a.y * b.y, ry = a.x * b.y + a.y * b.x;  // row = t_x * t_y
            v += rx * c.x - ry * c.y;                                             // Re(row * t_z)
        }
        out[i] = static_cast<T>(v);
    }
}

}  // namespace

cudaError_t cuda_fill_separable(void* out, std::size_t real_bytes, const long long extent[3], const int axis_of[3],
                                const long long box_extent[3], int terms, const double2* tables, cudaStream_t stream) {
    const long long count = extent[0] * extent[1] * extent[2];
    if (count <= 0) return cudaSuccess;
    FillShape s{extent[1], extent[2], {axis_of[0], axis_of[1], axis_of[2]},
                {0, box_extent[0], box_extent[0] + box_extent[1]}, box_extent[0] + box_extent[1] + box_extent[2]};
    const unsigned blocks = static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535LL * 16));
    if (real_bytes == 4)
        fill_separable_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(out), count, s, terms, tables);
    else if (real_bytes == 8)
        fill_separable_kernel<<<blocks, 256, 0, stream>>>(static_cast<double*>(out), count, s, terms, tables);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

namespace {
constexpr int difference_threads = 256;
template <class T>
__global__ void max_difference_kernel(const T* __restrict__ a, double scale, const T* __restrict__ b, long long count,
                                      double* partials) {
    double d = 0, r = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
        double e = fabs(double(a[i]) * scale - double(b[i]));
        if (isnan(e)) e = INFINITY;
        d = fmax(d, e);
        r = fmax(r, fabs(double(b[i])));
    }
    __shared__ double s[2][difference_threads];
    s[0][threadIdx.x] = d, s[1][threadIdx.x] = r;
    __syncthreads();
    for (int w = difference_threads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            for (int q = 0; q < 2; ++q) s[q][threadIdx.x] = fmax(s[q][threadIdx.x], s[q][threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[2 * blockIdx.x] = s[0][0], partials[2 * blockIdx.x + 1] = s[1][0];
}
}  // namespace

cudaError_t cuda_max_difference(const void* a, double scale, const void* b, long long count, std::size_t real_bytes,
                                double* partials, int blocks, cudaStream_t stream) {
    if (real_bytes == 4)
        max_difference_kernel<<<blocks, difference_threads, 0, stream>>>(static_cast<const float*>(a), scale,
                                                                         static_cast<const float*>(b), count, partials);
    else if (real_bytes == 8)
        max_difference_kernel<<<blocks, difference_threads, 0, stream>>>(static_cast<const double*>(a), scale,
                                                                         static_cast<const double*>(b), count, partials);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

}  // namespace fftune
