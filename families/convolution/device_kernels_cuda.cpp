// The cuda backend's ConvolutionKernels (device_kernels.hpp): the launchers
// of device_kernels_cuda.cu on the backend's stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/platform/cuda_check.hpp"
#include "families/convolution/device_kernels_launch.hpp"
#include "families/convolution/device_kernels.hpp"

namespace fftune::convolution {
namespace {

static_assert(sizeof(Cell) == sizeof(CellRecord) && offsetof(Cell, rate) == offsetof(CellRecord, rate) &&
                  sizeof(std::size_t) == sizeof(unsigned long long) && sizeof(index_t) == sizeof(long long),
              "CellRecord mirrors Cell");
static_assert(sizeof(TilingPlane) == sizeof(TilingPlaneRecord) &&
                  offsetof(TilingPlane, start) == offsetof(TilingPlaneRecord, start),
              "TilingPlaneRecord mirrors TilingPlane");

class CudaConvolutionKernels final : public ConvolutionKernels {
public:
    void fill_green(Backend& be, double* out, const Layout& l, const Size3& n, GreenKernel k, double scale) override {
        const auto st = l.strides();
        GreenFill f{};
        for (int a = 0; a < 3; ++a)
            f.lo[a] = l.box.lo[a], f.extent[a] = l.box.extent(a), f.stride[a] = st[a], f.n[a] = n[a];
        f.base = l.offset_of(l.box.lo);
        f.inverse_r = k == GreenKernel::inverse_r;
        f.scale = scale;
        check(launch_green_fill(f, out, stream(be)), "green fill kernel");
    }
    void fill_input(Backend& be, double* out, const Layout& l, const Box3& r, const Size3& n, InputField field) override {
        const auto st = l.strides();
        InputFill f{};
        for (int a = 0; a < 3; ++a) f.lo[a] = r.lo[a], f.extent[a] = r.extent(a), f.stride[a] = st[a], f.n[a] = n[a];
        f.base = r.empty() ? 0 : l.offset_of(r.lo);
        f.noise = field == InputField::noise;
        check(launch_input_fill(f, out, stream(be)), "input fill kernel");
    }
    void direct_sums(Backend& be, const double* x, const Size3& n, GreenKernel k, const index_t* probes,
                     std::size_t count, double* plane_sums) override {
        const long long nn[3] = {n[0], n[1], n[2]};
        check(launch_direct_sums(x, nn, k == GreenKernel::inverse_r, reinterpret_cast<const long long*>(probes),
                                 (long long)count, plane_sums, stream(be)),
              "direct sums kernel");
    }
    void fill_tiling(Backend& be, const Tiling& t, DeviceTiling& out) override {
        TilingRecord r{};
        for (int a = 0; a < 3; ++a)
            r.region_lo[a] = t.region.lo[a], r.region_hi[a] = t.region.hi[a], r.blocks[a] = t.blocks[std::size_t(a)];
        r.cell = t.scheme.cell;
        r.count = (long long)t.count();
        r.dropped = t.dropped ? (long long)*t.dropped : -1;
        r.dropped_samples = (long long)t.dropped_samples;
        r.samples = t.samples();
        check(launch_make_tiling(r, static_cast<const TilingPlaneRecord*>(out.planes.data()),
                                 static_cast<CellRecord*>(out.cells.data()),
                                 static_cast<unsigned long long*>(out.offsets.data()), stream(be)),
              "make tiling kernel");
    }
    void sample(Backend& be, const DeviceTiling& t, const GridView& v, double* out) override {
        const GridRecord g{v.data, v.base, {v.stride[0], v.stride[1], v.stride[2]}};
        check(launch_octree_sample(cells(t), offsets(t), (long long)t.count, int(t.max_points), g, out, stream(be)),
              "octree sample kernel");
    }
    void check_values(Backend& be, const GridView& v, const Box3& region, const index_t* given,
                      std::size_t given_count, const Box3& domain, std::size_t random, double* out) override {
        const GridRecord g{v.data, v.base, {v.stride[0], v.stride[1], v.stride[2]}};
        CheckPointsRecord c{reinterpret_cast<const long long*>(given), (long long)given_count, (long long)random, {}, {}, {}, {}};
        for (int a = 0; a < 3; ++a)
            c.region_lo[a] = region.lo[a], c.region_hi[a] = region.hi[a], c.domain_lo[a] = domain.lo[a],
            c.domain_extent[a] = domain.extent(a);
        check(launch_check_values(g, c, out, stream(be)), "check values kernel");
    }
    void interpolate_add(Backend& be, const DeviceTiling& t, const double* samples, const Box3& region,
                         double* out) override {
        const long long lo[3] = {region.lo[0], region.lo[1], region.lo[2]};
        check(launch_octree_interpolate_add(cells(t), offsets(t), (long long)t.count, int(t.max_points), samples, lo,
                                            region.extent(1), region.extent(2), out, stream(be)),
              "octree interpolation kernel");
    }

    Comparison compare(Backend& be, const double* y, const double* exact, std::size_t count) override {
        Comparison c;
        if (count == 0) return c;
        const int blocks = int(std::min<std::size_t>((count + 255) / 256, 1024));
        Buffer partials(be, std::size_t(blocks) * 4 * sizeof(double));
        check(launch_compare(y, exact, (long long)count, partials.as<double>(), blocks, stream(be)), "compare kernel");
        std::vector<double> host(std::size_t(blocks) * 4);
        be.copy_to_host(host.data(), partials.data(), host.size() * sizeof(double));
        be.synchronize();
        for (int k = 0; k < blocks; ++k) {  // blocks in order: the same sums every run
            const double* q = host.data() + 4 * k;
            c.sum_error2 += q[0], c.sum_exact2 += q[1];
            c.not_finite = c.not_finite || q[2] > 0;
            c.max_exact = std::max(c.max_exact, q[3]);
        }
        return c;
    }

private:
    static const CellRecord* cells(const DeviceTiling& t) { return static_cast<const CellRecord*>(t.cells.data()); }
    static const unsigned long long* offsets(const DeviceTiling& t) {
        return static_cast<const unsigned long long*>(t.offsets.data());
    }
    static cudaStream_t stream(Backend& be) { return static_cast<cudaStream_t>(be.native_stream()); }
};

const bool registered = register_variant<ConvolutionKernels, CudaConvolutionKernels>("cuda");

}  // namespace
}  // namespace fftune::convolution
