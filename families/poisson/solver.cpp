#include "families/poisson/solver.hpp"

#include <fmt/format.h>

#include "core/engine/validation.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/parallel.hpp"

namespace fftune {
FFTUNE_DEFINE_REGISTRY(poisson::Solver);
}  // namespace fftune

namespace fftune::poisson {

using json = nlohmann::json;

void to_json(json& j, const Problem& p) {
    j = json{{"kind", "poisson"},
             {"size", p.n},
             {"boundary", to_string(p.boundary)},
             {"kernel", to_string(p.kernel)},
             {"precision", to_string(p.precision)},
             {"ranks", p.ranks}};
}

void from_json(const json& j, Problem& p) {
    p.n = j.at("size").get<Size>();
    p.boundary = parse<Boundary>(j.at("boundary").get<std::string>());
    p.kernel = parse<Kernel>(j.at("kernel").get<std::string>());
    p.precision = parse<Precision>(j.at("precision").get<std::string>());
    p.ranks = j.at("ranks").get<int>();
}

std::unique_ptr<Solver> make_solver(MPI_Comm comm, const Problem& problem, const json& config) {
    auto s = Registry<Solver>::instance().create(config.at("algorithm").get<std::string>());
    keep_spectral_table_for(config.at("backend").get<std::string>(), problem.n, problem.boundary, problem.kernel);
    s->setup(comm, problem, config);
    return s;
}

std::vector<double> sample_rho(const TestProblem& t, const Box3& box) {
    std::vector<double> out(static_cast<std::size_t>(box.count()));
    if (out.empty()) return out;
    const index_t plane = box.extent(1) * box.extent(2);
    // x-planes over the host threads: an exp per point, 134M of them at 512^3.
    parallel_for(box.lo[0], box.hi[0], [&](std::int64_t lo, std::int64_t hi) {
        for (index_t i = lo; i < hi; ++i) {
            std::size_t k = static_cast<std::size_t>((i - box.lo[0]) * plane);
            for (index_t j = box.lo[1]; j < box.hi[1]; ++j)
                for (index_t l = box.lo[2]; l < box.hi[2]; ++l) out[k++] = t.rho(i, j, l);
        }
    });
    return out;
}

namespace {
// Why the backend's kernels cannot do the test problem's work, or nothing; `kernels` set when they can.
std::optional<std::string> unavailable(Backend& be, Boundary b, std::unique_ptr<PoissonKernels>& kernels) {
    kernels = kernels_for(be);
    if (!kernels) return "no poisson kernels for backend " + be.name();
    if (auto why = kernels->not_applicable(b)) return why;
    return std::nullopt;
}
}  // namespace

std::string fill_rho(Solver& solver, const TestProblem& t, Precision precision) {
    std::unique_ptr<PoissonKernels> kernels;
    auto why = unavailable(solver.backend(), t.boundary, kernels);
    const GridArray a = why ? GridArray{} : solver.rho_array();
    if (!why && !a.data) why = "the solver lends no array for ρ";
    if (why) {
        solver.load_rho(sample_rho(t, solver.physical_box()));
        return "host: " + *why;
    }
    kernels->fill_rho(solver.backend(), a, t, precision);
    solver.backend().synchronize();
    return "backend";
}

PhiCheck check_phi(Solver& solver, const TestProblem& t, Precision precision, bool sample_on_host) {
    const Box3 box = solver.physical_box();
    PhiCheck c;
    std::unique_ptr<PoissonKernels> kernels;
    auto why = unavailable(solver.backend(), t.boundary, kernels);
    const GridArray a = why ? GridArray{} : solver.phi_array();
    if (!why && !a.data) why = "the solver lends no array for φ";
    c.sampled = sample_on_host && (why || !solver.backend().device_memory());
    const auto planes = sampled_indices(box.lo[0], box.hi[0], c.sampled ? 17 : box.hi[0] - box.lo[0]);
    if (why) {
        c.where = "host: " + *why;
        std::vector<double> phi = solver.phi();
        auto host = Registry<PoissonKernels>::instance().create("fftw");
        c.errors = host->phi_errors(solver.backend(), grid_array(phi.data(), Layout{box, order_xyz}, box), planes, t,
                                    Precision::double_);
        return c;
    }
    c.where = "backend";
    c.errors = kernels->phi_errors(solver.backend(), a, planes, t, precision);
    return c;
}

GridArray grid_array(void* data, const Layout& layout, const Box3& box) {
    GridArray a;
    a.data = data;
    a.box = box;
    const auto st = layout.strides();
    for (int d = 0; d < 3; ++d) a.region.extent[d] = box.extent(d), a.region.stride[d] = st[d];
    a.region.offset = box.empty() ? 0 : layout.offset_of(box.lo);
    return a;
}

void upload_kernel(Backend& backend, const std::vector<double>& kernel, Precision precision, void* out) {
    const std::size_t bytes = kernel.size() * real_bytes(precision);
    if (bytes == 0) return;
    if (precision == Precision::single) {
        const std::vector<float> f(kernel.begin(), kernel.end());
        backend.copy_from_host(out, f.data(), bytes);
    } else {
        backend.copy_from_host(out, kernel.data(), bytes);
    }
    backend.synchronize();
}

}  // namespace fftune::poisson
