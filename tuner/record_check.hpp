// What the tuning database stores of a record (results/README.md), and why
// not: ingest checks every line with check_record before it writes it
// (tuner/README.md, "What the database refuses").
//
//  - store: a result record of schema fftune.result/1 or a probe record of
//    fftune.probe/1 whose fields are present, of their types and possible;
//    ok result records validated (validation.passed true), failed and skipped
//    ones with their error or reason (never candidates, but fftune report
//    counts them);
//  - not_validated: an ok result record whose validation did not run
//    (`"validate": false`: validation.passed null): a time without the proof
//    that the plan computes the right thing is not a tuning result;
//  - refused: anything else, with a category and a reason naming the field
//    (as a JSON path), the value and what is allowed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fftune {

struct RecordCheck {
    enum class Use { store, not_validated, refused } use = Use::store;
    // Refused: "unknown schema", "missing field" (absent or of another type)
    // or "impossible value".
    std::string category;
    std::string reason;  // not_validated and refused: why, for the user
};

RecordCheck check_record(const nlohmann::json& record);

// An ok result record whose validation ran and passed: the only kind a tuner
// may pick (validation.passed null, as `"validate": false` writes it, is not).
bool validated_ok(const nlohmann::json& record);

}  // namespace fftune
