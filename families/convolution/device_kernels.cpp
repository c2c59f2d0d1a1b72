#include "families/convolution/device_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "core/platform/parallel.hpp"
#include "core/run/testcase_parser.hpp"

namespace fftune {
FFTUNE_DEFINE_REGISTRY(convolution::ConvolutionKernels);
}

namespace fftune::convolution {

InputField input_field(const std::string& name) {
    if (name == "blobs") return InputField::blobs;
    if (name == "noise") return InputField::noise;
    throw std::invalid_argument("unknown input '" + name + "' (allowed: blobs, noise)");
}

GreenKernel green_kernel(const std::string& name) {
    if (name == "gaussian") return GreenKernel::gaussian;
    if (name == "inverse_r") return GreenKernel::inverse_r;
    throw std::invalid_argument("unknown kernel '" + name + "' (allowed: gaussian, inverse_r)");
}

std::optional<SeparableTerms> separable_spectrum(GreenKernel kernel, const Size3& n, const Box3& box, double scale) {
    if (kernel != GreenKernel::gaussian) return std::nullopt;
    SeparableTerms terms;
    terms.axis.resize(1);
    for (int a = 0; a < 3; ++a) {
        const index_t m = 2 * n[a];
        // g_a(i) = g(i, 0, 0) for 0 <= i <= n_a until it underflows to 0 (i > 77): the terms after it are 0 too.
        std::vector<double> g;
        for (index_t i = 0; i <= n[a]; ++i) {
            const double v = green(kernel, i, 0, 0);
            if (v == 0) break;
            g.push_back(v);
        }
        std::vector<double> c(static_cast<std::size_t>(m));  // cos(2π j/M_a)
        for (index_t j = 0; j < m; ++j) c[std::size_t(j)] = std::cos(2 * std::numbers::pi * double(j) / double(m));
        const index_t interior = std::min<index_t>(index_t(g.size()), n[a]);  // i < n_a
        auto& out = terms.axis[0][std::size_t(a)];
        out.resize(std::size_t(box.extent(a)));
        for (index_t k = box.lo[a]; k < box.hi[a]; ++k) {
            double s = g[0];
            for (index_t i = 1; i < interior; ++i) s += 2 * g[std::size_t(i)] * c[std::size_t((k * i) % m)];
            if (index_t(g.size()) > n[a]) s += g[std::size_t(n[a])] * (k % 2 ? -1.0 : 1.0);  // the offset −n_a
            out[std::size_t(k - box.lo[a])] = (a == 0 ? scale : 1.0) * s;
        }
    }
    return terms;
}

DeviceTiling::DeviceTiling(Backend& backend, ConvolutionKernels& kernels, const Tiling& t)
    : count(t.count()), samples(t.samples()), max_points(t.max_points()) {
    cells = Buffer(backend, std::max<std::size_t>(count, 1) * sizeof(Cell));
    offsets = Buffer(backend, (count + 1) * sizeof(std::size_t));
    std::vector<TilingPlane> p(t.rates.size());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = {t.rates[i], t.plane_start[i]};
    planes = Buffer(backend, std::max<std::size_t>(p.size(), 1) * sizeof(TilingPlane));
    if (!p.empty()) backend.copy_from_host(planes.data(), p.data(), p.size() * sizeof(TilingPlane));
    kernels.fill_tiling(backend, t, *this);
}

std::size_t DeviceTiling::bytes_for(const Tiling& t) {
    return std::max<std::size_t>(t.count(), 1) * sizeof(Cell) + (t.count() + 1) * sizeof(std::size_t) +
           std::max<std::size_t>(t.rates.size(), 1) * sizeof(TilingPlane);
}

Comparison compare_points(const double* y, const double* exact, const std::vector<std::size_t>& at) {
    Comparison c;
    for (const std::size_t k : at) {
        const double e = y[k] - exact[k];
        c.max_exact = std::max(c.max_exact, std::abs(exact[k]));
        if (!std::isfinite(e)) c.not_finite = true;
        else c.sum_error2 += e * e, c.sum_exact2 += exact[k] * exact[k];
    }
    return c;
}

namespace {
// The CPU oracle: the host functions, on host memory.
class HostConvolutionKernels final : public ConvolutionKernels {
public:
    void fill_input(Backend&, double* out, const Layout& l, const Box3& r, const Size3& n, InputField f) override {
        parallel_for(r.lo[0], r.hi[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = r.lo[1]; j < r.hi[1]; ++j)
                    for (index_t z = r.lo[2]; z < r.hi[2]; ++z) out[l.offset_of({i, j, z})] = input_value(f, n, i, j, z);
        });
    }
    // Planes in parallel, each summed in (b, c) order.
    void direct_sums(Backend&, const double* x, const Size3& n, GreenKernel k, const index_t* probes, std::size_t count,
                     double* plane_sums) override {
        parallel_for(0, n[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t a = lo; a < hi; ++a) {
                const double* xs = x + a * n[1] * n[2];
                for (std::size_t s = 0; s < count; ++s) {
                    const index_t* p = probes + 3 * s;
                    double v = 0;
                    for (index_t b = 0; b < n[1]; ++b)
                        for (index_t c = 0; c < n[2]; ++c) v += xs[b * n[2] + c] * green(k, p[0] - a, p[1] - b, p[2] - c);
                    plane_sums[s * std::size_t(n[0]) + std::size_t(a)] = v;
                }
            }
        });
    }
    void fill_green(Backend&, double* out, const Layout& l, const Size3& n, GreenKernel k, double scale) override {
        const Size3 m{2 * n[0], 2 * n[1], 2 * n[2]};
        auto d = [&](int a, index_t i) { return i < n[a] ? i : i - m[a]; };
        parallel_for(l.box.lo[0], l.box.hi[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = l.box.lo[1]; j < l.box.hi[1]; ++j)
                    for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z)
                        out[l.offset_of({i, j, z})] =
                            i < m[0] && j < m[1] && z < m[2] ? scale * green(k, d(0, i), d(1, j), d(2, z)) : 0.0;
        });
    }
    // tile()'s loops (the oracle of the cuda kernel's formulas).
    void fill_tiling(Backend&, const Tiling& t, DeviceTiling& out) override {
        const auto cells = tile(t.region, t.source, t.scheme);
        const auto off = sample_offsets(cells);
        if (cells.size() != t.count() || off.back() != t.samples())
            throw std::logic_error("fill_tiling: the tiling's counts are not tile()'s");
        std::copy(cells.begin(), cells.end(), static_cast<Cell*>(out.cells.data()));
        std::copy(off.begin(), off.end(), static_cast<std::size_t*>(out.offsets.data()));
    }
    void sample(Backend&, const DeviceTiling& t, const GridView& value, double* out) override {
        convolution::sample(t.cell_data(), t.offset_data(), t.count, value, out);
    }
    void check_values(Backend&, const GridView& value, const Box3& region, const index_t* given,
                      std::size_t given_count, const Box3& domain, std::size_t random, double* out) override {
        auto at = [&](std::size_t k, const std::array<index_t, 3>& p) {
            out[k] = region.contains(p) ? value(p[0], p[1], p[2]) : 0.0;
        };
        for (std::size_t k = 0; k < given_count; ++k) at(k, {given[3 * k], given[3 * k + 1], given[3 * k + 2]});
        for (std::size_t k = 0; k < random; ++k) at(given_count + k, random_check_point(domain, k));
    }
    void interpolate_add(Backend&, const DeviceTiling& t, const double* samples, const Box3& region,
                         double* out) override {
        convolution::interpolate_add(t.cell_data(), t.offset_data(), t.count, samples, region, out);
    }
    // In order, one pass: the sums of the host code before (bit for bit).
    Comparison compare(Backend&, const double* y, const double* exact, std::size_t count) override {
        Comparison c;
        for (std::size_t i = 0; i < count; ++i) {
            const double e = y[i] - exact[i];
            if (!std::isfinite(e)) c.not_finite = true;
            else c.sum_error2 += e * e, c.sum_exact2 += exact[i] * exact[i];
            c.max_exact = std::max(c.max_exact, std::abs(exact[i]));
        }
        return c;
    }
};
const bool registered = register_variant<ConvolutionKernels, HostConvolutionKernels>("fftw");
}  // namespace

std::unique_ptr<ConvolutionKernels> kernels_for(const Backend& backend) {
    const auto& r = Registry<ConvolutionKernels>::instance();
    if (r.contains(backend.name())) return r.create(backend.name());
    if (!backend.device_memory()) return r.create("fftw");
    throw Unsupported("no octree kernels for backend '" + backend.name() + "' (have: " +
                      TestcaseParser::list(r.names()) + ")");
}

}  // namespace fftune::convolution
