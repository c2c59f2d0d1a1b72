#include "tuner/record_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/run/family.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

constexpr const char* result_schema = "fftune.result/1";
constexpr const char* probe_schema = "fftune.probe/1";

struct Refusal {
    std::string category, reason;
};

[[noreturn]] void refuse(const char* category, std::string reason) { throw Refusal{category, std::move(reason)}; }

// A JSON value as the record has it, short enough for a message.
std::string shown(const json& v) {
    std::string s = v.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

const json& field(const json& object, const std::string& path, const std::string& key) {
    if (!object.contains(key)) refuse("missing field", fmt::format("{}/{} is missing", path, key));
    return object.at(key);
}

const json& object_field(const json& object, const std::string& path, const std::string& key) {
    const json& v = field(object, path, key);
    if (!v.is_object()) refuse("missing field", fmt::format("{}/{} {} is not an object", path, key, shown(v)));
    return v;
}

std::string text(const json& object, const std::string& path, const std::string& key) {
    const json& v = field(object, path, key);
    if (!v.is_string() || v.get<std::string>().empty())
        refuse("missing field", fmt::format("{}/{} {} is not a non-empty string", path, key, shown(v)));
    return v.get<std::string>();
}

void optional_text(const json& object, const std::string& path, const std::string& key) {
    if (object.contains(key) && !object.at(key).is_string())
        refuse("missing field", fmt::format("{}/{} {} is not a string", path, key, shown(object.at(key))));
}

std::string one_of(const json& object, const std::string& path, const std::string& key,
                   const std::vector<std::string>& allowed) {
    const std::string v = text(object, path, key);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
        refuse("impossible value", fmt::format("{}/{} '{}' is not a possible value (allowed: {})", path, key, v,
                                               fmt::join(allowed, ", ")));
    return v;
}

// An integer in [min, max]; `what` says what the value counts.
long long integer(const json& v, const std::string& path, long long min, long long max, const char* what) {
    if (!v.is_number_integer()) refuse("missing field", fmt::format("{} {} is not an integer", path, shown(v)));
    // An unsigned value above the largest signed one is out of range with its own sign.
    const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    const long long x = huge ? max : v.get<long long>();
    if (huge || x < min || x > max)
        refuse("impossible value", fmt::format("{} {} is impossible ({}: {}{})", path, v.dump(), what, min,
                                               max == std::numeric_limits<long long>::max()
                                                   ? " or more"
                                                   : fmt::format(" to {}", max)));
    return x;
}

long long integer_field(const json& object, const std::string& path, const std::string& key, long long min,
                        long long max, const char* what) {
    return integer(field(object, path, key), path + "/" + key, min, max, what);
}

constexpr long long unbounded = std::numeric_limits<long long>::max();

// A finite number >= 0 (a time, an error); NaN is written as null.
double non_negative(const json& v, const std::string& path) {
    if (!v.is_number()) refuse("missing field", fmt::format("{} {} is not a number", path, shown(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0)
        refuse("impossible value", fmt::format("{} {} is impossible (allowed: a finite number >= 0)", path, v.dump()));
    return x;
}

// timing.total of an ok record: median and the 99% CI of the median.
void check_timing(const json& r) {
    const json& total = object_field(object_field(r, "", "timing"), "/timing", "total");
    non_negative(field(total, "/timing/total", "median"), "/timing/total/median");
    const json& ci = field(total, "/timing/total", "ci99");
    if (!ci.is_array() || ci.size() != 2)
        refuse("missing field", fmt::format("/timing/total/ci99 {} is not [low, high]", shown(ci)));
    const double lo = non_negative(ci[0], "/timing/total/ci99/0"), hi = non_negative(ci[1], "/timing/total/ci99/1");
    if (lo > hi)
        refuse("impossible value", fmt::format("/timing/total/ci99 {} is impossible (allowed: low <= high)", ci.dump()));
}

void check_machine_and_provenance(const json& r) {
    text(object_field(r, "", "machine"), "/machine", "fingerprint");
    if (!r.contains("provenance")) return;
    const json& p = object_field(r, "", "provenance");
    for (const char* key : {"fftune_version", "mpi_library", "timestamp"}) optional_text(p, "/provenance", key);
    if (p.contains("mpi_gpu_aware") && !p.at("mpi_gpu_aware").is_boolean())
        refuse("missing field",
               fmt::format("/provenance/mpi_gpu_aware {} is not a boolean", shown(p.at("mpi_gpu_aware"))));
}

// The problem's sizes: the family's size axes where it is built (each
// present, as many positive integers as the axis has), otherwise every list
// of numbers in the problem (positive integers).
void check_problem(const json& p) {
    const std::string kind = text(p, "/problem", "kind");
    const long long ranks = integer_field(p, "/problem", "ranks", 1, 1 << 30, "ranks, allowed");
    if (p.contains("ranks_per_node"))
        integer_field(p, "/problem", "ranks_per_node", 1, ranks, "ranks on one node, allowed");
    auto positive_list = [&](const json& v, const std::string& path, int dims) {
        if (!v.is_array() || (dims > 0 && static_cast<int>(v.size()) != dims) || v.empty())
            refuse("missing field", fmt::format("{} {} is not a list of {} positive integers", path, shown(v),
                                                dims > 0 ? std::to_string(dims) : "some"));
        for (std::size_t i = 0; i < v.size(); ++i)
            integer(v[i], fmt::format("{}/{}", path, i), 1, unbounded, "an extent, allowed");
    };
    if (Registry<Family>::instance().contains(kind)) {
        for (const auto& axis : family_named(kind).problem_axes()) {
            const std::string path = "/problem/" + axis.name;
            if (axis.role != ProblemAxis::Role::category)
                positive_list(field(p, "/problem", axis.name), path, axis.dims);
            else if (p.contains(axis.name)) text(p, "/problem", axis.name);
        }
        return;
    }
    for (const auto& [key, v] : p.items())
        if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); }))
            positive_list(v, "/problem/" + key, 0);
}

RecordCheck check_result(const json& r) {
    if (r.contains("kind"))
        refuse("impossible value", fmt::format("/kind {} in a record of schema {} (probe records have schema {})",
                                               shown(r.at("kind")), result_schema, probe_schema));
    const std::string status = one_of(r, "", "status", {"ok", "skipped", "failed"});
    check_problem(object_field(r, "", "problem"));
    field(r, "", "config");
    text(r, "", "key");
    check_machine_and_provenance(r);
    if (status != "ok") return {};
    check_timing(r);
    if (!r.contains("validation"))
        return {RecordCheck::Use::not_validated, "", "an ok record without /validation: not validated"};
    const json& v = object_field(r, "", "validation");
    const json passed = v.value("passed", json());
    if (passed.is_null())
        return {RecordCheck::Use::not_validated, "",
                "/validation/passed is null: not validated (its testcase had \"validate\": false)"};
    if (!passed.is_boolean())
        refuse("missing field", fmt::format("/validation/passed {} is not a boolean", shown(passed)));
    if (!passed.get<bool>())
        refuse("impossible value", "/status ok with /validation/passed false (the runner records a failed validation "
                                   "as status failed)");
    if (v.contains("max_rel_error")) non_negative(v.at("max_rel_error"), "/validation/max_rel_error");
    return {};
}

RecordCheck check_probe(const json& r) {
    if (r.value("kind", json()) != "probe")
        refuse("impossible value", fmt::format("/kind {} in a record of schema {} (allowed: \"probe\")",
                                               shown(r.value("kind", json())), probe_schema));
    const std::string probe = one_of(r, "", "probe", {"exchange", "fft"});
    const std::string status = one_of(r, "", "status", {"ok", "skipped", "failed"});
    text(r, "", "backend");
    const long long world = integer_field(r, "", "world", 1, 1 << 30, "ranks of the probing job, allowed");
    check_machine_and_provenance(r);
    if (probe == "exchange") {
        text(r, "", "transport");
        integer_field(r, "", "peers", 1, world, "ranks exchanging, allowed");
        integer_field(r, "", "bytes_per_peer", 1, unbounded, "bytes, allowed");
    } else {
        text(r, "", "precision");
        integer_field(r, "", "n", 1, unbounded, "a transform length, allowed");
        integer_field(r, "", "batch", 1, unbounded, "transforms per call, allowed");
        text(r, "", "stride");
    }
    if (status != "ok") return {};
    check_timing(r);
    if (probe == "exchange") {
        const json& passed = field(object_field(r, "", "validation"), "/validation", "passed");
        if (!passed.is_boolean())
            refuse("missing field", fmt::format("/validation/passed {} is not a boolean", shown(passed)));
    }
    return {};
}

}  // namespace

RecordCheck check_record(const json& r) {
    try {
        if (!r.is_object()) refuse("missing field", fmt::format("a JSON {}, not a record (an object)", r.type_name()));
        if (!r.contains("schema"))
            refuse("unknown schema", fmt::format("no /schema (allowed: {}, {})", result_schema, probe_schema));
        const json& schema = r.at("schema");
        if (schema == result_schema) return check_result(r);
        if (schema == probe_schema) return check_probe(r);
        refuse("unknown schema", fmt::format("/schema {} is not one this fftune reads (allowed: {}, {}; a newer "
                                             "fftune wrote it?)",
                                             shown(schema), result_schema, probe_schema));
    } catch (const Refusal& e) {
        return {RecordCheck::Use::refused, e.category, e.reason};
    }
}

bool validated_ok(const json& r) {
    if (!r.is_object() || r.value("status", json()) != "ok" || !r.contains("validation")) return false;
    const json& v = r.at("validation");
    return v.is_object() && v.value("passed", json()) == true;
}

}  // namespace fftune
