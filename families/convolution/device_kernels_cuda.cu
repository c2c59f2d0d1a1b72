// The convolution family's kernels on the GPU (device_kernels.hpp): the
// Green's function on the padded grid, a thread per point, the formulas of
// green(); the octree's sampling and trilinear interpolation, one thread per
// sample or point, `slots` threads per cell (a cell's samples are contiguous,
// so its threads write one run of `out`), with the host oracle's arithmetic
// (sampling.cpp): the same sample coordinates, brackets, and lerps in the same
// order (z, then y, then x).
#include "families/convolution/device_kernels_launch.hpp"

namespace fftune::convolution {
namespace {

constexpr int threads = 256;

// Samples of a cell axis of `ext` points at stride s: ⌈ext/s⌉, plus its last point where the stride misses it.
__device__ inline long long axis_count(long long ext, long long s) {
    return (ext + s - 1) / s + ((ext - 1) % s != 0 ? 1 : 0);
}
// The a-th of them, relative to the cell's low corner.
__device__ inline long long axis_coord(long long ext, long long s, long long a) {
    return a < (ext + s - 1) / s ? a * s : ext - 1;
}
// Point p (relative) between samples k and k + 1 of n, t the weight of k + 1
// (the host's bracket(): the last point takes the last pair at t = 1).
__device__ inline void bracket(long long p, long long ext, long long s, long long n, int& k, double& t) {
    const long long m = (ext + s - 1) / s;
    long long kk = p / s;
    if (n == m + 1 && p == ext - 1) kk = m;  // the extra last sample
    if (kk + 1 >= n) {
        k = n >= 2 ? int(n - 2) : 0;
        t = n >= 2 ? 1.0 : 0.0;
        return;
    }
    const long long v0 = kk * s, v1 = kk + 1 < m ? (kk + 1) * s : ext - 1;
    k = int(kk);
    t = double(p - v0) / double(v1 - v0);
}
__device__ inline double lerp(double u, double v, double t) { return (1 - t) * u + t * v; }

// This thread's cell c (of n, `slots` threads each) and slot k in it, and the
// cell's extents; false past the last cell.
struct CellThread {
    long long c, k, ex, ey, ez;
    CellRecord cell;
};
__device__ inline bool cell_thread(const CellRecord* cells, long long n, int slots, CellThread& t) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    t.c = i / slots;
    if (t.c >= n) return false;
    t.k = i % slots;
    t.cell = cells[t.c];
    t.ex = t.cell.hi[0] - t.cell.lo[0], t.ey = t.cell.hi[1] - t.cell.lo[1], t.ez = t.cell.hi[2] - t.cell.lo[2];
    return true;
}

__global__ void sample_kernel(const CellRecord* cells, const unsigned long long* offsets, long long n, int slots,
                              GridRecord g, double* out) {
    CellThread t;
    if (!cell_thread(cells, n, slots, t)) return;
    const CellRecord& cell = t.cell;
    const long long c = t.c, k = t.k, ex = t.ex, ey = t.ey, ez = t.ez;
    const long long s = cell.rate;
    const long long ny = axis_count(ey, s), nz = axis_count(ez, s);
    if (k >= axis_count(ex, s) * ny * nz) return;
    const long long x = cell.lo[0] + axis_coord(ex, s, k / (ny * nz));
    const long long y = cell.lo[1] + axis_coord(ey, s, (k / nz) % ny);
    const long long z = cell.lo[2] + axis_coord(ez, s, k % nz);
    out[offsets[c] + k] = g.data[g.base + x * g.stride[0] + y * g.stride[1] + z * g.stride[2]];
}

__global__ void interpolate_kernel(const CellRecord* cells, const unsigned long long* offsets, long long n, int slots,
                                   const double* samples, long long lo0, long long lo1, long long lo2, long long ny,
                                   long long nz, double* out) {
    CellThread t;
    if (!cell_thread(cells, n, slots, t)) return;
    const CellRecord& cell = t.cell;
    const long long c = t.c, k = t.k, ex = t.ex, ey = t.ey, ez = t.ez;
    if (k >= ex * ey * ez) return;
    const long long px = k / (ey * ez), py = (k / ez) % ey, pz = k % ez;
    const long long s = cell.rate;
    const long long sx = axis_count(ex, s), sy = axis_count(ey, s), sz = axis_count(ez, s);
    int kx, ky, kz;
    double tx, ty, tz;
    bracket(px, ex, s, sx, kx, tx);
    bracket(py, ey, s, sy, ky, ty);
    bracket(pz, ez, s, sz, kz, tz);
    const double* S = samples + offsets[c];
    auto along_z = [&](long long i, long long j) {
        const double* row = S + (i * sy + j) * sz;
        return sz > 1 ? lerp(row[kz], row[kz + 1], tz) : row[0];
    };
    auto along_y = [&](long long i) {
        const double lo = along_z(i, ky), hi = sy > 1 ? along_z(i, ky + 1) : lo;
        return lerp(lo, hi, ty);
    };
    const double lo = along_y(kx), hi = sx > 1 ? along_y(kx + 1) : lo;
    out[((cell.lo[0] + px - lo0) * ny + (cell.lo[1] + py - lo1)) * nz + (cell.lo[2] + pz - lo2)] += lerp(lo, hi, tx);
}

__global__ void green_fill_kernel(GreenFill f, double* out) {
    const long long count = f.extent[0] * f.extent[1] * f.extent[2];
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < count;
         t += (long long)gridDim.x * blockDim.x) {
        const long long e[3] = {t / (f.extent[1] * f.extent[2]), (t / f.extent[2]) % f.extent[1], t % f.extent[2]};
        double v = 0;
        bool inside = true;
        double r2 = 0;
        for (int a = 0; a < 3; ++a) {
            const long long i = f.lo[a] + e[a];
            inside = inside && i < 2 * f.n[a];
            const long long d = i < f.n[a] ? i : i - 2 * f.n[a];
            r2 += double(d * d);
        }
        if (inside) v = f.scale * (f.inverse_r ? 1.0 / sqrt(r2 + 1.0) : exp(-r2 / 8.0));
        out[f.base + e[0] * f.stride[0] + e[1] * f.stride[1] + e[2] * f.stride[2]] = v;
    }
}

__device__ inline double input_at(const InputFill& f, long long i, long long j, long long l) {
    if (f.noise) {  // input_value(): the point's index hashed
        unsigned long long h =
            (unsigned long long)((i * f.n[1] + j) * f.n[2] + l) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
        return double(h >> 11) / double(1ull << 53) * 2 - 1;
    }
    const double c[3][3] = {{0.3, 0.4, 0.5}, {0.7, 0.6, 0.3}, {0.5, 0.2, 0.8}};
    const double wx = double(f.n[0]) / 8, wy = double(f.n[1]) / 8, wz = double(f.n[2]) / 8;
    double v = 0;
    for (int k = 0; k < 3; ++k) {
        const double dx = (i - c[k][0] * f.n[0]) / wx, dy = (j - c[k][1] * f.n[1]) / wy, dz = (l - c[k][2] * f.n[2]) / wz;
        v += exp(-(dx * dx + dy * dy + dz * dz) / 2);
    }
    return v;
}

__global__ void input_fill_kernel(InputFill f, double* out) {
    const long long count = f.extent[0] * f.extent[1] * f.extent[2];
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < count;
         t += (long long)gridDim.x * blockDim.x) {
        const long long e[3] = {t / (f.extent[1] * f.extent[2]), (t / f.extent[2]) % f.extent[1], t % f.extent[2]};
        out[f.base + e[0] * f.stride[0] + e[1] * f.stride[1] + e[2] * f.stride[2]] =
            input_at(f, f.lo[0] + e[0], f.lo[1] + e[1], f.lo[2] + e[2]);
    }
}

// Block (k, a): probe k against plane a, a tree sum over the block.
__global__ void direct_sums_kernel(const double* x, long long n0, long long n1, long long n2, bool inverse_r,
                                   const long long* probes, double* plane_sums) {
    __shared__ double part[threads];
    const long long k = blockIdx.y, a = blockIdx.x;
    const long long* p = probes + 3 * k;
    const double dx = double(p[0] - a);
    double v = 0;
    for (long long t = threadIdx.x; t < n1 * n2; t += blockDim.x) {
        const long long b = t / n2, c = t % n2;
        const double dy = double(p[1] - b), dz = double(p[2] - c);
        const double r2 = dx * dx + dy * dy + dz * dz;
        v += x[a * n1 * n2 + t] * (inverse_r ? 1.0 / sqrt(r2 + 1.0) : exp(-r2 / 8.0));
    }
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = threads / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) plane_sums[k * n0 + a] = part[0];
}

long long blocks(long long n, int slots) { return (n * slots + threads - 1) / threads; }

// A fill of a box, a thread per point and grid-stride loops past 2^20 blocks.
template <class Fill>
cudaError_t launch_fill(void (*kernel)(Fill, double*), const Fill& f, double* out, cudaStream_t stream) {
    const long long count = f.extent[0] * f.extent[1] * f.extent[2];
    if (count == 0) return cudaSuccess;
    const long long b = (count + threads - 1) / threads;
    kernel<<<unsigned(b < 65536 * 16 ? b : 65536 * 16), threads, 0, stream>>>(f, out);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_green_fill(const GreenFill& f, double* out, cudaStream_t stream) {
    return launch_fill(green_fill_kernel, f, out, stream);
}

cudaError_t launch_input_fill(const InputFill& f, double* out, cudaStream_t stream) {
    return launch_fill(input_fill_kernel, f, out, stream);
}

namespace {
__global__ void compare_kernel(const double* y, const double* exact, long long count, double* partials) {
    double part[4] = {0, 0, 0, 0};
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
        const double e = y[i] - exact[i];
        if (!isfinite(e)) part[2] = 1;
        else part[0] += e * e, part[1] += exact[i] * exact[i];
        part[3] = fmax(part[3], fabs(exact[i]));
    }
    __shared__ double s[4][threads];
    for (int q = 0; q < 4; ++q) s[q][threadIdx.x] = part[q];
    __syncthreads();
    for (int w = threads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            for (int q = 0; q < 4; ++q) {
                const double o = s[q][threadIdx.x + w];
                s[q][threadIdx.x] = q < 2 ? s[q][threadIdx.x] + o : fmax(s[q][threadIdx.x], o);
            }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int q = 0; q < 4; ++q) partials[4 * blockIdx.x + q] = s[q][0];
}
}  // namespace

cudaError_t launch_compare(const double* y, const double* exact, long long count, double* partials, int blocks,
                           cudaStream_t stream) {
    compare_kernel<<<blocks, threads, 0, stream>>>(y, exact, count, partials);
    return cudaGetLastError();
}

cudaError_t launch_direct_sums(const double* x, const long long* n, bool inverse_r, const long long* probes,
                               long long count, double* plane_sums, cudaStream_t stream) {
    for (long long k = 0; k < count && n[0] > 0; k += 65535) {  // gridDim.y ≤ 65535
        const long long m = count - k < 65535 ? count - k : 65535;
        direct_sums_kernel<<<dim3(unsigned(n[0]), unsigned(m)), threads, 0, stream>>>(
            x, n[0], n[1], n[2], inverse_r, probes + 3 * k, plane_sums + k * n[0]);
        if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

namespace {
// random_check_point's splitmix64 (sampling.hpp): value 3j + a for axis a.
__global__ void check_values_kernel(GridRecord g, CheckPointsRecord c, double* out) {
    const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (k >= c.given_count + c.random) return;
    long long p[3];
    if (k < c.given_count) {
        for (int a = 0; a < 3; ++a) p[a] = c.given[3 * k + a];
    } else {
        const unsigned long long j = (unsigned long long)(k - c.given_count);
        for (int a = 0; a < 3; ++a) {
            unsigned long long z = 0x2545F4914F6CDD1Dull + (3 * j + (unsigned long long)a + 1) * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            p[a] = c.domain_lo[a] + (long long)(z % (unsigned long long)c.domain_extent[a]);
        }
    }
    bool inside = true;
    for (int a = 0; a < 3; ++a) inside = inside && c.region_lo[a] <= p[a] && p[a] < c.region_hi[a];
    out[k] = inside ? g.data[g.base + p[0] * g.stride[0] + p[1] * g.stride[1] + p[2] * g.stride[2]] : 0.0;
}
}  // namespace

cudaError_t launch_check_values(GridRecord grid, const CheckPointsRecord& c, double* out, cudaStream_t stream) {
    const long long n = c.given_count + c.random;
    if (n == 0) return cudaSuccess;
    check_values_kernel<<<unsigned((n + threads - 1) / threads), threads, 0, stream>>>(grid, c, out);
    return cudaGetLastError();
}

namespace {
// Tiling's formulas (sampling.hpp): f the index among all the blocks' cells.
__global__ void make_tiling_kernel(TilingRecord t, const TilingPlaneRecord* planes, CellRecord* cells,
                                   unsigned long long* offsets) {
    const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (k > t.count) return;
    if (k == t.count) {
        offsets[k] = t.samples;
        return;
    }
    const long long f = t.dropped >= 0 && k >= t.dropped ? k + 1 : k;
    const long long b[3] = {f / (t.blocks[1] * t.blocks[2]), (f / t.blocks[2]) % t.blocks[1], f % t.blocks[2]};
    const TilingPlaneRecord p = planes[b[0]];
    const long long r = p.rate, whole = axis_count(t.cell, r);
    CellRecord c;
    long long n[3];
    for (int a = 0; a < 3; ++a) {
        c.lo[a] = t.region_lo[a] + b[a] * t.cell;
        c.hi[a] = c.lo[a] + t.cell < t.region_hi[a] ? c.lo[a] + t.cell : t.region_hi[a];
        n[a] = axis_count(c.hi[a] - c.lo[a], r);
    }
    c.rate = r;
    const long long last_z = t.region_hi[2] - t.region_lo[2] - (t.blocks[2] - 1) * t.cell;
    const long long row_z = (t.blocks[2] - 1) * whole + axis_count(last_z, r);
    unsigned long long at = p.start + (unsigned long long)(n[0] * (b[1] * whole * row_z + n[1] * b[2] * whole));
    if (t.dropped >= 0 && f > t.dropped) at -= (unsigned long long)t.dropped_samples;
    cells[k] = c;
    offsets[k] = at;
}
}  // namespace

cudaError_t launch_make_tiling(const TilingRecord& t, const TilingPlaneRecord* planes, CellRecord* cells,
                               unsigned long long* offsets, cudaStream_t stream) {
    make_tiling_kernel<<<unsigned((t.count + 1 + threads - 1) / threads), threads, 0, stream>>>(t, planes, cells,
                                                                                               offsets);
    return cudaGetLastError();
}

cudaError_t launch_octree_sample(const CellRecord* cells, const unsigned long long* offsets, long long n, int slots,
                                 GridRecord grid, double* out, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    sample_kernel<<<blocks(n, slots), threads, 0, stream>>>(cells, offsets, n, slots, grid, out);
    return cudaGetLastError();
}

cudaError_t launch_octree_interpolate_add(const CellRecord* cells, const unsigned long long* offsets, long long n,
                                          int slots, const double* samples, const long long* region_lo, long long ny,
                                          long long nz, double* out, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    interpolate_kernel<<<blocks(n, slots), threads, 0, stream>>>(cells, offsets, n, slots, samples, region_lo[0],
                                                                  region_lo[1], region_lo[2], ny, nz, out);
    return cudaGetLastError();
}

}  // namespace fftune::convolution
