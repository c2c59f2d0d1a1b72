// The reference column stages (column_convolution.hpp), registered for the CPU
// backend "fftw": the passes zero_skipping runs, made of the backend's own
// primitives (a strided copy, a strided batched FFT, multiply_real, the inverse).
#include "families/poisson/column_convolution.hpp"

#include <fmt/format.h>

namespace fftune {
FFTUNE_DEFINE_REGISTRY(poisson::ColumnConvolution);
}

namespace fftune::poisson {

std::optional<std::string> column_problem_error(const ColumnProblem& p) {
    if (p.length < 1 || p.kept < 1 || p.kept > p.length || p.columns < 1)
        return fmt::format("no column convolution of length {} keeping {} of {} columns", p.length, p.kept, p.columns);
    if (p.written < 0 || p.rows_written() > p.length)
        return fmt::format("a column stage of length {} cannot write {} rows", p.length, p.rows_written());
    if (p.groups < 1) return fmt::format("a column stage needs at least one column group, not {}", p.groups);
    if (p.groups > 1 && (p.in_group_stride < p.kept * p.columns || p.out_group_stride < p.rows_written() * p.columns))
        return fmt::format("column groups {} and {} elements apart overlap rows of {} x {} and {} x {}",
                           p.in_group_stride, p.out_group_stride, p.kept, p.columns, p.rows_written(), p.columns);
    if (p.mode == ColumnMode::convolve && p.groups != 1)
        return fmt::format("a column convolution takes one column group (its kernel's order), not {}", p.groups);
    return std::nullopt;
}

namespace {

// Dense [group][row][column] strides of `rows` rows (extent 1 groups: any stride).
StridedRegion rows_of(const ColumnProblem& p, index_t rows, index_t group_stride) {
    return {{p.groups, rows, p.columns}, {group_stride, p.columns, 1}, 0};
}

// The reference: the input copied into a zero-padded array of L rows, the
// backend's strided batched FFT (and for a convolution multiply_real and the
// inverse FFT), the rows < written copied out.
class ReferencePasses final : public ColumnConvolution {
public:
    std::optional<std::string> not_applicable(const ColumnProblem& p) const override { return column_problem_error(p); }
    void setup(Backend& backend, const ColumnProblem& p) override {
        if (auto why = not_applicable(p)) throw std::invalid_argument(*why);
        backend_ = &backend;
        p_ = p;
        const index_t plane = p.length * p.columns, n = p.groups * plane;
        const std::size_t bytes = std::size_t(n) * complex_bytes(p.precision);
        padded_ = Buffer(backend, bytes);  // rows from kept on stay zero: run() writes only the others
        backend.zero(padded_.data(), bytes);
        spectrum_ = Buffer(backend, bytes);
        FftDescriptor d;
        d.precision = p.precision;
        d.kind = p.mode == ColumnMode::inverse ? FftKind::c2c_backward : FftKind::c2c_forward;
        d.dims = {{p.length, p.columns, p.columns}};
        if (p.groups > 1) d.batch.push_back({p.groups, plane, plane});
        d.batch.push_back({p.columns, 1, 1});
        d.in_elements = d.out_elements = n;
        first_ = backend.make_fft(d);
        std::size_t area = first_->work_bytes();
        if (p.mode == ColumnMode::convolve) {
            result_ = Buffer(backend, bytes);
            d.kind = FftKind::c2c_backward;
            inverse_ = backend.make_fft(d);
            area = std::max(area, inverse_->work_bytes());
        }
        if (area > 0) {
            area_ = Buffer(backend, area);
            first_->set_work_area(area_.data());
            if (inverse_) inverse_->set_work_area(area_.data());
        }
        backend.synchronize();
    }
    void run(const void* in, const void* kernel, void* out) override {
        if ((kernel != nullptr) != (p_.mode == ColumnMode::convolve))
            throw std::invalid_argument("column stage: a convolution takes a kernel, a transform none");
        const index_t plane = p_.length * p_.columns;
        const std::size_t cb = complex_bytes(p_.precision);
        backend_->copy_region(padded_.data(), rows_of(p_, p_.kept, plane), in, rows_of(p_, p_.kept, p_.in_group_stride),
                              cb);
        first_->execute(padded_.data(), spectrum_.data());
        void* result = spectrum_.data();
        if (inverse_) {
            backend_->multiply_real(spectrum_.data(), kernel, plane, p_.precision);
            inverse_->execute(spectrum_.data(), result_.data());
            result = result_.data();
        }
        backend_->copy_region(out, rows_of(p_, p_.rows_written(), p_.out_group_stride), result,
                              rows_of(p_, p_.rows_written(), plane), cb);
    }
    std::size_t work_bytes() const override {
        return padded_.bytes() + spectrum_.bytes() + result_.bytes() + area_.bytes();
    }
    // The copies in and out; each pass reads and writes every element; the multiply also reads K.
    std::size_t moved_bytes() const override {
        const std::size_t n = std::size_t(p_.all_columns()), c = complex_bytes(p_.precision), l = p_.length;
        const std::size_t passes = p_.mode == ColumnMode::convolve ? n * l * (6 * c + real_bytes(p_.precision)) : n * l * 2 * c;
        return passes + n * 2 * c * std::size_t(p_.kept + p_.rows_written());
    }

private:
    Backend* backend_ = nullptr;
    ColumnProblem p_;
    Buffer padded_, spectrum_, result_, area_;
    std::unique_ptr<FftPlan> first_, inverse_;
};

const bool registered = register_variant<ColumnConvolution, ReferencePasses>("fftw");

}  // namespace

void arrange_kernel(Backend& backend, const ColumnConvolution& conv, const ColumnProblem& p, const void* raw, void* out) {
    const index_t count = p.length * p.columns;
    if (count == 0) return;
    auto pieces = conv.kernel_order();
    if (pieces.empty()) {
        const StridedRegion all{{1, 1, count}, {count, count, 1}, 0};
        pieces.push_back({all, all});
    }
    for (const auto& piece : pieces) backend.copy_region(out, piece.to, raw, piece.from, real_bytes(p.precision));
}

namespace {

}  // namespace
}  // namespace fftune::poisson
