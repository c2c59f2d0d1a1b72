// The cuda backend's PoissonKernels (device_kernels.hpp): the launchers of
// device_kernels_cuda.cu on the backend's stream.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/platform/cuda_check.hpp"
#include "families/poisson/device_kernels.hpp"
#include "families/poisson/device_kernels_launch.hpp"

namespace fftune::poisson {
namespace {

static_assert(int(Boundary::free) == boundary_free && int(Boundary::wire) == boundary_wire &&
                  int(Boundary::surface) == boundary_surface && int(Boundary::periodic) == boundary_periodic,
              "BoundaryCode mirrors Boundary");

class CudaPoissonKernels final : public PoissonKernels {
public:
    std::optional<std::string> not_applicable(Boundary b) const override {
        if (b == Boundary::wire)
            return "the wire problem's Green's function (K0) and solution (E1) have no CUDA device functions";
        return std::nullopt;
    }
    void fill_rho(Backend& be, const GridArray& a, const TestProblem& t, Precision precision) override {
        check(launch_fill_rho(record(a, t, precision), a.data, stream(be)), "poisson rho kernel");
    }
    PhiErrors phi_errors(Backend& be, const GridArray& a, const std::vector<index_t>& planes, const TestProblem& t,
                         Precision precision) override {
        PhiErrors out;
        if (planes.empty() || a.box.empty()) return out;
        const long long points = (long long)planes.size() * a.box.extent(1) * a.box.extent(2);
        const int blocks = int(std::clamp<long long>((points + 255) / 256, 1, 1024));
        Buffer on_device(be, planes.size() * sizeof(long long) + std::size_t(blocks) * 5 * sizeof(double));
        auto* device_planes = on_device.as<long long>();
        auto* partials = reinterpret_cast<double*>(device_planes + planes.size());
        const std::vector<long long> p(planes.begin(), planes.end());
        be.copy_from_host(device_planes, p.data(), p.size() * sizeof(long long));
        check(launch_phi_errors(record(a, t, precision), device_planes, (long long)p.size(), a.data, partials, blocks,
                                stream(be)),
              "poisson phi error kernel");
        std::vector<double> host(std::size_t(blocks) * 5);
        be.copy_to_host(host.data(), partials, host.size() * sizeof(double));
        be.synchronize();
        for (int k = 0; k < blocks; ++k) {  // blocks in order: the same sums every run
            const double* q = host.data() + 5 * k;
            out.max_error = std::max(out.max_error, q[0]);
            out.max_exact = std::max(out.max_exact, q[1]);
            out.not_finite = out.not_finite || q[2] > 0;
            out.sum_error2 += q[3];
            out.sum_exact2 += q[4];
        }
        return out;
    }
    void green_table(Backend& be, double* table, const GreenTable& g) override {
        check(launch_green_table(record(g), table, stream(be)), "poisson green table kernel");
    }
    void even_rows(Backend& be, double* rows, const double* table, const GreenTable& g, int axis, index_t first,
                   index_t count) override {
        check(launch_even_rows(record(g), axis, rows_interleaved(axis), first, count, table, rows, stream(be)), "poisson even rows kernel");
    }
    void real_rows(Backend& be, double* table, const double* spectra, const GreenTable& g, int axis, index_t first,
                   index_t count) override {
        check(launch_real_rows(record(g), axis, rows_interleaved(axis), first, count, spectra, table, stream(be)), "poisson real rows kernel");
    }
    void fold(Backend& be, void* out, const Layout& layout, const double* table, const GreenTable& g, double scale,
              Precision precision) override {
        FoldRecord f{};
        for (int k = 0; k < 3; ++k) {
            f.lo[k] = layout.box.lo[k];
            f.axis[k] = layout.order[k];
            f.extent[k] = layout.box.extent(layout.order[k]);
        }
        f.scale = scale;
        f.single = precision == Precision::single;
        check(launch_fold(record(g), f, table, out, stream(be)), "poisson kernel fold");
    }

private:
    static int code(Boundary b) { return int(b); }  // BoundaryCode's values (asserted below)
    static TestGridRecord record(const GridArray& a, const TestProblem& t, Precision precision) {
        TestGridRecord r{};
        for (int d = 0; d < 3; ++d) {
            r.n[d] = t.n[d];
            r.centre[d] = charge_centre[d];
            r.lo[d] = a.box.lo[d];
            r.extent[d] = a.box.extent(d);
            r.stride[d] = a.region.stride[d];
        }
        r.offset = a.region.offset;
        r.boundary = code(t.boundary);
        r.sigma = charge_width;
        r.envelope = test_envelope;
        r.amplitude = test_amplitude;
        r.single = precision == Precision::single;
        return r;
    }
    static GreenTableRecord record(const GreenTable& g) {
        GreenTableRecord r{};
        for (int d = 0; d < 3; ++d) r.t[d] = g.t[d], r.m[d] = g.m[d];
        r.h = g.h;
        r.boundary = code(g.boundary);
        r.regularized4 = g.kernel == Kernel::regularized4;
        r.eps = regularization_cells * g.h;
        r.origin = g.boundary == Boundary::free ? green_value(g, 0, 0, 0) : 0;
        return r;
    }
    static cudaStream_t stream(Backend& be) { return static_cast<cudaStream_t>(be.native_stream()); }
};

const bool registered = register_variant<PoissonKernels, CudaPoissonKernels>("cuda");

}  // namespace
}  // namespace fftune::poisson
