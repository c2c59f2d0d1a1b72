#include "core/run/family.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fftune {

using json = nlohmann::json;

FFTUNE_DEFINE_REGISTRY(Family);

std::vector<Precision> problem_precisions(const json& problem) {
    const auto it = problem.find("precision");
    if (it == problem.end() || !it->is_string()) return {};
    if (const auto p = try_parse<Precision>(it->get<std::string>())) return {*p};
    return {};
}

std::vector<Precision> Family::precisions(const Point& point) const { return problem_precisions(point.problem); }

std::string problem_key(const json& problem) {
    json p = problem;
    p.erase("ranks");
    p.erase("ranks_per_node");
    return p.dump();  // object keys sorted: canonical
}

double Family::work(const json& problem) const {
    double w = 1;
    for (const auto& axis : problem_axes())
        if (axis.role != ProblemAxis::Role::category && problem.contains(axis.name))
            for (const auto& n : problem.at(axis.name)) w *= n.get<double>();
    return w;
}

std::string Family::problem_label(const json& problem) const {
    std::string s;
    for (const auto& axis : problem_axes()) {
        if (!problem.contains(axis.name)) continue;
        const json& v = problem.at(axis.name);
        std::string text;
        if (v.is_array())
            for (const auto& n : v) text += (text.empty() ? "" : "x") + (n.is_string() ? n.get<std::string>() : n.dump());
        else
            text = v.is_string() ? v.get<std::string>() : v.dump();
        s += fmt::format("{}{:>10}", s.empty() ? "" : " ", text);
    }
    return s;
}

std::string Family::size_label(const json& problem) const {
    std::string s;
    for (const auto& axis : problem_axes()) {
        if (axis.role != ProblemAxis::Role::size || !problem.contains(axis.name)) continue;
        std::string one;
        for (const auto& n : problem.at(axis.name)) one += (one.empty() ? "" : "x") + n.dump();
        s += (s.empty() ? "" : " ") + one;
    }
    return s;
}

std::string Family::problem_header() const {
    std::string s;
    for (const auto& axis : problem_axes()) s += fmt::format("{}{:>10}", s.empty() ? "" : " ", axis.name);
    return s;
}

const Family& family_named(const std::string& name) {
    // One instance per family for the process: families hold no state.
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<Family>> made;
    std::lock_guard lock(mutex);
    auto& f = made[name];
    if (!f) f = Registry<Family>::instance().create(name);
    return *f;
}

std::string fallback_of(const ProblemAxis& axis, const json& problem) {
    return axis.fallback_from ? axis.fallback_from(problem) : axis.fallback;
}

json complete_problem(const Family& family, json given) {
    for (const auto& a : family.problem_axes()) {
        if (a.role != ProblemAxis::Role::category) continue;
        if (!given.contains(a.name)) given[a.name] = fallback_of(a, given);
        const json& v = given.at(a.name);
        if (!v.is_string() || std::find(a.values.begin(), a.values.end(), v.get<std::string>()) == a.values.end())
            throw std::invalid_argument(fmt::format("problem {}: {} {} is not one of its values (allowed: {})",
                                                    family.name(), a.name, v.dump(), fmt::join(a.values, ", ")));
    }
    return given;
}

std::string problem_help(const Family& family) {
    std::string out = fmt::format("Problem {}: {}\n", family.name(), family.summary());
    const auto axes = family.problem_axes();
    for (const auto& a : axes) {
        std::string what;
        if (a.role == ProblemAxis::Role::size) {
            what = a.dims == 1 ? "N, required" : fmt::format("N or {} numbers, required", a.dims);
        } else if (a.role == ProblemAxis::Role::count) {
            what = fmt::format("N, optional (default: the count measured, else {}; times scale with it)", a.fallback);
        } else if (a.fallback_from) {
            // The default for each value of the axis it follows.
            std::vector<std::string> rules;
            for (const auto& b : axes)
                if (b.name == a.follows)
                    for (const auto& v : b.values) rules.push_back(v + " -> " + a.fallback_from(json{{b.name, v}}));
            what = fmt::format("{} (default follows --{}: {})", fmt::join(a.values, " | "), a.follows,
                               fmt::join(rules, ", "));
        } else {
            what = fmt::format("{} (default {})", fmt::join(a.values, " | "), a.fallback);
        }
        out += fmt::format("  --{:<12} {}: {}\n", a.name, what, a.help);
    }
    return out;
}

json describe(const Family& family) {
    json axes = json::array();
    for (const auto& a : family.problem_axes())
        axes.push_back({{"name", a.name},
                        {"role", a.role == ProblemAxis::Role::size    ? "size"
                                 : a.role == ProblemAxis::Role::count ? "count"
                                                                      : "category"},
                        {"values", a.values},
                        {"fallback", a.fallback},
                        {"dims", a.dims},
                        {"help", a.help}});
    return {{"name", family.name()},
            {"summary", family.summary()},
            {"problem_axes", axes},
            {"config_axes", family.config_axes()}};
}

}  // namespace fftune
