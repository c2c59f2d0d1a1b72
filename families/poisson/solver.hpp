// A Poisson solve, ∇²φ = −4πρ, by convolution with the boundary's Green's
// function on the padded grid (green.hpp): forward transform of ρ, multiply
// by the spectral kernel, inverse transform. Each algorithm is a registered
// variant (README.md):
//   padded         the engine's distributed r2c transform (core/engine/plan.hpp)
//                  of the whole padded grid, zeros stored and sent: every
//                  decomposition, layout and transport
//   zero_skipping  1D passes that skip the rows known to be zero (forward) or
//                  not needed (inverse), the padding never transformed nor
//                  sent (Dugan et al. section 3): a slab reshape between them
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/phase_timer.hpp"
#include "families/poisson/device_kernels.hpp"
#include "families/poisson/green.hpp"

namespace fftune::poisson {

struct Problem {
    Size n{0, 0, 0};
    Boundary boundary = Boundary::free;
    Kernel kernel = Kernel::hockney;
    Precision precision = Precision::double_;
    int ranks = 1;
};
void to_json(nlohmann::json& j, const Problem& p);  // the record's "problem" (kind poisson)
void from_json(const nlohmann::json& j, Problem& p);

class Solver {
public:
    static constexpr const char* kind = "poisson algorithm";
    virtual ~Solver() = default;

    // Why `config` (its "algorithm", "backend" and the algorithm's fields)
    // cannot solve `problem`, or nothing; pure. Called on a fresh instance.
    virtual std::optional<std::string> not_applicable(const Problem& problem, const nlohmann::json& config) const = 0;
    // Whether its configurations are the engine's (fftune::Config fields: every
    // decomposition, layout and transport), or only "backend".
    virtual bool takes_engine_configurations() const { return false; }
    // The configuration's key without the algorithm's name.
    virtual std::string key(const nlohmann::json& config) const = 0;

    // Collective: plans, buffers, and the spectral kernel (its host time is kernel_setup_ms()).
    virtual void setup(MPI_Comm comm, const Problem& problem, const nlohmann::json& config) = 0;
    virtual Backend& backend() = 0;
    // This rank's part of the N grid; ρ and φ are exchanged over it, x slowest, z fastest.
    virtual Box3 physical_box() const = 0;
    // Rank-local: ρ into the input array (the padding stays zero).
    virtual void load_rho(const std::vector<double>& rho) = 0;
    // Collective: one solve.
    virtual void solve() = 0;
    // Rank-local: φ of the last solve, on the host.
    virtual std::vector<double> phi() = 0;
    // Where physical_box() lies in the backend arrays of ρ (the input) and φ;
    // data nullptr: none to lend (fill_rho and check_phi go through load_rho and phi).
    virtual GridArray rho_array() = 0;
    virtual GridArray phi_array() = 0;

    virtual std::vector<std::string> phase_names() const = 0;
    virtual std::vector<double> collect_phase_times() = 0;
    virtual std::vector<PhaseTraffic> traffic() const = 0;
    virtual std::unique_ptr<PhaseClock> make_clock() = 0;
    // Backend memory: all of it, and what is besides ρ and φ.
    virtual std::size_t backend_bytes() const = 0;
    virtual std::size_t workspace_bytes() const = 0;
    virtual std::size_t host_staging_bytes() const { return 0; }
    // Most ranks of the solve sharing one device (1 on host backends).
    virtual int ranks_on_device() const { return 1; }
    double kernel_setup_ms() const { return kernel_setup_ms_; }
    // Where the spectral kernel was built (build_spectral_kernel's answer).
    const std::string& kernel_built() const { return kernel_built_; }
    // The algorithm's own record fields (annotate).
    virtual nlohmann::json details() const { return nlohmann::json::object(); }

protected:
    double kernel_setup_ms_ = 0;
    std::string kernel_built_;
};
}  // namespace fftune::poisson

namespace fftune {
FFTUNE_DECLARE_REGISTRY(poisson::Solver);
}  // namespace fftune

namespace fftune::poisson {

// The solver of `config`'s algorithm, set up (collective).
std::unique_ptr<Solver> make_solver(MPI_Comm comm, const Problem& problem, const nlohmann::json& config);

// ρ of the test problem over `box` (x slowest, z fastest).
std::vector<double> sample_rho(const TestProblem& t, const Box3& box);

// Rank-local: the test problem's ρ into the solver's input, written in place
// by its backend's kernels (device_kernels.hpp), else sampled on the host and
// loaded. Returns where: "backend", or "host: REASON".
std::string fill_rho(Solver& solver, const TestProblem& t, Precision precision);
// Rank-local: φ of the last solve against t.phi, reduced in place by the
// backend's kernels on every x-plane where its memory is a device's; else on
// the host (read back where the kernels cannot), over at least 17 sampled
// x-planes of the rank's part when `sample_on_host` (large grids, where the
// analytic φ costs 20-70x the solve), every plane otherwise.
struct PhiCheck {
    PhiErrors errors;
    std::string where;  // "backend", or "host: REASON" (read back)
    bool sampled = false;
};
PhiCheck check_phi(Solver& solver, const TestProblem& t, Precision precision, bool sample_on_host);
// Where `box` lies in an array of `layout`, as a GridArray (x, y, z dimensions).
GridArray grid_array(void* data, const Layout& layout, const Box3& box);

// The spectral kernel (host values) into `out` (backend memory of at least
// kernel.size() reals of `precision`), converted to that precision.
void upload_kernel(Backend& backend, const std::vector<double>& kernel, Precision precision, void* out);

}  // namespace fftune::poisson
