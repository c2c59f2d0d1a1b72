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

// Row r of axis d: its first element and the stride along d (device_kernels.cpp RowWalk).
struct Row {
    long long start, stride;
};
__device__ Row row_of(const GreenTableRecord& g, int d, long long r) {
    const long long stride[3] = {g.t[1] * g.t[2], g.t[2], 1};
    const int a = d == 0 ? 1 : 0, b = 3 - d - a;
    return {(r / g.t[b]) * stride[a] + (r % g.t[b]) * stride[b], stride[d]};
}

// Place e of a chunk of `count` rows of `length` values holds value j of row
// q (device_kernels.hpp row_place): interleaved, e = j·count + q, along x and
// y; one row after another, e = q·length + j, along z.
struct Place {
    long long q, j;
};
__device__ Place place_of(int d, long long count, long long length, long long e) {
    if (d != 2) return {e % count, e / count};
    return {e / length, e % length};
}

__global__ void even_rows_kernel(GreenTableRecord g, int d, long long first, long long count, const double* table,
                                 double* rows) {
    const long long len = 2 * (g.t[d] - 1);
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= count * len) return;
    const Place p = place_of(d, count, len, e);
    const Row row = row_of(g, d, first + p.q);
    rows[e] = table[row.start + (p.j <= len - p.j ? p.j : len - p.j) * row.stride];
}

__global__ void real_rows_kernel(GreenTableRecord g, int d, long long first, long long count, const double* spectra,
                                 double* table) {
    const long long half = g.t[d];
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= count * half) return;
    const Place p = place_of(d, count, half, e);
    const Row row = row_of(g, d, first + p.q);
    table[row.start + p.j * row.stride] = spectra[2 * e];
}

__global__ void fold_kernel(GreenTableRecord g, FoldRecord f, const double* table, void* out) {
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= f.extent[0] * f.extent[1] * f.extent[2]) return;
    const long long a[3] = {e / (f.extent[1] * f.extent[2]), (e / f.extent[2]) % f.extent[1], e % f.extent[2]};
    long long k[3];
    for (int q = 0; q < 3; ++q) {
        const int d = f.axis[q];
        const long long v = f.lo[d] + a[q];
        k[d] = min(v, g.m[d] - v);
    }
    const double v = f.scale * table[(k[0] * g.t[1] + k[1]) * g.t[2] + k[2]];
    if (f.single) static_cast<float*>(out)[e] = float(v);
    else static_cast<double*>(out)[e] = v;
}

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

cudaError_t launch_even_rows(const GreenTableRecord& g, int axis, long long first, long long count,
                             const double* table, double* rows, cudaStream_t stream) {
    const long long n = count * 2 * (g.t[axis] - 1);
    if (n > 0) even_rows_kernel<<<blocks_for(n), threads, 0, stream>>>(g, axis, first, count, table, rows);
    return cudaGetLastError();
}

cudaError_t launch_real_rows(const GreenTableRecord& g, int axis, long long first, long long count,
                             const double* spectra, double* table, cudaStream_t stream) {
    const long long n = count * g.t[axis];
    if (n > 0) real_rows_kernel<<<blocks_for(n), threads, 0, stream>>>(g, axis, first, count, spectra, table);
    return cudaGetLastError();
}

cudaError_t launch_fold(const GreenTableRecord& g, const FoldRecord& f, const double* table, void* out,
                        cudaStream_t stream) {
    const long long n = f.extent[0] * f.extent[1] * f.extent[2];
    if (n > 0) fold_kernel<<<blocks_for(n), threads, 0, stream>>>(g, f, table, out);
    return cudaGetLastError();
}

}  // namespace fftune::poisson
