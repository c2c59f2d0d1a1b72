// The poisson family's kernels on the GPU (device_kernels.hpp), a thread per
// value: the formulas of green.cpp (TestProblem's ρ and φ, green_value) in
// double, the table's rows gathered into and scattered from the r2c
// transforms of their even extensions, the fold into a spectrum layout.
#include <cmath>

#include "families/poisson/device_kernels_launch.hpp"

namespace fftune::poisson {
namespace {

constexpr int threads = 256;
constexpr double pi = 3.141592653589793238462643383279502884;

long long blocks_for(long long n) { return (n + threads - 1) / threads; }

struct Coordinates {
    double x, y, z, lx, ly, lz;  // from the charge's centre; box lengths
};
__device__ Coordinates coordinates(const TestGridRecord& g, long long i, long long j, long long l) {
    const long long least = min(g.n[0], min(g.n[1], g.n[2]));
    const double h = 1.0 / double(least);
    return {(double(i) - (double(g.n[0]) - 1) / 2) * h - g.centre[0],
            (double(j) - (double(g.n[1]) - 1) / 2) * h - g.centre[1],
            (double(l) - (double(g.n[2]) - 1) / 2) * h - g.centre[2],
            double(g.n[0]) * h, double(g.n[1]) * h, double(g.n[2]) * h};
}

__device__ double rho_at(const TestGridRecord& g, long long i, long long j, long long l) {
    const Coordinates p = coordinates(g, i, j, l);
    const double sigma = g.sigma, s2 = g.envelope * g.envelope, a = g.amplitude;
    switch (g.boundary) {
        case boundary_free: {
            const double r2 = p.x * p.x + p.y * p.y + p.z * p.z;
            return exp(-r2 / (2 * sigma * sigma)) / pow(2 * pi * sigma * sigma, 1.5);
        }
        case boundary_wire: {
            const double r2 = p.x * p.x + p.y * p.y, kz = 2 * pi / p.lz;
            const double line = exp(-r2 / (2 * sigma * sigma)) / (2 * pi * sigma * sigma);
            const double f = a * exp(-r2 / (2 * s2)) * cos(kz * p.z);
            return line - f * (r2 / (s2 * s2) - 2 / s2 - kz * kz) / (4 * pi);
        }
        case boundary_surface: {
            const double kx = 2 * pi / p.lx, ky = 2 * pi / p.ly;
            const double sheet = exp(-p.z * p.z / (2 * sigma * sigma)) / (sqrt(2 * pi) * sigma);
            const double f = a * exp(-p.z * p.z / (2 * s2)) * cos(kx * p.x) * sin(ky * p.y);
            return sheet - f * (p.z * p.z / (s2 * s2) - 1 / s2 - kx * kx - ky * ky) / (4 * pi);
        }
        default: {
            const double kx = 2 * pi / p.lx, ky = 4 * pi / p.ly, kz = 2 * pi / p.lz, k3 = 6 * pi / p.lx;
            return ((kx * kx + ky * ky + kz * kz) * sin(kx * p.x) * cos(ky * p.y) * sin(kz * p.z) +
                    k3 * k3 * a * cos(k3 * p.x)) /
                   (4 * pi);
        }
    }
}

// Free, surface and periodic (wire's E1 has no device function: the host checks it).
__device__ double phi_at(const TestGridRecord& g, long long i, long long j, long long l) {
    const Coordinates p = coordinates(g, i, j, l);
    const double sigma = g.sigma, s2 = g.envelope * g.envelope, a = g.amplitude;
    switch (g.boundary) {
        case boundary_free: {
            const double r = sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
            return r > 0 ? erf(r / (sqrt(2.0) * sigma)) / r : sqrt(2 / pi) / sigma;
        }
        case boundary_surface: {
            const double sheet = -2 * pi * (p.z * erf(p.z / (sqrt(2.0) * sigma)) +
                                            sigma * sqrt(2 / pi) * exp(-p.z * p.z / (2 * sigma * sigma)));
            return sheet + a * exp(-p.z * p.z / (2 * s2)) * cos(2 * pi * p.x / p.lx) * sin(2 * pi * p.y / p.ly);
        }
        default:
            return sin(2 * pi * p.x / p.lx) * cos(4 * pi * p.y / p.ly) * sin(2 * pi * p.z / p.lz) +
                   a * cos(6 * pi * p.x / p.lx);
    }
}

__device__ long long address(const TestGridRecord& g, long long a, long long b, long long c) {
    return g.offset + a * g.stride[0] + b * g.stride[1] + c * g.stride[2];
}

__global__ void fill_rho_kernel(TestGridRecord g, void* data) {
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= g.extent[0] * g.extent[1] * g.extent[2]) return;
    const long long c = e % g.extent[2], b = (e / g.extent[2]) % g.extent[1], a = e / (g.extent[1] * g.extent[2]);
    const double v = rho_at(g, g.lo[0] + a, g.lo[1] + b, g.lo[2] + c);
    if (g.single) static_cast<float*>(data)[address(g, a, b, c)] = float(v);
    else static_cast<double*>(data)[address(g, a, b, c)] = v;
}

__global__ void phi_errors_kernel(TestGridRecord g, const long long* planes, long long plane_count, const void* data,
                                  double* partials) {
    double part[5] = {0, 0, 0, 0, 0};
    const long long per_plane = g.extent[1] * g.extent[2], total = plane_count * per_plane;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long i = planes[e / per_plane], b = (e % per_plane) / g.extent[2], c = e % g.extent[2];
        const long long at = address(g, i - g.lo[0], b, c);
        const double value = g.single ? double(static_cast<const float*>(data)[at]) : static_cast<const double*>(data)[at];
        const double exact = phi_at(g, i, g.lo[1] + b, g.lo[2] + c), err = value - exact;
        if (!isfinite(err)) {
            part[2] = 1;
            continue;
        }
        part[0] = fmax(part[0], fabs(err));
        part[1] = fmax(part[1], fabs(exact));
        part[3] += err * err;
        part[4] += exact * exact;
    }
    __shared__ double s[5][threads];
    for (int q = 0; q < 5; ++q) s[q][threadIdx.x] = part[q];
    __syncthreads();
    for (int w = threads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            for (int q = 0; q < 5; ++q) {
                const double o = s[q][threadIdx.x + w];
                s[q][threadIdx.x] = q < 3 ? fmax(s[q][threadIdx.x], o) : s[q][threadIdx.x] + o;
            }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int q = 0; q < 5; ++q) partials[5 * blockIdx.x + q] = s[q][0];
}

__device__ double wave(const GreenTableRecord& g, int d, long long q) { return 2 * pi * double(q) / (double(g.m[d]) * g.h); }

__device__ double green_at(const GreenTableRecord& g, long long i, long long j, long long l) {
    const double h = g.h;
    switch (g.boundary) {
        case boundary_free: {
            const double r = h * sqrt(double(i * i + j * j) + double(l) * l);
            if (r == 0) return g.origin;
            if (!g.regularized4) return 1 / r;
            const double rho = r / g.eps;
            return (erf(rho / sqrt(2.0)) + rho * exp(-rho * rho / 2) / sqrt(2 * pi)) / r;
        }
        case boundary_surface: {
            const double z = fabs(h * double(l)), k = hypot(wave(g, 0, i), wave(g, 1, j));
            return k == 0 ? -2 * pi * z : 2 * pi * exp(-k * z) / k;
        }
        default: {
            const double kx = wave(g, 0, i), ky = wave(g, 1, j), kz = wave(g, 2, l);
            const double k2 = kx * kx + ky * ky + kz * kz;
            return k2 > 0 ? 4 * pi / k2 : 0;
        }
    }
}

__global__ void green_table_kernel(GreenTableRecord g, double* table) {
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= g.t[0] * g.t[1] * g.t[2]) return;
    const long long l = e % g.t[2], j = (e / g.t[2]) % g.t[1], i = e / (g.t[1] * g.t[2]);
    table[e] = green_at(g, i, j, l);
}

// Rows of axis d: row r's first element (r / tb)·sa + (r % tb)·sb, its values
// sd apart (device_kernels.cpp RowWalk), taken apart on the host: indexing
// small arrays by d in a kernel puts them in local memory.
struct Rows {
    long long sa, sb, tb, sd;
};
Rows rows_of(const GreenTableRecord& g, int d) {
    const long long stride[3] = {g.t[1] * g.t[2], g.t[2], 1};
    const int a = d == 0 ? 1 : 0, b = 3 - d - a;
    return {stride[a], stride[b], g.t[b], stride[d]};
}
__device__ long long row_start(const Rows& w, long long r) { return (r / w.tb) * w.sa + (r % w.tb) * w.sb; }

// The row kernels and the fold take 2D and 3D grids, so that no thread
// divides a flat index (64-bit divisions and local arrays made them
// compute-bound: at 512^3 on an H100 a pass's chunks took 14-23 ms and the
// fold 37-50 ms, for 11 GB and 5 GB of traffic). Rows lie as
// device_kernels.hpp's row_place says: interleaved (value j of row q at
// j·count + q) along x and y, one row after another (q·length + j) along z.
// Along x and y a thread takes row q (threads: q) and values j = blockIdx.y,
// + gridDim.y, ... (its row found once); along z (row r starts at r·t_z = r·sb) a
// block takes rows q = blockIdx.y, ... and its threads the values j.
constexpr int row_blocks_y = 16;

__global__ void even_rows_kernel(Rows w, long long len, bool interleaved, long long first, long long count,
                                 const double* table, double* rows) {
    auto fold = [len](long long j) { return j <= len - j ? j : len - j; };
    if (interleaved) {
        const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (q >= count) return;
        const long long start = row_start(w, first + q);
        for (long long j = blockIdx.y; j < len; j += gridDim.y) rows[j * count + q] = table[start + fold(j) * w.sd];
        return;
    }
    const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= len) return;
    for (long long q = blockIdx.y; q < count; q += gridDim.y) rows[q * len + j] = table[(first + q) * w.sb + fold(j)];
}

__global__ void real_rows_kernel(Rows w, long long half, bool interleaved, long long first, long long count,
                                 const double* spectra, double* table) {
    if (interleaved) {
        const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (q >= count) return;
        const long long start = row_start(w, first + q);
        for (long long k = blockIdx.y; k < half; k += gridDim.y) table[start + k * w.sd] = spectra[2 * (k * count + q)];
        return;
    }
    const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (k >= half) return;
    for (long long q = blockIdx.y; q < count; q += gridDim.y) table[(first + q) * w.sb + k] = spectra[2 * (q * half + k)];
}

// The fold by output dimension q (the layout's axis[q]): its box's first
// index, the padded extent and the table's stride along that axis.
struct FoldDims {
    long long lo[3], m[3], ts[3], extent[3];
    double scale;
    bool single;
};
__device__ long long folded(long long v, long long m) { return v < m - v ? v : m - v; }
// Output point (a, b, c) of the layout's box, c fastest: threads along c,
// blocks along b and a (grid-strided beyond the grid's limits).
__global__ void fold_kernel(FoldDims f, const double* table, void* out) {
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= f.extent[2]) return;
    const long long kc = folded(f.lo[2] + c, f.m[2]) * f.ts[2];
    for (long long a = blockIdx.z; a < f.extent[0]; a += gridDim.z) {
        const long long ka = folded(f.lo[0] + a, f.m[0]) * f.ts[0] + kc;
        for (long long b = blockIdx.y; b < f.extent[1]; b += gridDim.y) {
            const long long e = (a * f.extent[1] + b) * f.extent[2] + c;
            const double v = f.scale * table[ka + folded(f.lo[1] + b, f.m[1]) * f.ts[1]];
            if (f.single) static_cast<float*>(out)[e] = float(v);
            else static_cast<double*>(out)[e] = v;
        }
    }
}

unsigned grid_limit(long long n, long long limit) { return unsigned(n < limit ? n : limit); }

}  // namespace

cudaError_t launch_fill_rho(const TestGridRecord& g, void* data, cudaStream_t stream) {
    const long long n = g.extent[0] * g.extent[1] * g.extent[2];
    if (n > 0) fill_rho_kernel<<<blocks_for(n), threads, 0, stream>>>(g, data);
    return cudaGetLastError();
}

cudaError_t launch_phi_errors(const TestGridRecord& g, const long long* planes, long long plane_count,
                              const void* data, double* partials, int blocks, cudaStream_t stream) {
    phi_errors_kernel<<<blocks, threads, 0, stream>>>(g, planes, plane_count, data, partials);
    return cudaGetLastError();
}

cudaError_t launch_green_table(const GreenTableRecord& g, double* table, cudaStream_t stream) {
    const long long n = g.t[0] * g.t[1] * g.t[2];
    if (n > 0) green_table_kernel<<<blocks_for(n), threads, 0, stream>>>(g, table);
    return cudaGetLastError();
}

cudaError_t launch_even_rows(const GreenTableRecord& g, int axis, bool interleaved, long long first, long long count,
                             const double* table, double* rows, cudaStream_t stream) {
    const long long len = 2 * (g.t[axis] - 1);
    if (count <= 0 || len <= 0) return cudaGetLastError();
    if (!interleaved && axis != 2) return cudaErrorInvalidValue;  // rows one after another: z's (r·t_z, contiguous)
    const dim3 grid = interleaved ? dim3(unsigned(blocks_for(count)), grid_limit(len, row_blocks_y))
                                  : dim3(unsigned(blocks_for(len)), grid_limit(count, 65535));
    even_rows_kernel<<<grid, threads, 0, stream>>>(rows_of(g, axis), len, interleaved, first, count, table, rows);
    return cudaGetLastError();
}

cudaError_t launch_real_rows(const GreenTableRecord& g, int axis, bool interleaved, long long first, long long count,
                             const double* spectra, double* table, cudaStream_t stream) {
    const long long half = g.t[axis];
    if (count <= 0 || half <= 0) return cudaGetLastError();
    if (!interleaved && axis != 2) return cudaErrorInvalidValue;  // rows one after another: z's (r·t_z, contiguous)
    const dim3 grid = interleaved ? dim3(unsigned(blocks_for(count)), grid_limit(half, row_blocks_y))
                                  : dim3(unsigned(blocks_for(half)), grid_limit(count, 65535));
    real_rows_kernel<<<grid, threads, 0, stream>>>(rows_of(g, axis), half, interleaved, first, count, spectra, table);
    return cudaGetLastError();
}

cudaError_t launch_fold(const GreenTableRecord& g, const FoldRecord& f, const double* table, void* out,
                        cudaStream_t stream) {
    if (f.extent[0] <= 0 || f.extent[1] <= 0 || f.extent[2] <= 0) return cudaGetLastError();
    const long long ts[3] = {g.t[1] * g.t[2], g.t[2], 1};
    FoldDims d{};
    for (int q = 0; q < 3; ++q) {
        const int axis = f.axis[q];
        d.lo[q] = f.lo[axis], d.m[q] = g.m[axis], d.ts[q] = ts[axis], d.extent[q] = f.extent[q];
    }
    d.scale = f.scale, d.single = f.single;
    const dim3 grid(unsigned(blocks_for(f.extent[2])), grid_limit(f.extent[1], 65535), grid_limit(f.extent[0], 65535));
    fold_kernel<<<grid, threads, 0, stream>>>(d, table, out);
    return cudaGetLastError();
}

}  // namespace fftune::poisson
