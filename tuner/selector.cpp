#include "tuner/selector.hpp"

#include <set>
#include <tuple>

#include "tuner/model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/platform/backend.hpp"
#include "core/engine/decomposition.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/run/testcase.hpp"
#include "core/engine/transport.hpp"

namespace fftune {

using json = nlohmann::json;

void to_json(json& j, const Selection& s) {
    j = json{{"config", s.config}, {"key", s.config.key()}, {"rung", s.rung}, {"reason", s.reason},
             {"distance", s.distance}, {"verdict", s.verdict}};
    j["expected_ms"] = s.expected_ms ? json(*s.expected_ms) : json(nullptr);
    j["measured_problem"] = s.measured_problem ? json(*s.measured_problem) : json(nullptr);
}

void from_json(const json& j, Selection& s) {
    s.config = j.at("config").get<Config>();
    s.rung = j.at("rung").get<std::string>();
    s.reason = j.at("reason").get<std::string>();
    s.distance = j.at("distance").get<double>();
    s.verdict = j.at("verdict").get<std::string>();
    if (!j.at("expected_ms").is_null()) s.expected_ms = j.at("expected_ms").get<double>();
    if (!j.at("measured_problem").is_null()) s.measured_problem = j.at("measured_problem").get<Problem>();
}

namespace {

bool usable(const Backend& b) { return !b.unavailable(); }

// Software validator of this build for `backend_name`, as ingest computes it for records.
std::string current_software(const std::string& backend_name) {
    if (!Registry<Backend>::instance().contains(backend_name)) return "";
    auto backend = Registry<Backend>::instance().create(backend_name);
    return software_validator(json{{"provenance", provenance_info({}, backend.get())}});
}

bool applies(const Problem& p, const Config& c) {
    try {
        return !check_applicable(p, c);
    } catch (const std::exception&) {
        return false;  // a name this build does not have
    }
}

// Both ranks-per-node counts known, and different: the problems share nodes differently.
bool other_node_share(const Problem& a, const Problem& b) {
    return a.ranks_per_node > 0 && b.ranks_per_node > 0 && a.ranks_per_node != b.ranks_per_node;
}

double points(const Problem& p) { return double(p.size[0]) * double(p.size[1]) * double(p.size[2]); }

std::string grid_string(const std::array<int, 2>& g) { return fmt::format("{}x{}", g[0], g[1]); }

}  // namespace

std::vector<Config> adapt_to_ranks(const Config& c, int ranks) {
    std::vector<Config> out;
    if (!Registry<Decomposition>::instance().contains(c.decomposition)) return out;
    if (!Registry<Decomposition>::instance().create(c.decomposition)->uses_process_grid()) {
        Config a = c;
        a.process_grid = {ranks, 1};  // slabs (and the one-rank reference) use P x 1
        out.push_back(a);
        return out;
    }
    // Pencils: every grid of the new rank count, the aspect P1/P2 nearest the measured one first.
    auto grids = all_grids(ranks);
    const double aspect = std::log(double(c.process_grid[0]) / double(c.process_grid[1]));
    // Key: distance in log aspect (rounded, so equal distances tie), then P1 >= P2 first.
    auto key = [&](const std::array<int, 2>& g) {
        return std::make_pair(std::llround(1e9 * std::abs(std::log(double(g[0]) / g[1]) - aspect)), g[0] < g[1]);
    };
    std::stable_sort(grids.begin(), grids.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    for (const auto& g : grids) {
        Config a = c;
        a.process_grid = g;
        out.push_back(a);
    }
    return out;
}

Config default_config(const Problem& problem) {
    // The GPU when there is one (NCCL when built), else FFTW; slabs while every
    // rank gets an x-plane, pencils on the most square grid beyond that.
    std::string backend = "fftw";
    std::string method = "a2a_sync";
    if (Registry<Backend>::instance().contains("cuda") && usable(*Registry<Backend>::instance().create("cuda"))) {
        backend = "cuda";
        if (Registry<Transport>::instance().contains("nccl_a2a")) method = "nccl_a2a";
    }
    const int p = problem.ranks;
    if (p == 1) return {backend, "reference_3d", LayoutVariant::default_, {1, 1}, {}, false};
    Config slab{backend, "slab_2d1d", LayoutVariant::default_, {p, 1}, {method}, false};
    if (applies(problem, slab)) return slab;
    // Pencil grids from the most square one (P1 >= P2 first) to the most elongated.
    auto grids = all_grids(p);
    std::stable_sort(grids.begin(), grids.end(), [](const auto& a, const auto& b) {
        auto skew = [](const std::array<int, 2>& g) { return std::abs(std::log(double(g[0]) / g[1])) - (g[0] >= g[1] ? 1e-9 : 0); };
        return skew(a) < skew(b);
    });
    for (const auto& g : grids) {
        Config pencil{backend, "pencil", LayoutVariant::default_, g, {method, method}, false};
        if (applies(problem, pencil)) return pencil;
    }
    return slab;  // nothing applies (e.g. more ranks than Nx * Ny); Plan will say why
}

Selection select(const Problem& problem, const SelectOptions& options) {
    const std::string path = options.database.empty() ? default_database_path() : options.database;
    const std::string machine = options.machine.empty() ? machine_info().at("fingerprint").get<std::string>() : options.machine;
    Selection s;
    auto fallback = [&](const std::string& why) {
        s.config = default_config(problem);
        s.rung = "default";
        s.reason = why;
        return s;
    };
    std::unique_ptr<Database> db;
    try {
        db = std::make_unique<Database>(path, /*read_only=*/true);
    } catch (const DatabaseError& e) {
        return fallback(e.what());
    }
    try {
        // Exact: the fastest validated configuration that still applies here.
        const auto ms = db->measurements(problem, machine);
        if (auto w = pick_winner(problem, ms)) {
            for (const auto& m : ms) {
                if (!applies(problem, m.config)) continue;
                s.config = m.config;
                s.expected_ms = m.median_ms;
                s.measured_problem = problem;
                s.verdict = m.key == w->best.key ? w->verdict : "";
                const bool stale = m.software != current_software(m.config.backend);
                s.rung = stale ? "stale" : "exact";
                s.reason = stale ? fmt::format("measured here with other software ({}); re-tune to refresh", m.timestamp)
                                 : fmt::format("fastest of {} validated configurations measured for this problem", w->candidates);
                return s;
            }
        }
        // Nearest problem: same categorical fields, sizes and ranks per node closest by log ratio.
        std::optional<Problem> nearest;
        double best_d = 0;
        for (const auto& q : db->problems(machine)) {
            if (q.kind != problem.kind || q.precision != problem.precision || q.direction != problem.direction ||
                q.ranks != problem.ranks)
                continue;
            double d = other_node_share(problem, q) ? std::abs(std::log2(double(problem.ranks_per_node) / q.ranks_per_node)) : 0;
            for (int a = 0; a < 3; ++a) d += std::abs(std::log2(double(problem.size[a]) / double(q.size[a])));
            if (!nearest || d < best_d) nearest = q, best_d = d;
        }
        if (nearest) {
            for (const auto& m : db->measurements(*nearest, machine)) {
                if (!applies(problem, m.config)) continue;
                s.config = m.config;
                s.rung = "nearest";
                s.distance = best_d;
                s.measured_problem = nearest;
                s.expected_ms = m.median_ms * double(problem.size[0] * problem.size[1] * problem.size[2]) /
                                double(nearest->size[0] * nearest->size[1] * nearest->size[2]);
                s.reason = fmt::format("fastest applicable configuration of the nearest measured problem {}{} "
                                       "(expected time scaled by the point count)",
                                       size_string(nearest->size),
                                       other_node_share(problem, *nearest)
                                           ? fmt::format(" with {} ranks per node (here {})", nearest->ranks_per_node,
                                                         problem.ranks_per_node)
                                           : "");
                return s;
            }
        }
        // Same per-rank size at another rank count: measured problems with the same
        // kind, precision and direction, by |log2(points per rank here / there)|
        // (then by rank count ratio); the fastest configuration whose re-derived grid applies.
        std::vector<std::tuple<double, double, Problem>> others;
        const double per_rank = points(problem) / problem.ranks;
        for (const auto& q : db->problems(machine)) {
            if (q.kind != problem.kind || q.precision != problem.precision || q.direction != problem.direction ||
                q.ranks == problem.ranks)
                continue;
            others.emplace_back(std::abs(std::log2(per_rank / (points(q) / q.ranks))),
                                std::abs(std::log(double(q.ranks) / problem.ranks)), q);
        }
        std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
        });
        for (const auto& [d, rank_ratio, q] : others)
            for (const auto& m : db->measurements(q, machine))
                for (const auto& c : adapt_to_ranks(m.config, problem.ranks)) {
                    if (!applies(problem, c)) continue;
                    s.config = c;
                    s.rung = "per_rank_size";
                    s.distance = d;
                    s.measured_problem = q;
                    // Weak scaling: the time follows the points per rank.
                    s.expected_ms = m.median_ms * per_rank / (points(q) / q.ranks);
                    s.reason = fmt::format(
                        "fastest applicable configuration of {} at {} ranks, the measured problem with the nearest "
                        "per-rank size ({:.4g} points per rank there, {:.4g} here), {} (expected time scaled by points per rank)",
                        size_string(q.size), q.ranks, points(q) / q.ranks, per_rank,
                        c.process_grid == m.config.process_grid
                            ? "as measured"
                            : fmt::format("with the process grid {} re-derived as {} for {} ranks", grid_string(m.config.process_grid),
                                          grid_string(c.process_grid), problem.ranks));
                    return s;
                }
        // Cost model: probe calibrations of this machine, else fits to its measurements.
        const auto mine = db->validated_records(machine);
        const auto probes = db->probe_records(machine);
        if (!mine.empty() || !probes.empty()) {
            const CostModel model = CostModel::fit(mine, probes);
            std::optional<std::pair<Config, double>> best;
            for (const auto& b : model.backends())
                if (auto c = model.best(problem, b); c && (!best || c->second < best->second)) best = c;
            if (best) {
                s.config = best->first;
                s.rung = "model";
                s.expected_ms = best->second;
                s.reason = fmt::format("alpha-beta model ({} probe records, {} measurements of this machine) predicts {:.4g} ms; "
                                       "coefficients: {}",
                                       probes.size(), mine.size(), best->second, model.sources(problem, best->first));
                return s;
            }
        }
        const auto machines = db->machines();
        if (!machines.empty() && std::find(machines.begin(), machines.end(), machine) == machines.end())
            return fallback(fmt::format("{} holds measurements of other machines only ({}); this machine is {}", path,
                                        fmt::join(machines, ", "), machine));
        return fallback(fmt::format("{} has no validated measurement of a {} problem at {} ranks on this machine", path,
                                    to_string(problem.precision) + " " + to_string(problem.direction), problem.ranks));
    } catch (const std::exception& e) {
        return fallback(fmt::format("{}: lookup failed: {}", path, e.what()));
    }
}

Selection select(MPI_Comm comm, const Problem& problem, const SelectOptions& options) {
    int rank = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    Problem here = problem;  // as the runner records it: with this job's ranks per node
    if (here.ranks_per_node == 0) here.ranks_per_node = ranks_per_node(comm);
    std::string text;
    if (rank == 0) text = json(select(here, options)).dump();
    int len = static_cast<int>(text.size());
    FFTUNE_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
    text.resize(len);
    FFTUNE_MPI_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm));
    return json::parse(text).get<Selection>();
}

std::unique_ptr<Plan> make_plan(MPI_Comm comm, const Problem& problem, const SelectOptions& options, Selection* chosen) {
    const Selection s = select(comm, problem, options);
    if (chosen) *chosen = s;
    return std::make_unique<Plan>(comm, problem, s.config);
}

}  // namespace fftune
