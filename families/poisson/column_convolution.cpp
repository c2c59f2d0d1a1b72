// The reference column convolution (column_convolution.hpp), registered for the
// CPU backend "fftw": the three passes zero_skipping runs, made of the
// backend's own primitives (a strided batched FFT, multiply_real, the inverse).
#include "families/poisson/column_convolution.hpp"

#include <fmt/format.h>

namespace fftune {
FFTUNE_DEFINE_REGISTRY(poisson::ColumnConvolution);
}

namespace fftune::poisson {

std::optional<std::string> column_problem_error(const ColumnProblem& p) {
    if (p.length < 1 || p.kept < 1 || p.kept > p.length || p.columns < 1)
        return fmt::format("no column convolution of length {} keeping {} of {} columns", p.length, p.kept, p.columns);
    return std::nullopt;
}

namespace {

class ThreePasses final : public ColumnConvolution {
public:
    std::optional<std::string> not_applicable(const ColumnProblem& p) const override { return column_problem_error(p); }
    void setup(Backend& backend, const ColumnProblem& p) override {
        if (auto why = not_applicable(p)) throw std::invalid_argument(*why);
        backend_ = &backend;
        p_ = p;
        const index_t n = p.length * p.columns;
        spectrum_ = Buffer(backend, std::size_t(n) * complex_bytes(p.precision));
        FftDescriptor d;
        d.precision = p.precision;
        d.dims = {{p.length, p.columns, p.columns}};
        d.batch = {{p.columns, 1, 1}};
        d.in_elements = d.out_elements = n;
        forward_ = backend.make_fft(d);
        d.kind = FftKind::c2c_backward;
        inverse_ = backend.make_fft(d);
        const std::size_t area = std::max(forward_->work_bytes(), inverse_->work_bytes());
        if (area > 0) {
            area_ = Buffer(backend, area);
            forward_->set_work_area(area_.data());
            inverse_->set_work_area(area_.data());
        }
    }
    void run(const void* in, const void* kernel, void* out) override {
        forward_->execute(const_cast<void*>(in), spectrum_.data());
        backend_->multiply_real(spectrum_.data(), kernel, p_.length * p_.columns, p_.precision);
        inverse_->execute(spectrum_.data(), out);
    }
    std::size_t work_bytes() const override { return spectrum_.bytes() + area_.bytes(); }
    // Each pass reads and writes every element; the multiply also reads K.
    std::size_t moved_bytes() const override {
        const std::size_t n = std::size_t(p_.length * p_.columns), c = complex_bytes(p_.precision);
        return n * (6 * c + real_bytes(p_.precision));
    }

private:
    Backend* backend_ = nullptr;
    ColumnProblem p_;
    Buffer spectrum_, area_;
    std::unique_ptr<FftPlan> forward_, inverse_;
};

const bool registered = register_variant<ColumnConvolution, ThreePasses>("fftw");

}  // namespace
}  // namespace fftune::poisson
