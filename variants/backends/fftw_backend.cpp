// CPU backend: host memory, strided copies, FFTW guru64 plans, host clocks.
// Every operation is synchronous, so host clocks around a phase time exactly that phase.
#include <fftw3.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "core/platform/backend.hpp"
#include "core/base/registry.hpp"

namespace fftune {
namespace {

template <class R>
struct Fftw;

template <>
struct Fftw<double> {
    using complex = fftw_complex;
    using plan = fftw_plan;
    static plan dft(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, complex* in,
                    complex* out, int sign, unsigned f) {
        return fftw_plan_guru64_dft(r, d, hr, hd, in, out, sign, f);
    }
    static plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, double* in,
                    complex* out, unsigned f) {
        return fftw_plan_guru64_dft_r2c(r, d, hr, hd, in, out, f);
    }
    static plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, complex* in,
                    double* out, unsigned f) {
        return fftw_plan_guru64_dft_c2r(r, d, hr, hd, in, out, f);
    }
    static void exec_dft(plan p, void* in, void* out) {
        fftw_execute_dft(p, static_cast<complex*>(in), static_cast<complex*>(out));
    }
    static void exec_r2c(plan p, void* in, void* out) {
        fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<complex*>(out));
    }
    static void exec_c2r(plan p, void* in, void* out) {
        fftw_execute_dft_c2r(p, static_cast<complex*>(in), static_cast<double*>(out));
    }
    static void destroy(plan p) { fftw_destroy_plan(p); }
    static int alignment(void* p) { return fftw_alignment_of(static_cast<double*>(p)); }
};

template <>
struct Fftw<float> {
    using complex = fftwf_complex;
    using plan = fftwf_plan;
    static plan dft(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, complex* in,
                    complex* out, int sign, unsigned f) {
        return fftwf_plan_guru64_dft(r, d, hr, hd, in, out, sign, f);
    }
    static plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, float* in,
                    complex* out, unsigned f) {
        return fftwf_plan_guru64_dft_r2c(r, d, hr, hd, in, out, f);
    }
    static plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, complex* in,
                    float* out, unsigned f) {
        return fftwf_plan_guru64_dft_c2r(r, d, hr, hd, in, out, f);
    }
    static void exec_dft(plan p, void* in, void* out) {
        fftwf_execute_dft(p, static_cast<complex*>(in), static_cast<complex*>(out));
    }
    static void exec_r2c(plan p, void* in, void* out) {
        fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<complex*>(out));
    }
    static void exec_c2r(plan p, void* in, void* out) {
        fftwf_execute_dft_c2r(p, static_cast<complex*>(in), static_cast<float*>(out));
    }
    static void destroy(plan p) { fftwf_destroy_plan(p); }
    static int alignment(void* p) { return fftwf_alignment_of(static_cast<float*>(p)); }
};

template <class R>
class FftwPlan final : public FftPlan {
    using F = Fftw<R>;

public:
    explicit FftwPlan(const FftDescriptor& desc) : desc_(desc) {
        // FFTW_ESTIMATE neither reads nor writes the arrays while planning; they
        // only fix the alignment the plan assumes (fftw_malloc: SIMD-aligned).
        probe_in_ = fftw_malloc(64);
        probe_out_ = fftw_malloc(64);
        plans_[0][0] = make(FFTW_ESTIMATE, false);
    }
    ~FftwPlan() override {
        for (auto& by_alignment : plans_)
            for (auto p : by_alignment)
                if (p) F::destroy(p);
        fftw_free(probe_in_);
        fftw_free(probe_out_);
    }

    void execute(void* in, void* out) override {
        // New-array execution needs the planning arrays' alignment and whether
        // they were one array: user arrays that differ get a plan made with
        // FFTW_UNALIGNED, or in place, each once.
        const bool in_place = in == out;
        if (in_place && (desc_.kind == FftKind::r2c || desc_.kind == FftKind::c2r))
            throw std::logic_error("an FFTW r2c or c2r plan runs out of place only");
        const bool unaligned = F::alignment(in) != 0 || F::alignment(out) != 0;
        typename F::plan& p = plans_[in_place][unaligned];
        if (!p) p = make(FFTW_ESTIMATE | (unaligned ? FFTW_UNALIGNED : 0u), in_place);
        switch (desc_.kind) {
            case FftKind::r2c: F::exec_r2c(p, in, out); break;
            case FftKind::c2r: F::exec_c2r(p, in, out); break;
            default: F::exec_dft(p, in, out); break;
        }
    }

private:
    typename F::plan make(unsigned flags, bool in_place) {
        auto to_iodims = [](const std::vector<FftDim>& v) {
            std::vector<fftw_iodim64> out;
            for (const auto& d : v) out.push_back({d.n, d.in_stride, d.out_stride});
            return out;
        };
        const auto dims = to_iodims(desc_.dims);
        const auto batch = to_iodims(desc_.batch);
        const int r = static_cast<int>(dims.size()), hr = static_cast<int>(batch.size());
        auto* cin = static_cast<typename F::complex*>(probe_in_);
        auto* cout = static_cast<typename F::complex*>(in_place ? probe_in_ : probe_out_);
        const unsigned keep = in_place ? 0u : unsigned(FFTW_PRESERVE_INPUT);  // in place overwrites it anyway
        typename F::plan p{};
        switch (desc_.kind) {
            case FftKind::r2c:
                p = F::r2c(r, dims.data(), hr, batch.data(), static_cast<R*>(probe_in_), cout,
                           flags | FFTW_PRESERVE_INPUT);
                break;
            case FftKind::c2r:
                p = F::c2r(r, dims.data(), hr, batch.data(), cin, static_cast<R*>(probe_out_),
                           flags | FFTW_DESTROY_INPUT);
                break;
            case FftKind::c2c_forward:
                p = F::dft(r, dims.data(), hr, batch.data(), cin, cout, FFTW_FORWARD, flags | keep);
                break;
            case FftKind::c2c_backward:
                p = F::dft(r, dims.data(), hr, batch.data(), cin, cout, FFTW_BACKWARD, flags | keep);
                break;
        }
        if (!p) throw std::runtime_error(fmt::format("FFTW could not plan a rank-{} transform "
                                                     "with {} batch dimensions", r, hr));
        return p;
    }

    FftDescriptor desc_;
    void* probe_in_ = nullptr;
    void* probe_out_ = nullptr;
    typename F::plan plans_[2][2]{};  // [in place][unaligned]
};

class HostClock final : public PhaseClock {
public:
    void start() override { t0_ = std::chrono::steady_clock::now(); }
    void stop() override {
        total_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_)
                      .count();
    }
    double elapsed_ms() override { return total_; }
    void reset() override { total_ = 0; }

private:
    std::chrono::steady_clock::time_point t0_{};
    double total_ = 0;
};

template <std::size_t N>
struct Elem {
    unsigned char b[N];
};

// Strided 3D copy; the innermost dimension is a memcpy when both sides are dense.
template <std::size_t N>
void copy_typed(void* dst, const StridedRegion& d, const void* src, const StridedRegion& s) {
    auto* out = static_cast<Elem<N>*>(dst) + d.offset;
    const auto* in = static_cast<const Elem<N>*>(src) + s.offset;
    for (index_t i = 0; i < d.extent[0]; ++i)
        for (index_t j = 0; j < d.extent[1]; ++j) {
            auto* o = out + i * d.stride[0] + j * d.stride[1];
            const auto* p = in + i * s.stride[0] + j * s.stride[1];
            if (d.stride[2] == 1 && s.stride[2] == 1)
                std::memcpy(o, p, d.extent[2] * N);
            else
                for (index_t k = 0; k < d.extent[2]; ++k) o[k * d.stride[2]] = p[k * s.stride[2]];
        }
}

class FftwBackend final : public Backend {
public:
    std::string name() const override { return "fftw"; }
    std::vector<std::pair<std::string, std::string>> versions() const override {
        return {{"fftw", fftw_version}};
    }
    bool device_memory() const override { return false; }

    void* allocate(std::size_t bytes) override {
        void* p = fftw_malloc(bytes);
        if (!p) throw std::bad_alloc();
        return p;
    }
    void deallocate(void* p) override { fftw_free(p); }
    void* allocate_host(std::size_t bytes) override { return allocate(bytes); }
    void deallocate_host(void* p) override { deallocate(p); }

    void copy_region(void* dst, const StridedRegion& d, const void* src, const StridedRegion& s,
                     std::size_t elem_bytes) override {
        if (d.extent != s.extent) throw std::logic_error("copy_region: extents differ");
        if (d.count() == 0) return;
        switch (elem_bytes) {
            case 4: copy_typed<4>(dst, d, src, s); break;
            case 8: copy_typed<8>(dst, d, src, s); break;
            case 16: copy_typed<16>(dst, d, src, s); break;
            default: throw std::invalid_argument("copy_region: element size must be 4, 8 or 16");
        }
    }
    void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override {
        std::memcpy(host_dst, src, bytes);
    }
    void copy_from_host(void* dst, const void* host_src, std::size_t bytes) override {
        std::memcpy(dst, host_src, bytes);
    }
    void synchronize() override {}
    void zero(void* p, std::size_t bytes) override { std::memset(p, 0, bytes); }
    void multiply_real(void* data, const void* factor, index_t n, Precision precision) override {
        auto run = [&](auto zero) {
            using T = decltype(zero);
            T* d = static_cast<T*>(data);
            const T* f = static_cast<const T*>(factor);
            for (index_t i = 0; i < n; ++i) d[2 * i] *= f[i], d[2 * i + 1] *= f[i];
        };
        if (precision == Precision::single) run(float{});
        else run(double{});
    }

    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        if (desc.precision == Precision::single) return std::make_unique<FftwPlan<float>>(desc);
        return std::make_unique<FftwPlan<double>>(desc);
    }
    std::unique_ptr<PhaseClock> make_clock() override { return std::make_unique<HostClock>(); }
};

const bool registered = register_variant<Backend, FftwBackend>("fftw");

}  // namespace
}  // namespace fftune
