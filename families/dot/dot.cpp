// The dot family (README.md beside this file): a distributed dot product
// x . y of two vectors of length N split in blocks over the ranks, built only
// into the tests' CLI. It exists to show that a family is one folder: the
// runner, ingest, `fftune best` and `fftune report` drive it unchanged.
#include <cmath>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/run/family.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

// x_i = cos(i), y_i = sin(3 i + 1): terms of both signs, so the sum cancels.
double x_at(long long i) { return std::cos(double(i)); }
double y_at(long long i) { return std::sin(3.0 * double(i) + 1.0); }

// Rank r of p holds [lo, hi): blocks of N / p, the first N % p one longer.
std::pair<long long, long long> block(long long n, int p, int r) {
    const long long base = n / p, extra = n % p;
    const long long lo = r * base + std::min<long long>(r, extra);
    return {lo, lo + base + (r < extra ? 1 : 0)};
}

// The reductions a configuration chooses between.
const std::vector<std::string> reductions{"allreduce", "reduce_bcast"};

struct DotAxes : FamilyAxes {
    std::vector<int> lengths;
    std::vector<Precision> precisions;
    std::vector<std::string> backends, reductions;
};

template <class T>
MPI_Datatype mpi_type() {
    return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

class DotWorkload final : public Workload {
public:
    DotWorkload(const Point& point)
        : n_(point.problem.at("length")[0].get<long long>()),
          precision_(parse<Precision>(point.problem.at("precision").get<std::string>())),
          backend_name_(point.backend()),
          reduction_(point.config.at("reduction").get<std::string>()) {}

    void setup(MPI_Comm comm) override {
        comm_ = comm;
        int p = 0, r = 0;
        FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &p));
        FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &r));
        std::tie(lo_, hi_) = block(n_, p, r);
        backend_ = Registry<Backend>::instance().create(backend_name_);
        if (auto why = backend_->unavailable()) throw Unsupported(*why);
        timer_ = std::make_unique<PhaseTimer>(*backend_);
        for (const char* ph : {"copy", "local", "reduce"}) timer_->phase(ph);
    }
    Backend& backend() override { return *backend_; }

    void prepare(MPI_Comm comm) override {
        all_or_none(comm, [&] { fill(); });
    }
    void fill() {
        const std::size_t bytes = local() * element();
        x_ = Buffer(*backend_, bytes);
        y_ = Buffer(*backend_, bytes);
        host_.assign(2 * bytes, 0);
        auto fill = [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> x(local()), y(local());
            for (long long i = lo_; i < hi_; ++i) x[i - lo_] = T(x_at(i)), y[i - lo_] = T(y_at(i));
            if (bytes == 0) return;
            backend_->copy_from_host(x_.data(), x.data(), bytes);
            backend_->copy_from_host(y_.data(), y.data(), bytes);
        };
        if (precision_ == Precision::single) fill(float{});
        else fill(double{});
        backend_->synchronize();
    }

    std::unique_ptr<PhaseClock> make_clock() override { return backend_->make_clock(); }
    std::vector<std::string> phase_names() override { return timer_->names(); }

    void step() override {
        if (precision_ == Precision::single) run(float{});
        else run(double{});
    }
    std::vector<double> collect_phase_times() override { return timer_->collect(); }

    Footprint footprint() const override {
        Footprint f;
        f.backend_bytes = 2 * local() * element();
        f.host_staging_bytes = host_.size();
        return f;
    }
    std::vector<PhaseTraffic> traffic() const override {
        const std::size_t bytes = 2 * local() * element();
        return {{bytes, 0, 0}, {bytes, 0, 0}, {0, element(), element()}};
    }
    void release() override {
        x_ = Buffer();
        y_ = Buffer();
    }

    // Against a serial sum in long double of the whole product (every rank
    // computes it: the oracle), relative to sum |x_i y_i| since the sum cancels.
    ValidationResult validate(MPI_Comm) override {
        long double exact = 0, scale = 0;
        for (long long i = 0; i < n_; ++i) {
            const long double t = (long double)x_at(i) * y_at(i);
            exact += t;
            scale += std::fabs(t);
        }
        const double err = scale > 0 ? double(std::fabs((long double)result_ - exact) / scale) : std::fabs(result_);
        return {{make_check("serial_oracle", err, precision_ == Precision::single ? 1e-5 : 1e-13)}};
    }
    void annotate(MPI_Comm, json& record) override { record["dot"] = {{"value", result_}}; }

private:
    std::size_t local() const { return static_cast<std::size_t>(hi_ - lo_); }
    std::size_t element() const { return precision_ == Precision::single ? sizeof(float) : sizeof(double); }

    template <class T>
    void run(T) {
        const std::size_t bytes = local() * sizeof(T);
        T* hx = reinterpret_cast<T*>(host_.data());
        T* hy = hx + local();
        {
            PhaseScope s(*timer_, 0);
            if (bytes > 0) {
                backend_->copy_to_host(hx, x_.data(), bytes);
                backend_->copy_to_host(hy, y_.data(), bytes);
            }
            backend_->synchronize();
        }
        T partial = 0;
        {
            PhaseScope s(*timer_, 1);
            partial = std::inner_product(hx, hx + local(), hy, T(0));
        }
        T sum = 0;
        {
            PhaseScope s(*timer_, 2);
            if (reduction_ == "allreduce") {
                FFTUNE_MPI_CHECK(MPI_Allreduce(&partial, &sum, 1, mpi_type<T>(), MPI_SUM, comm_));
            } else {
                FFTUNE_MPI_CHECK(MPI_Reduce(&partial, &sum, 1, mpi_type<T>(), MPI_SUM, 0, comm_));
                FFTUNE_MPI_CHECK(MPI_Bcast(&sum, 1, mpi_type<T>(), 0, comm_));
            }
        }
        result_ = double(sum);
    }

    long long n_;
    Precision precision_;
    std::string backend_name_, reduction_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    long long lo_ = 0, hi_ = 0;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<PhaseTimer> timer_;
    Buffer x_, y_;
    std::vector<unsigned char> host_;  // the local parts, copied back for the sum
    double result_ = 0;
};

class DotFamily final : public Family {
public:
    std::string name() const override { return "dot"; }
    std::string summary() const override { return "distributed dot product x . y (test family)"; }
    std::vector<std::string> testcase_keys() const override { return {"lengths", "precision", "backend", "reduction"}; }

    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const json& j,
                                            const std::vector<int>&) const override {
        auto a = std::make_shared<DotAxes>();
        if (!j.contains("lengths")) ps.fail("/lengths", "missing required key");
        a->lengths = ps.int_axis(j.at("lengths"), "/lengths", 1);
        a->precisions = ps.enum_axis<Precision>(TestcaseParser::value_or(j, "precision", "double"), "/precision");
        a->backends = ps.names_axis(TestcaseParser::value_or(j, "backend", "fftw"), "/backend",
                                    Registry<Backend>::instance().names());
        a->reductions = ps.names_axis(TestcaseParser::value_or(j, "reduction", "all"), "/reduction", reductions);
        return a;
    }

    std::vector<Point> points(const FamilyAxes& any, int ranks) const override {
        const auto& a = dynamic_cast<const DotAxes&>(any);
        std::vector<Point> out;
        for (int n : a.lengths)
            for (auto precision : a.precisions)
                for (const auto& backend : a.backends)
                    for (const auto& reduction : a.reductions) {
                        Point pt;
                        pt.index = static_cast<int>(out.size());
                        pt.problem = {{"kind", "dot"}, {"ranks", ranks}, {"length", {n}},
                                      {"precision", to_string(precision)}};
                        pt.config = {{"backend", backend}, {"reduction", reduction}};
                        pt.key = config_key(pt.config);
                        pt.label = fmt::format("dot {} {} {}", n, to_string(precision), pt.key);
                        out.push_back(std::move(pt));
                    }
        return out;
    }

    std::optional<std::string> not_applicable(const json& problem, const json&) const override {
        const long long n = problem.at("length")[0].get<long long>();
        const int p = problem.at("ranks").get<int>();
        if (n < p) return fmt::format("length {} < {} ranks: every rank needs an element", n, p);
        return std::nullopt;
    }
    std::unique_ptr<Workload> workload(const Point& point) const override {
        return std::make_unique<DotWorkload>(point);
    }

    std::string config_key(const json& c) const override {
        return c.at("backend").get<std::string>() + "/" + c.at("reduction").get<std::string>();
    }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        return {{"length", Role::size, {}, "", 1, "N, the vectors' length"},
                {"precision", Role::category, all_names<Precision>(), "double", 0, "single or double"}};
    }
    std::vector<std::string> config_axes() const override { return {"reduction", "backend"}; }
    json default_config(const json&) const override { return {{"backend", "fftw"}, {"reduction", "allreduce"}}; }
};

const bool registered = register_variant<Family, DotFamily>("dot");

}  // namespace
}  // namespace fftune
