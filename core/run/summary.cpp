// The sweep's closing summary: status counts, the best plan per problem of
// each family, why points were skipped (tallied), and the failed points.
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/records/provenance.hpp"
#include "core/run/family.hpp"
#include "core/run/runner.hpp"

namespace fftune {

using json = nlohmann::json;

std::string skip_reason_kind(const std::string& reason) {
    // Points skipped for one cause differ in their numbers (ranks, sizes,
    // GiB, bus ids) and in the rank that said it first.
    static const std::regex rank_prefix{R"(^(rank \d+: )+)"}, number{R"(\b\d+(\.\d+)?\b)"};
    std::string kind = std::regex_replace(std::regex_replace(reason, rank_prefix, ""), number, "N");
    if (kind.size() > 100) kind = kind.substr(0, 97) + "...";
    return kind;
}

std::string skip_tally(const std::vector<json>& records) {
    std::map<std::string, int> by_kind;
    for (const auto& r : records)
        if (r.value("status", "") == "skipped") ++by_kind[skip_reason_kind(r.value("reason", "no reason given"))];
    if (by_kind.empty()) return "";
    std::vector<std::pair<int, std::string>> rows;
    for (const auto& [kind, n] : by_kind) rows.emplace_back(-n, kind);
    std::sort(rows.begin(), rows.end());
    constexpr std::size_t shown = 8;
    std::string s = "\nSkipped, by reason (numbers as N):\n";
    for (std::size_t i = 0; i < rows.size() && i < shown; ++i) s += fmt::format("{:>7}  {}\n", -rows[i].first, rows[i].second);
    if (rows.size() > shown) {
        int rest = 0;
        for (std::size_t i = shown; i < rows.size(); ++i) rest -= rows[i].first;
        s += fmt::format("{:>7}  ({} more reasons; every record keeps its own)\n", rest, rows.size() - shown);
    }
    return s;
}

std::string summarize_records(const std::vector<json>& records) {
    std::map<std::string, int> counts;
    struct Best { double ms = 1e300; std::string key; double err = 0; int n = 0; };
    // By family, then by (ranks, problem label): each family's problems in its own columns.
    std::map<std::string, std::map<std::pair<int, std::string>, Best>> best;
    std::vector<std::string> failures;
    auto label_of = [](const json& p) {
        const std::string kind = p.value("kind", "?");
        if (Registry<Family>::instance().contains(kind)) return family_named(kind).problem_label(p);
        return problem_key(p);  // a family this build does not have
    };
    for (const auto& r : records) {
        const std::string status = r.value("status", "?");
        ++counts[status];
        const auto& p = r["problem"];
        const int ranks = p["ranks"].get<int>();
        const std::string label = label_of(p);
        if (status == "failed")
            failures.push_back(fmt::format("{:>5} {}  {}: {}", ranks, label, r.value("key", ""), r.value("error", "")));
        if (status != "ok") continue;
        Best& b = best[p.value("kind", "?")][{ranks, label}];
        ++b.n;
        const double ms = r["timing"]["total"]["median"].get<double>();
        if (ms < b.ms) b = {ms, r.value("key", ""), r["validation"].value("max_rel_error", 0.0), b.n};
    }
    std::string s = "\nSummary: ";
    for (const auto& [k, v] : counts) s += fmt::format("{} {}  ", v, k);
    s += fmt::format("({} points)\n", records.size());
    for (const auto& [kind, problems] : best) {
        const std::string header = Registry<Family>::instance().contains(kind) ? family_named(kind).problem_header()
                                                                               : fmt::format("{:>14}", "problem");
        s += fmt::format("\n{}{:>5} {}  {:>6}  {:>11}  {:>9}  {}\n", best.size() > 1 ? kind + ":\n" : "", "ranks",
                         header, "points", "best ms", "error", "best configuration");
        for (const auto& [problem, b] : problems)
            s += fmt::format("{:>5} {}  {:>6}  {:>11.4g}  {:>9.2g}  {}\n", problem.first, problem.second, b.n, b.ms, b.err,
                             b.key);
    }
    s += skip_tally(records);
    if (!failures.empty()) {
        s += "\nFailed points:\n";
        for (const auto& f : failures) s += "  " + f + "\n";
    }
    return s;
}

}  // namespace fftune
