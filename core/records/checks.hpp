// The outcome of a point's validation: named checks, each an error against
// its tolerance (DESIGN.md section 4). Every family validates into this; the
// record's "validation" field is its JSON form (results/README.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fftune {

struct Check {
    std::string method;
    double max_rel_error = 0;  // the compared quantity: checked against the tolerance
    double tolerance = 0;
    bool passed = false;
    std::optional<double> l2_rel_error;  // ||error||_2 / ||reference||_2, where the check computes it
};

// `value` within `tolerance`; NaN never passes.
Check make_check(std::string method, double value, double tolerance);

struct ValidationResult {
    std::vector<Check> checks;  // the first is the primary one
    // Where its host wall time went, by part in order, where the check says (ms).
    std::vector<std::pair<std::string, double>> parts_ms;
    bool passed() const;
    const Check& primary() const { return checks.front(); }
};

// {method, max_rel_error, tolerance, passed (of every check), checks: [...]},
// the primary check's fields first.
void to_json(nlohmann::json& j, const ValidationResult& v);

}  // namespace fftune
