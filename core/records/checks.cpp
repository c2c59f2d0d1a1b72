#include "core/records/checks.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace fftune {

Check make_check(std::string method, double value, double tolerance) {
    Check c;
    c.method = std::move(method);
    c.max_rel_error = value;
    c.tolerance = tolerance;
    c.passed = value <= tolerance;  // false for NaN
    return c;
}

bool ValidationResult::passed() const {
    return !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.passed; });
}

void to_json(nlohmann::json& j, const ValidationResult& v) {
    const Check& p = v.primary();
    j = nlohmann::json{{"method", p.method},
                       {"max_rel_error", p.max_rel_error},
                       {"tolerance", p.tolerance},
                       {"passed", v.passed()},
                       {"checks", nlohmann::json::array()}};
    if (p.l2_rel_error) j["l2_rel_error"] = *p.l2_rel_error;
    for (const auto& c : v.checks) {
        nlohmann::json cj{{"method", c.method}, {"max_rel_error", c.max_rel_error}, {"tolerance", c.tolerance},
                          {"passed", c.passed}};
        if (c.l2_rel_error) cj["l2_rel_error"] = *c.l2_rel_error;
        j["checks"].push_back(std::move(cj));
    }
    if (!v.parts_ms.empty()) {
        j["parts_ms"] = nlohmann::json::object();
        for (const auto& [part, ms] : v.parts_ms) j["parts_ms"][part] = ms;
    }
}

}  // namespace fftune
