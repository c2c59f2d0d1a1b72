#include "tuner/selector.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/platform/backend.hpp"
#include "core/records/provenance.hpp"
#include "core/run/family.hpp"

namespace fftune {

using json = nlohmann::json;

FFTUNE_DEFINE_REGISTRY(CostModelRung);

void to_json(json& j, const Selection& s) {
    j = json{{"config", s.config}, {"key", s.key}, {"rung", s.rung}, {"reason", s.reason},
             {"distance", s.distance}, {"verdict", s.verdict}};
    j["expected_ms"] = s.expected_ms ? json(*s.expected_ms) : json(nullptr);
    j["measured_problem"] = s.measured_problem ? *s.measured_problem : json(nullptr);
    j["error"] = s.error ? json(*s.error) : json(nullptr);
}

void from_json(const json& j, Selection& s) {
    s.config = j.at("config");
    s.key = j.at("key").get<std::string>();
    s.rung = j.at("rung").get<std::string>();
    s.reason = j.at("reason").get<std::string>();
    s.distance = j.at("distance").get<double>();
    s.verdict = j.at("verdict").get<std::string>();
    if (!j.at("expected_ms").is_null()) s.expected_ms = j.at("expected_ms").get<double>();
    if (!j.at("measured_problem").is_null()) s.measured_problem = j.at("measured_problem");
    if (j.contains("error") && !j.at("error").is_null()) s.error = j.at("error").get<double>();
}

namespace {

// Software validator of this build for `backend_name`, as ingest computes it for records.
std::string current_software(const std::string& backend_name) {
    if (!Registry<Backend>::instance().contains(backend_name)) return "";
    auto backend = Registry<Backend>::instance().create(backend_name);
    return software_validator(json{{"provenance", provenance_info({}, backend.get())}});
}

bool applies(const Family& f, const json& problem, const json& config) {
    try {
        return !f.not_applicable(problem, config);
    } catch (const std::exception&) {
        return false;  // a name this build does not have
    }
}

int per_node(const json& p) { return p.value("ranks_per_node", 0); }
int ranks(const json& p) { return p.at("ranks").get<int>(); }

// Both ranks-per-node counts known, and different: the problems share nodes differently.
bool other_node_share(const json& a, const json& b) {
    return per_node(a) > 0 && per_node(b) > 0 && per_node(a) != per_node(b);
}

// The problem without its rank counts, sizes and counts: equal for problems the selector compares.
std::string categories(const Family& f, const json& p) {
    json c = p;
    c.erase("ranks");
    c.erase("ranks_per_node");
    for (const auto& axis : f.problem_axes())
        if (axis.role != ProblemAxis::Role::category) c.erase(axis.name);
    return c.dump();
}

double size_distance(const Family& f, const json& a, const json& b);

// Sum over the count fields both have of |log2(a / b)|.
double count_distance(const Family& f, const json& a, const json& b) {
    double d = 0;
    for (const auto& axis : f.problem_axes())
        if (axis.role == ProblemAxis::Role::count && a.contains(axis.name) && b.contains(axis.name))
            d += std::abs(std::log2(a.at(axis.name)[0].get<double>() / b.at(axis.name)[0].get<double>()));
    return d;
}

std::string database_path(const SelectOptions& o) { return o.database.empty() ? default_database_path() : o.database; }
std::string machine_of(const SelectOptions& o) {
    return o.machine.empty() ? machine_info().at("fingerprint").get<std::string>() : o.machine;
}

// The problem with each count axis (ProblemAxis::Role::count) set to the count
// of the measured problem nearest to it: the same categories, this rank count
// before others, then the nearest sizes, then the nearest count to the one
// asked (so that every rung compares work at one count). `scale` is the
// asked count over the measured one (1 where none was asked), `note` says so.
// Where nothing of the kind was measured: unchanged.
json with_measured_counts(const Family& f, const json& problem, const SelectOptions& options, double& scale,
                          std::string& note) {
    scale = 1;
    const auto axes = f.problem_axes();
    if (std::none_of(axes.begin(), axes.end(), [](const auto& a) { return a.role == ProblemAxis::Role::count; }))
        return problem;
    std::vector<json> measured;
    try {
        measured = Database(database_path(options), /*read_only=*/true).problems(machine_of(options), f.name());
    } catch (const std::exception&) {
        return problem;  // select() says why the database cannot answer
    }
    const std::string cats = categories(f, problem);
    std::optional<json> nearest;
    std::tuple<bool, double, double> best{false, 0, 0};  // (other rank count, size distance, count distance)
    for (const auto& q : measured) {
        if (categories(f, q) != cats) continue;
        const std::tuple<bool, double, double> d{ranks(q) != ranks(problem), size_distance(f, problem, q),
                                                 count_distance(f, problem, q)};
        if (!nearest || d < best) nearest = q, best = d;
    }
    if (!nearest) return problem;
    json out = problem;
    for (const auto& axis : axes) {
        if (axis.role != ProblemAxis::Role::count || !nearest->contains(axis.name)) continue;
        const double there = nearest->at(axis.name)[0].get<double>();
        if (problem.contains(axis.name)) {
            const double asked = problem.at(axis.name)[0].get<double>();
            if (asked != there) {
                scale *= asked / there;
                note += fmt::format("; measured at {} {}, the time scaled to {}", there, axis.name, asked);
            }
        } else {
            note += fmt::format("; for {} {} as measured (--{} scales it)", there, axis.name, axis.name);
        }
        out[axis.name] = nearest->at(axis.name);
    }
    return out;
}

// Sum over the size fields of |log2(a / b)| per number.
double size_distance(const Family& f, const json& a, const json& b) {
    double d = 0;
    for (const auto& axis : f.problem_axes()) {
        if (axis.role != ProblemAxis::Role::size || !a.contains(axis.name) || !b.contains(axis.name)) continue;
        const auto& x = a.at(axis.name);
        const auto& y = b.at(axis.name);
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
            d += std::abs(std::log2(x[i].get<double>() / y[i].get<double>()));
    }
    return d;
}

}  // namespace

std::string check_max_error(double bound) {
    if (std::isfinite(bound) && bound >= 0) return {};
    return fmt::format("{} is not a usable error bound (allowed: a finite number >= 0, the largest relative "
                       "validation error a measured plan may have)",
                       bound);
}

namespace {

// select() for a problem whose counts are those measured (with_measured_counts).
Selection select_measured(const json& problem, const SelectOptions& options) {
    const std::string path = database_path(options);
    const std::string machine = machine_of(options);
    const Family& family = family_named(problem.at("kind").get<std::string>());
    const auto within_bound = [&](const Measurement& m) { return !options.max_error || m.max_rel_error <= *options.max_error; };
    const std::string bound_text =
        options.max_error ? fmt::format(" with a measured error within {:.3g}", *options.max_error) : "";
    Selection s;
    auto answer = [&](const json& config) {
        s.config = config;
        s.key = family.config_key(config);
    };
    auto fallback = [&](const std::string& why) {
        answer(family.default_config(problem));
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
                if (!within_bound(m) || !applies(family, problem, m.config)) continue;
                answer(m.config);
                s.expected_ms = m.median_ms;
                s.error = m.max_rel_error;
                s.measured_problem = problem;
                s.verdict = m.key == w->best.key ? w->verdict : "";
                const bool stale = m.software != current_software(m.config.value("backend", ""));
                s.rung = stale ? "stale" : "exact";
                s.reason = stale ? fmt::format("measured here with other software ({}); re-tune to refresh", m.timestamp)
                                 : fmt::format("fastest of {} validated configurations measured for this problem{}",
                                               w->candidates, bound_text);
                return s;
            }
        }
        const auto measured = db->problems(machine, family.name());
        const std::string cats = categories(family, problem);
        // Nearest problem: same categories and ranks, sizes and ranks per node closest by log ratio.
        std::optional<json> nearest;
        double best_d = 0;
        for (const auto& q : measured) {
            if (categories(family, q) != cats || ranks(q) != ranks(problem)) continue;
            double d = other_node_share(problem, q) ? std::abs(std::log2(double(per_node(problem)) / per_node(q))) : 0;
            d += size_distance(family, problem, q);
            if (!nearest || d < best_d) nearest = q, best_d = d;
        }
        if (nearest) {
            for (const auto& m : db->measurements(*nearest, machine)) {
                if (!within_bound(m) || !applies(family, problem, m.config)) continue;
                answer(m.config);
                s.rung = "nearest";
                s.distance = best_d;
                s.measured_problem = nearest;
                s.error = m.max_rel_error;
                s.expected_ms = m.median_ms * family.work(problem) / family.work(*nearest);
                s.reason = fmt::format("fastest applicable configuration{} of the nearest measured problem {}{} "
                                       "(expected time scaled by the work)",
                                       bound_text, family.size_label(*nearest),
                                       other_node_share(problem, *nearest)
                                           ? fmt::format(" with {} ranks per node (here {})", per_node(*nearest),
                                                         per_node(problem))
                                           : "");
                return s;
            }
        }
        // Same per-rank work at another rank count: measured problems with the same
        // categories, by |log2(work per rank here / there)| (then by rank count
        // ratio); the fastest configuration whose re-derived form applies.
        std::vector<std::tuple<double, double, json>> others;
        const double per_rank = family.work(problem) / ranks(problem);
        for (const auto& q : measured) {
            if (categories(family, q) != cats || ranks(q) == ranks(problem)) continue;
            // One rank exchanged nothing: its transports say nothing about P > 1 (issue 43).
            if (ranks(q) == 1 && ranks(problem) > 1) continue;
            others.emplace_back(std::abs(std::log2(per_rank / (family.work(q) / ranks(q)))),
                                std::abs(std::log(double(ranks(q)) / ranks(problem))), q);
        }
        std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
        });
        for (const auto& [d, rank_ratio, q] : others)
            for (const auto& m : db->measurements(q, machine)) {
                if (!within_bound(m)) continue;
                for (const auto& c : family.adapt_to_ranks(m.config, ranks(problem))) {
                    if (!applies(family, problem, c.config)) continue;
                    answer(c.config);
                    s.rung = "per_rank_size";
                    s.distance = d;
                    s.measured_problem = q;
                    s.error = m.max_rel_error;
                    // Weak scaling: the time follows the work per rank.
                    const double there = family.work(q) / ranks(q);
                    s.expected_ms = m.median_ms * per_rank / there;
                    s.reason = fmt::format(
                        "fastest applicable configuration{} of {} at {} ranks, the measured problem with the nearest "
                        "per-rank size ({:.4g} points per rank there, {:.4g} here), {} (expected time scaled by points "
                        "per rank)",
                        bound_text, family.size_label(q), ranks(q), there, per_rank,
                        c.change.empty() ? "as measured" : c.change);
                    return s;
                }
            }
        // Cost model of the family: calibrations of this machine, else fits to its measurements.
        if (Registry<CostModelRung>::instance().contains(family.name())) {
            const auto mine = db->validated_records(machine, family.name());
            const auto probes = db->probe_records(machine);
            if (!mine.empty() || !probes.empty())
                if (const auto best = Registry<CostModelRung>::instance().create(family.name())->best(problem, mine, probes)) {
                    answer(best->config);
                    s.rung = "model";
                    s.expected_ms = best->expected_ms;
                    s.reason = best->reason;
                    return s;
                }
        }
        const auto machines = db->machines();
        if (!machines.empty() && std::find(machines.begin(), machines.end(), machine) == machines.end())
            return fallback(fmt::format("{} holds measurements of other machines only ({}); this machine is {}", path,
                                        fmt::join(machines, ", "), machine));
        std::string what;
        for (const auto& axis : family.problem_axes())
            if (axis.role == ProblemAxis::Role::category && problem.contains(axis.name))
                what += problem.at(axis.name).get<std::string>() + " ";
        return fallback(fmt::format("{} has no validated {} measurement{} of a {}problem at {} ranks on this machine",
                                    path, family.name(), bound_text, what, ranks(problem)));
    } catch (const std::exception& e) {
        return fallback(fmt::format("{}: lookup failed: {}", path, e.what()));
    }
}

}  // namespace

Selection select(const json& asked, const SelectOptions& options) {
    if (options.max_error)
        if (const auto why = check_max_error(*options.max_error); !why.empty())
            throw std::invalid_argument("max_error " + why);
    const Family& family = family_named(asked.at("kind").get<std::string>());
    double scale = 1;
    std::string note;
    Selection s = select_measured(with_measured_counts(family, asked, options, scale, note), options);
    if (s.rung != "default") {
        if (s.expected_ms) *s.expected_ms *= scale;
        s.reason += note;
    }
    return s;
}

Selection select(const Problem& problem, const SelectOptions& options) { return select(json(problem), options); }

Selection select(MPI_Comm comm, const json& problem, const SelectOptions& options) {
    int rank = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    json here = problem;  // as the runner records it: with this job's ranks per node
    if (per_node(here) == 0) here["ranks_per_node"] = ranks_per_node(comm);
    // Rank 0's answer, or its error: every rank returns the one or throws the other.
    std::string text, error;
    if (rank == 0) try {
            text = json(select(here, options)).dump();
        } catch (const std::exception& e) {
            error = e.what();
        }
    if (auto err = agree_error(comm, error, /*name_rank=*/false)) throw std::runtime_error(*err);
    int len = static_cast<int>(text.size());
    FFTUNE_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
    text.resize(len);
    FFTUNE_MPI_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm));
    return json::parse(text).get<Selection>();
}

Selection select(MPI_Comm comm, const Problem& problem, const SelectOptions& options) {
    return select(comm, json(problem), options);
}

std::unique_ptr<Plan> make_plan(MPI_Comm comm, const Problem& problem, const SelectOptions& options, Selection* chosen) {
    const Selection s = select(comm, problem, options);
    if (chosen) *chosen = s;
    return std::make_unique<Plan>(comm, problem, s.config.get<Config>());
}

std::unique_ptr<Workload> make_workload(MPI_Comm comm, const json& problem, const SelectOptions& options,
                                        Selection* chosen) {
    int ranks = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_size(comm, &ranks));
    if (!problem.is_object() || !problem.contains("kind") || !problem.at("kind").is_string())
        throw std::invalid_argument("make_workload: the problem names no family in \"kind\" (allowed: " +
                                    TestcaseParser::list(Registry<Family>::instance().names()) + ")");
    const Family& family = family_named(problem.at("kind").get<std::string>());
    json full = complete_problem(family, problem);
    full["ranks"] = ranks;
    const Selection s = select(comm, full, options);
    if (chosen) *chosen = s;
    // A count left out: the one measured, else the family's default.
    for (const auto& axis : family.problem_axes())
        if (axis.role == ProblemAxis::Role::count && !full.contains(axis.name))
            full[axis.name] = s.measured_problem && s.measured_problem->contains(axis.name)
                                  ? s.measured_problem->at(axis.name)
                                  : json::array({std::stoll(axis.fallback)});
    Point point;
    point.problem = full;
    point.config = s.config;
    point.key = s.key;
    point.label = family.problem_label(full) + " " + s.key;
    if (auto why = family.not_applicable(full, s.config))
        throw Unsupported(fmt::format("make_workload: {} does not apply to {}: {}", s.key, full.dump(), *why));
    return family.workload(point);
}

}  // namespace fftune
