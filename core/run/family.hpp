// Problem families: the runner's extension point. A family (fft3d, poisson,
// krylov, convolution) reads its part of a testcase, enumerates its points,
// and runs one point as a Workload; it also tells the database, `fftune best`
// and `fftune report` which fields define a problem and which a
// configuration. The runner, the sweep, agreement across ranks, timing
// statistics, records and failure handling are written once (core/run/) and
// serve every family. A family registers itself from its own folder:
//   static const bool registered = fftune::register_variant<fftune::Family, MyFamily>("my_family");
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/phase_timer.hpp"
#include "core/records/checks.hpp"
#include "core/run/testcase_parser.hpp"

namespace fftune {

// One configuration of one problem at one rank count: what a record describes.
struct Point {
    int index = 0;           // position among the points of the same rank count
    nlohmann::json problem;  // the record's "problem": "kind" (the family), "ranks" and the family's fields
    nlohmann::json config;   // the record's "config"; its "backend" names the backend it runs on
    std::string key;         // canonical configuration key (Family::config_key)
    std::string label;       // one line for progress and the watchdog: problem and configuration

    std::string family() const { return problem.at("kind").get<std::string>(); }
    std::string backend() const { return config.at("backend").get<std::string>(); }
    int ranks() const { return problem.at("ranks").get<int>(); }
};

// The database's and the selector's identity of a problem besides its rank
// counts: the problem's canonical JSON without "ranks" and "ranks_per_node".
std::string problem_key(const nlohmann::json& problem);

// A family's part of a testcase, parsed (each family derives its own).
struct FamilyAxes {
    virtual ~FamilyAxes() = default;
};

// A rank's footprint, for the record's memory fields (results/README.md).
struct Footprint {
    std::size_t backend_bytes = 0;       // memory_bytes: in backend memory, the caller's arrays included
    std::size_t workspace_bytes = 0;     // of those, what the point allocates besides its input and output
    std::size_t host_staging_bytes = 0;  // pinned host memory for staging
    int devices = 1;                     // devices one rank's work runs on
    int ranks_on_device = 1;             // most ranks sharing one device
    // For work over several devices, the most memory it took on any one of
    // them as the driver reports it (the runner measures one device itself).
    std::optional<std::size_t> measured_multi_device_bytes;
    // Backend memory this rank held, kept from the job's last point, when the
    // point began (core/engine/kept_arrays.hpp): in use before the runner read
    // the device's free memory, and all of it reused or let go by this point.
    std::size_t kept_before_bytes = 0;
};

// One point's work, made by its family and driven by the runner
// (core/run/runner.cpp) in this order: setup, prepare, then per timed step
// [make_clock, phase_names, stage once], step, collect_phase_times, restage;
// then footprint, traffic, release, validate, annotate. Rank-local calls are
// agreed by the runner (a failure on one rank fails the point on all);
// collective ones agree their own rank-local parts (core/platform/mpi_util.hpp:
// all_or_none, failure_of; core/platform/device_fault.hpp).
class Workload {
public:
    virtual ~Workload() = default;
    // Collective: plans, operators, communicators, buffers of its own. Timed
    // by the host clock as the record's setup_ms. Throws Unsupported when a
    // library refuses the configuration (the point is skipped).
    virtual void setup(MPI_Comm comm) = 0;
    // The backend its work runs on (after setup).
    virtual Backend& backend() = 0;
    // Collective, untimed: inputs allocated and filled.
    virtual void prepare(MPI_Comm comm) = 0;
    // Rank-local: the clock of one whole step, and the step's phases in order.
    virtual std::unique_ptr<PhaseClock> make_clock() = 0;
    virtual std::vector<std::string> phase_names() = 0;
    // Rank-local, untimed: before the first step, and between steps.
    virtual void stage() {}
    virtual void restage() {}
    // Collective: one timed step (a transform, a solve of a fixed number of iterations).
    virtual void step() = 0;
    // Rank-local: milliseconds per phase since the last call, in phase_names() order.
    virtual std::vector<double> collect_phase_times() = 0;
    // "attribution" (phases one after another) or "overlapped" (they add up to more than the total).
    virtual std::string timing_mode() const { return "attribution"; }
    // After the timed steps, rank-local.
    virtual Footprint footprint() const = 0;
    // The least traffic of each phase on this rank (phase_names() order); none to leave it out.
    virtual std::vector<PhaseTraffic> traffic() const { return {}; }
    // Rank-local: frees what validation does not need (it may allocate its own).
    virtual void release() {}
    // Collective, the point's last call: what the workload keeps for the
    // job's next point (core/engine/kept_arrays.hpp) it lets go of here,
    // unless `next` (none: the job ends, or the runner does not know) will
    // want it. Timed as the record's timing.wall_ms.release.
    virtual void end(MPI_Comm comm, const Point* next) {
        (void)comm;
        (void)next;
    }
    // Collective: checks against analytic solutions, oracles and tolerances.
    virtual ValidationResult validate(MPI_Comm comm) = 0;
    // Collective, after validation: the family's own record fields (a solver's
    // residuals, the bytes a method communicates). Every rank gets `record`;
    // rank 0's is written.
    virtual void annotate(MPI_Comm comm, nlohmann::json& record) {
        (void)comm;
        (void)record;
    }
};

// A field of a family's problem, as `fftune best` asks for it and the
// selector compares problems: categories must be equal, sizes are compared by
// log ratio (the nearest rung). A count is how much of the same work a
// measurement timed (krylov's iterations): not part of what a problem is, so
// `best` may leave it out, problems that differ only in it are the same
// problem, and a time measured at one count is scaled to the count asked
// (select(): the count the measurements nearest to the problem were taken at).
struct ProblemAxis {
    std::string name;  // field of the record's "problem"
    enum class Role { category, size, count } role = Role::category;
    std::vector<std::string> values;  // category: the allowed values
    std::string fallback;             // category: the value `fftune best` assumes when not given
    int dims = 3;                     // size: how many numbers
    std::string help;
    // category: a default that follows the axes before it (krylov's precision
    // follows its operator): the value for the problem read so far, and the
    // axis it follows (for help). Empty: `fallback`.
    std::function<std::string(const nlohmann::json& problem)> fallback_from;
    std::string follows;
};
class Family;
// The value `fftune best` assumes for category `axis` when not given, with the
// axes before it in `problem`.
std::string fallback_of(const ProblemAxis& axis, const nlohmann::json& problem);
// `given` with each category axis it leaves out at its default (fallback_of,
// axis by axis, so that a default may follow the axes before it). Throws
// std::invalid_argument for a category value the family does not have.
nlohmann::json complete_problem(const Family& family, nlohmann::json given);
// The family's problem axes as `fftune best --problem NAME --help` lists them:
// each option with its values and default (one that follows another axis
// names it and its values), and what is required.
std::string problem_help(const Family& family);

// A problem's "precision" where that names a Precision, else none.
std::vector<Precision> problem_precisions(const nlohmann::json& problem);

class Family {
public:
    static constexpr const char* kind = "problem";
    virtual ~Family() = default;

    virtual std::string name() const = 0;
    // One line for `fftune list`.
    virtual std::string summary() const = 0;

    // --- testcases (testcases/README.md)
    // The keys it reads besides the common ones (name, problem, ranks, warmup,
    // iterations, validate, point_timeout_s, launcher, description).
    virtual std::vector<std::string> testcase_keys() const = 0;
    // Reads and checks them before any work; errors through `ps`.
    virtual std::shared_ptr<const FamilyAxes> parse(const TestcaseParser& ps, const nlohmann::json& testcase,
                                                    const std::vector<int>& ranks) const = 0;
    // Every point for jobs of `ranks` ranks, in a fixed order; indices from 0.
    virtual std::vector<Point> points(const FamilyAxes& axes, int ranks) const = 0;

    // --- running
    // Why `config` cannot solve `problem` on this build, or nothing: a pure
    // function of its arguments, so every rank reaches the same answer (the
    // point is skipped with the reason; the selector passes over it). May
    // throw for names this build does not have.
    virtual std::optional<std::string> not_applicable(const nlohmann::json& problem,
                                                      const nlohmann::json& config) const = 0;
    virtual std::unique_ptr<Workload> workload(const Point& point) const = 0;

    // --- records, database, `fftune best`, `fftune report`
    virtual std::string config_key(const nlohmann::json& config) const = 0;
    // The problem's fields besides "kind", "ranks" and "ranks_per_node".
    virtual std::vector<ProblemAxis> problem_axes() const = 0;
    // The configuration's fields, those that name a series in the report first.
    virtual std::vector<std::string> config_axes() const = 0;
    // What to run when nothing measured applies (the selector's last rung).
    virtual nlohmann::json default_config(const nlohmann::json& problem) const = 0;
    // A configuration measured at another rank count, re-derived for `ranks`:
    // candidates, the likeliest first (the selector keeps the first that
    // applies), each with what changed ("" when nothing did).
    struct Adapted {
        nlohmann::json config;
        std::string change;
    };
    virtual std::vector<Adapted> adapt_to_ranks(const nlohmann::json& config, int ranks) const {
        (void)ranks;
        return {{config, ""}};
    }
    // The work of a problem, for scaling a measured time to another size:
    // by default the product of its size fields.
    virtual double work(const nlohmann::json& problem) const;
    // The precisions a point's FFTs and backend kernels run in, which the
    // job warms up before its first point (Backend::warm_up): by default
    // its problem's "precision" where that names one (problem_precisions).
    virtual std::vector<Precision> precisions(const Point& point) const;
    // `fftune tune --strategy phase` tunes independent phases one at a time: a
    // point's method per phase (at least two phases), and all else that
    // identifies it; nothing for points without independent phases.
    struct PhaseSplit {
        std::string rest;
        std::vector<std::string> methods;
    };
    virtual std::optional<PhaseSplit> phase_split(const Point& point) const {
        (void)point;
        return std::nullopt;
    }
    // The testcase key that gives each phase its own axis (named when a
    // testcase gives every phase the same methods).
    virtual std::string per_phase_key() const { return ""; }
    // The problem's sizes in a few characters ("16x8x8"), for reasons and labels.
    std::string size_label(const nlohmann::json& problem) const;
    // The problem in a summary table's columns, and their header.
    virtual std::string problem_label(const nlohmann::json& problem) const;
    virtual std::string problem_header() const;
};
FFTUNE_DECLARE_REGISTRY(Family);

// The registered family called `name` (errors name the registered ones).
const Family& family_named(const std::string& name);

// The family's description for `fftune families --json` and the report:
// {name, summary, problem_axes: [{name, role, values, fallback, dims, help}], config_axes: [...]}.
nlohmann::json describe(const Family& family);

}  // namespace fftune
