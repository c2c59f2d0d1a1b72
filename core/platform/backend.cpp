#include "core/platform/backend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fftune {

FFTUNE_DEFINE_REGISTRY(Backend);

Buffer::Buffer(Backend& backend, std::size_t bytes, bool host)
    : backend_(&backend), bytes_(bytes), host_(host) {
    // Allocate at least one byte so that empty boxes still get a valid pointer.
    const std::size_t n = bytes == 0 ? 1 : bytes;
    ptr_ = host ? backend.allocate_host(n) : backend.allocate(n);
}

Buffer::~Buffer() {
    if (give_back_) {
        give_back_();
        return;
    }
    if (!ptr_) return;
    if (host_)
        backend_->deallocate_host(ptr_);
    else
        backend_->deallocate(ptr_);
}

namespace {

class StandaloneFft final : public FftPlan {
public:
    StandaloneFft(Backend& backend, std::unique_ptr<FftPlan> plan) : plan_(std::move(plan)) {
        if (plan_->work_bytes() > 0) {
            area_ = Buffer(backend, plan_->work_bytes());
            plan_->set_work_area(area_.data());
        }
    }
    void execute(void* in, void* out) override { plan_->execute(in, out); }

private:
    std::unique_ptr<FftPlan> plan_;
    Buffer area_;
};

}  // namespace

namespace {
template <class T>
void fill_on_host(Backend& be, void* out, const Layout& layout, const SeparableTerms& terms) {
    const Box3& b = layout.box;
    std::vector<T> host(b.count());
    for (index_t x = b.lo[0]; x < b.hi[0]; ++x)
        for (index_t y = b.lo[1]; y < b.hi[1]; ++y) {
            std::vector<std::complex<double>> row;
            for (const auto& t : terms.axis) row.push_back(t[0][x - b.lo[0]] * t[1][y - b.lo[1]]);
            for (index_t z = b.lo[2]; z < b.hi[2]; ++z) {
                double v = 0;
                for (std::size_t m = 0; m < row.size(); ++m) v += (row[m] * terms.axis[m][2][z - b.lo[2]]).real();
                host[layout.offset_of({x, y, z})] = static_cast<T>(v);
            }
        }
    be.copy_from_host(out, host.data(), host.size() * sizeof(T));
}
}  // namespace

void Backend::zero(void* p, std::size_t bytes) {
    const std::vector<char> zeros(std::min<std::size_t>(bytes, std::size_t(64) << 20), 0);
    for (std::size_t done = 0; done < bytes; done += zeros.size())
        copy_from_host(static_cast<char*>(p) + done, zeros.data(), std::min(zeros.size(), bytes - done));
}

void Backend::fill_separable(void* out, const Layout& layout, const SeparableTerms& terms, Precision precision) {
    if (layout.box.empty()) return;
    if (precision == Precision::single) fill_on_host<float>(*this, out, layout, terms);
    else fill_on_host<double>(*this, out, layout, terms);
}

namespace {
template <class T>
std::array<double, 2> max_difference_on_host(Backend& be, const void* a, double scale, const void* b, index_t count) {
    std::array<double, 2> out{0, 0};
    const index_t chunk = index_t(std::min<std::size_t>(std::size_t(count), (std::size_t(16) << 20) / sizeof(T)));
    std::vector<T> ha(std::size_t(std::max<index_t>(chunk, 1))), hb(ha.size());
    for (index_t done = 0; done < count; done += chunk) {
        const index_t n = std::min(chunk, count - done);
        be.copy_to_host(ha.data(), static_cast<const T*>(a) + done, std::size_t(n) * sizeof(T));
        be.copy_to_host(hb.data(), static_cast<const T*>(b) + done, std::size_t(n) * sizeof(T));
        be.synchronize();
        for (index_t i = 0; i < n; ++i) {
            double d = std::abs(double(ha[std::size_t(i)]) * scale - double(hb[std::size_t(i)]));
            if (std::isnan(d)) d = std::numeric_limits<double>::infinity();
            out[0] = std::max(out[0], d);
            out[1] = std::max(out[1], std::abs(double(hb[std::size_t(i)])));
        }
    }
    return out;
}
}  // namespace

std::array<double, 2> Backend::max_difference(const void* a, double scale, const void* b, index_t count,
                                              Precision precision) {
    if (precision == Precision::single) return max_difference_on_host<float>(*this, a, scale, b, count);
    return max_difference_on_host<double>(*this, a, scale, b, count);
}

std::unique_ptr<FftPlan> make_standalone_fft(Backend& backend, const FftDescriptor& desc) {
    return std::make_unique<StandaloneFft>(backend, backend.make_fft(desc));
}

namespace {
constexpr index_t warm_n = 8, warm_batches = 2;
}  // namespace

std::vector<FftDescriptor> warm_up_descriptors(Precision precision) {
    std::vector<FftDescriptor> out;
    for (int rank = 1; rank <= 3; ++rank)
        for (FftKind kind : {FftKind::r2c, FftKind::c2r, FftKind::c2c_forward, FftKind::c2c_backward}) {
            FftDescriptor d;
            d.precision = precision;
            d.kind = kind;
            // Row-major extents; the last axis of a real side is n, of a complex one n/2+1 (r2c, c2r).
            const index_t half = warm_n / 2 + 1;
            const index_t in_last = kind == FftKind::c2r ? half : warm_n;
            const index_t out_last = kind == FftKind::r2c ? half : warm_n;
            index_t in_stride = 1, out_stride = 1;
            d.dims.resize(static_cast<std::size_t>(rank));
            for (int a = rank - 1; a >= 0; --a) {
                d.dims[static_cast<std::size_t>(a)] = FftDim{warm_n, in_stride, out_stride};
                in_stride *= a == rank - 1 ? in_last : warm_n;
                out_stride *= a == rank - 1 ? out_last : warm_n;
            }
            d.batch = {FftDim{warm_batches, in_stride, out_stride}};
            d.in_elements = warm_batches * in_stride;
            d.out_elements = warm_batches * out_stride;
            out.push_back(std::move(d));
        }
    return out;
}

void warm_up_every_kind(Backend& backend, Precision precision) {
    // Every array fits warm_batches * n^3 complex values.
    const index_t count = warm_batches * warm_n * warm_n * warm_n;
    const std::size_t bytes = static_cast<std::size_t>(count) * complex_bytes(precision);
    Buffer a(backend, bytes), b(backend, bytes);
    backend.zero(a.data(), bytes);
    backend.zero(b.data(), bytes);
    for (const FftDescriptor& d : warm_up_descriptors(precision)) make_standalone_fft(backend, d)->execute(a.data(), b.data());
    // A copy with gaps on both sides, as a reshape's pack and unpack make.
    const Layout cube{Box3{{0, 0, 0}, {warm_n, warm_n, warm_n}}, order_xyz};
    const Box3 inner{{1, 1, 1}, {warm_n - 1, warm_n - 1, warm_n - 1}};
    backend.copy_region(b.data(), region_of(cube, inner), a.data(), region_of(cube, inner), real_bytes(precision));
    SeparableTerms terms;
    terms.axis.push_back({std::vector<std::complex<double>>(warm_n, 1.0), std::vector<std::complex<double>>(warm_n, 1.0),
                          std::vector<std::complex<double>>(warm_n, 1.0)});
    backend.fill_separable(a.data(), cube, terms, precision);
    backend.max_difference(a.data(), 1.0, b.data(), cube.box.count(), precision);
    backend.synchronize();
}

}  // namespace fftune
