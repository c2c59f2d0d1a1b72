#include "tuner/strategies.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <functional>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/records/provenance.hpp"
#include "core/run/runner.hpp"
#include "core/run/testcase_parser.hpp"
#include "tuner/record_check.hpp"

namespace fftune {

using json = nlohmann::json;
namespace fs = std::filesystem;

FFTUNE_DEFINE_REGISTRY(Strategy);

std::string problem_signature(const json& r) {
    const json& p = r.at("problem");
    return fmt::format("{}/{}", p.at("ranks").get<int>(), problem_key(p));
}

namespace {

// validation.passed is null in records of "validate": false testcases: not usable.
bool usable(const json& r) { return validated_ok(r); }
double median(const json& r) { return r["timing"]["total"]["median"].get<double>(); }

}  // namespace

std::map<std::string, const json*> best_per_problem(const std::vector<json>& records) {
    std::map<std::string, const json*> best;
    for (const auto& r : records) {
        if (!usable(r)) continue;
        auto& b = best[problem_signature(r)];
        if (!b || median(r) < median(*b)) b = &r;
    }
    return best;
}

struct Round {
    const Testcase& tc;
    std::string testcase_path, out_dir;
    TuneResult& result;
    long long deadline_unix_ms = 0;  // 0: no budget

    bool out_of_time() const { return deadline_unix_ms > 0 && unix_ms_now() >= deadline_unix_ms; }

    // Runs the selected points; returns their records (index -> record) per
    // rank count. Past the deadline: nothing (the budget is spent).
    std::map<int, std::map<int, json>> run(const std::map<int, std::vector<int>>& points, int warmup, int iterations,
                                           bool validate = true) {
        if (out_of_time()) {
            result.budget_spent = true;
            return {};
        }
        const std::string dir = (fs::path(out_dir) / fmt::format("round{}", result.rounds++)).string();
        fs::create_directories(dir);
        PointSelection sel;
        sel.points = points;
        sel.warmup = warmup;
        sel.iterations = iterations;
        sel.deadline_unix_ms = deadline_unix_ms;
        sel.validate = validate;
        const std::string path = (fs::path(dir) / "selection.json").string();
        save_point_selection(sel, path);
        run_sweep(tc, {testcase_path, dir, "", {}, path, /*resume=*/false, {}});  // each round measures anew
        const std::string file = (fs::path(dir) / (sanitize_filename(tc.name) + ".jsonl")).string();
        if (validate) result.validated_files.push_back(file);
        std::map<int, std::map<int, json>> out;
        for (auto& r : read_records(file)) {
            if (r.contains("timing")) {  // skipped points cost nothing
                ++result.points_measured;
                result.point_iterations += warmup + iterations;
            }
            out[r["problem"]["ranks"].get<int>()][r.value("point_index", -1)] = r;
            result.records.push_back(std::move(r));
        }
        if (out_of_time()) result.budget_spent = true;
        return out;
    }
};

namespace {

std::map<int, std::vector<int>> all_points(const Testcase& tc) {
    std::map<int, std::vector<int>> pts;
    for (int r : tc.ranks) {
        const auto n = static_cast<int>(tc.points(r).size());
        for (int i = 0; i < n; ++i) pts[r].push_back(i);
    }
    return pts;
}

class Exhaustive final : public Strategy {
public:
    void search(Round& round) const override { round.run(all_points(round.tc), round.tc.warmup, round.tc.iterations); }
};

class Halving final : public Strategy {
public:
    void search(Round& round) const override;
};

void Halving::search(Round& round) const {
    const Testcase& tc = round.tc;
    auto candidates = all_points(tc);
    int iterations = std::max(1, tc.iterations / 8);
    for (;;) {
        const bool last = iterations >= tc.iterations;
        const auto measured = round.run(candidates, last ? tc.warmup : std::min(tc.warmup, 2), iterations);
        if (last || round.result.budget_spent) break;  // spent: the picks come from the rounds so far
        // Per problem keep the better half, and only those within 1.3x of its best.
        std::map<int, std::vector<int>> next;
        for (const auto& [ranks, recs] : measured) {
            std::map<std::string, std::vector<std::pair<double, int>>> by_problem;
            for (const auto& [index, r] : recs)
                if (usable(r)) by_problem[problem_signature(r)].push_back({median(r), index});
            for (auto& [sig, v] : by_problem) {
                std::sort(v.begin(), v.end());
                const std::size_t keep = std::max<std::size_t>(1, (v.size() + 1) / 2);
                for (std::size_t k = 0; k < v.size() && k < keep; ++k)
                    if (k == 0 || v[k].first <= 1.3 * v[0].first) next[ranks].push_back(v[k].second);
            }
            std::sort(next[ranks].begin(), next[ranks].end());
        }
        candidates = std::move(next);
        iterations = std::min(tc.iterations, iterations * 2);
    }
}

class PhaseSeparable final : public Strategy {
public:
    void search(Round& round) const override;
};

void PhaseSeparable::search(Round& round) const {
    const Testcase& tc = round.tc;
    const Family& family = tc.family();
    std::map<int, std::vector<Point>> points;
    std::set<std::string> methods;
    bool mixed = false;  // a point whose phases use different methods
    std::optional<std::string> fixed;  // phase 1's method while phase 0 is tuned: its axis's first
    for (int r : tc.ranks) {
        points[r] = tc.points(r);
        for (const auto& p : points[r])
            if (const auto split = family.phase_split(p)) {
                if (!fixed) fixed = split->methods[1];
                methods.insert(split->methods.begin(), split->methods.end());
                mixed = mixed || std::adjacent_find(split->methods.begin(), split->methods.end(),
                                                    std::not_equal_to<>()) != split->methods.end();
            }
    }
    // One axis for every phase: (m, fixed) pairs are not in the space, so the
    // search would see only (fixed, fixed).
    if (!mixed && methods.size() > 1)
        throw TestcaseError(fmt::format(
            "{}: --strategy phase tunes the phases one at a time, so it needs \"{}\" (methods per phase); this "
            "testcase gives every phase the same methods ({} of them). Use {}, or --strategy exhaustive or halving",
            round.testcase_path, family.per_phase_key(), methods.size(), family.per_phase_key()));
    std::map<int, std::vector<int>> first;
    for (int r : tc.ranks)
        for (const auto& p : points[r]) {
            const auto split = family.phase_split(p);
            if (!split || split->methods[1] == *fixed) first[r].push_back(p.index);
        }
    const auto measured = round.run(first, tc.warmup, tc.iterations);
    // Best phase-0 method per (ranks, everything but the methods) of the split points.
    std::map<std::string, std::pair<double, std::string>> best0;
    std::map<int, std::vector<int>> second;
    for (int r : tc.ranks) {
        const auto& pts = points[r];
        auto it = measured.find(r);
        if (it == measured.end()) continue;
        for (const auto& [index, rec] : it->second) {
            const auto split = family.phase_split(pts.at(index));
            if (!split || !usable(rec)) continue;
            auto& b = best0[std::to_string(r) + "/" + split->rest];
            if (b.second.empty() || median(rec) < b.first) b = {median(rec), split->methods[0]};
        }
        for (const auto& p : pts) {
            const auto split = family.phase_split(p);
            if (!split || split->methods[1] == *fixed) continue;
            auto b = best0.find(std::to_string(r) + "/" + split->rest);
            if (b != best0.end() && split->methods[0] == b->second.second) second[r].push_back(p.index);
        }
    }
    if (!second.empty()) round.run(second, tc.warmup, tc.iterations);
}

class Screen final : public Strategy {
public:
    void search(Round& round) const override;
};

void Screen::search(Round& round) const {
    const Testcase& tc = round.tc;
    // No warm-up: the median of 3 ignores the first call's one-time costs.
    const auto screened = round.run(all_points(tc), 0, std::min(tc.iterations, screen_iterations), /*validate=*/false);
    // Per (ranks, problem): the screened points, fastest first.
    std::map<std::string, std::pair<int, std::vector<std::pair<double, int>>>> ranking;
    for (const auto& [ranks, recs] : screened)
        for (const auto& [index, r] : recs)
            if (r.value("status", "") == "ok" && r.contains("timing")) {
                auto& e = ranking[problem_signature(r)];
                e.first = ranks;
                e.second.push_back({median(r), index});
            }
    for (auto& [sig, e] : ranking) std::sort(e.second.begin(), e.second.end());
    // Confirm: each problem's next candidates, within the margin of its
    // fastest, until one validates; then, if none did, the rest in order.
    std::map<std::string, std::size_t> next;  // per problem: position of its next candidate
    std::set<std::string> settled;
    for (int pass = 0; !round.result.budget_spent; ++pass) {
        std::map<int, std::vector<int>> candidates;
        for (const auto& [sig, e] : ranking) {
            if (settled.count(sig)) continue;
            const auto& v = e.second;
            std::size_t& k = next[sig];
            for (int taken = 0; k < v.size() && taken < screen_candidates; ++k, ++taken) {
                if (pass == 0 && k > 0 && v[k].first > screen_margin * v[0].first) break;
                candidates[e.first].push_back(v[k].second);
            }
        }
        for (auto& [r, list] : candidates) std::sort(list.begin(), list.end());
        std::erase_if(candidates, [](const auto& c) { return c.second.empty(); });
        if (candidates.empty()) break;
        for (const auto& [ranks, recs] : round.run(candidates, tc.warmup, tc.iterations))
            for (const auto& [index, r] : recs)
                if (usable(r)) settled.insert(problem_signature(r));
    }
}

const bool registered = register_variant<Strategy, Exhaustive>("exhaustive") &&
                        register_variant<Strategy, Screen>("screen") &&
                        register_variant<Strategy, PhaseSeparable>("phase") &&
                        register_variant<Strategy, Halving>("halving");

}  // namespace

void check_tunable(const Testcase& tc, const std::string& testcase_path) {
    if (!tc.validate)
        throw TestcaseError(fmt::format(
            "{}: /validate: false: fftune tune stores only validated plans, so it would measure every point and store "
            "none (allowed: true, or leave it out; fftune run measures without validation)",
            testcase_path));
}

TuneResult tune(const Testcase& tc, const std::string& testcase_path, const std::string& out_dir,
                const std::string& strategy, long long deadline_unix_ms) {
    if (!Registry<Strategy>::instance().contains(strategy))
        throw std::invalid_argument(fmt::format("unknown strategy '{}' (allowed: {})", strategy,
                                                TestcaseParser::list(Registry<Strategy>::instance().names())));
    check_tunable(tc, testcase_path);
    TuneResult result;
    result.strategy = strategy;
    for (int r : tc.ranks) result.points_in_space += static_cast<int>(tc.points(r).size());
    Round round{tc, testcase_path, out_dir, result, deadline_unix_ms};
    Registry<Strategy>::instance().create(strategy)->search(round);
    // Picks come from the last measurement of each configuration (the most iterations).
    std::map<std::pair<std::string, std::string>, const json*> last;
    for (const auto& r : result.records)
        if (usable(r)) last[{problem_signature(r), r.at("key").get<std::string>()}] = &r;
    std::map<std::string, std::pair<double, std::string>> pick;
    for (const auto& [k, r] : last) {
        auto& p = pick[k.first];
        if (p.second.empty() || median(*r) < p.first) p = {median(*r), k.second};
    }
    for (const auto& [sig, p] : pick) result.picks[sig] = p.second;
    std::set<std::pair<int, int>> covered;  // (ranks, point index) measured in any round
    for (const auto& r : result.records)
        if (r.contains("timing")) covered.insert({r["problem"]["ranks"].get<int>(), r.value("point_index", -1)});
    result.points_covered = static_cast<int>(covered.size());
    return result;
}

std::optional<double> parse_duration(const std::string& text) {
    static const std::map<char, double> unit{{'s', 1}, {'m', 60}, {'h', 3600}};
    double total = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t j = i;
        while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
        if (j == i) return std::nullopt;
        double v = 0;
        try {
            v = std::stod(text.substr(i, j - i));
        } catch (const std::exception&) {
            return std::nullopt;
        }
        if (j == text.size()) {  // a bare number: seconds, and only alone
            if (i != 0) return std::nullopt;
            total = v;
            break;
        }
        const auto u = unit.find(text[j]);
        if (u == unit.end()) return std::nullopt;
        total += v * u->second;
        i = j + 1;
    }
    if (!(total > 0) || !std::isfinite(total)) return std::nullopt;
    return total;
}

namespace {
// Seconds of host wall time the records' points took (timing.wall_ms: set-up,
// prepare, timed, validate), and of it the timed iterations.
std::pair<double, double> wall_seconds(const std::vector<json>& records) {
    double all = 0, timed = 0;
    for (const auto& r : records) {
        if (!r.contains("timing") || !r["timing"].contains("wall_ms")) continue;
        for (const auto& [part, ms] : r["timing"]["wall_ms"].items()) all += ms.get<double>() / 1000;
        timed += r["timing"]["wall_ms"].value("timed", 0.0) / 1000;
    }
    return {all, timed};
}
}  // namespace

std::string compare_with_exhaustive(const TuneResult& result, const std::vector<json>& exhaustive) {
    std::map<std::pair<std::string, std::string>, double> t;
    long long full_cost = 0;
    for (const auto& r : exhaustive) {
        if (r.contains("timing")) full_cost += r["timing"].value("warmup", 0) + r["timing"].value("iterations", 0);
        if (usable(r)) t[{problem_signature(r), r.at("key").get<std::string>()}] = median(r);
    }
    const auto best = best_per_problem(exhaustive);
    int problems = 0, same = 0, within5 = 0, within10 = 0, missing = 0;
    double worst = 1, sum = 0;
    for (const auto& [sig, b] : best) {
        auto pick = result.picks.find(sig);
        if (pick == result.picks.end()) {
            ++missing;
            continue;
        }
        auto it = t.find({sig, pick->second});
        if (it == t.end()) {
            ++missing;
            continue;
        }
        const double ratio = it->second / median(*b);
        ++problems;
        same += pick->second == b->at("key").get<std::string>();
        within5 += ratio <= 1.05;
        within10 += ratio <= 1.10;
        worst = std::max(worst, ratio);
        sum += ratio;
    }
    const auto [wall, timed] = wall_seconds(result.records);
    const auto [full_wall, full_timed] = wall_seconds(exhaustive);
    return fmt::format(
        "strategy {}: {} problems; pick = exhaustive best in {}, within 5% in {}, within 10% in {}; pick time / best "
        "time: mean {:.3f}, worst {:.3f}{}; cost {} point-iterations in {} points over {} rounds = {:.1f}% of "
        "exhaustive ({}); point wall time {:.1f} s = {:.1f}% of exhaustive's {:.1f} s (timed iterations {:.1f} s "
        "against {:.1f} s)\n",
        result.strategy, problems, same, within5, within10, problems ? sum / problems : 0.0, worst,
        missing ? fmt::format(" ({} problems without a comparable pick)", missing) : "", result.point_iterations,
        result.points_measured, result.rounds, full_cost ? 100.0 * result.point_iterations / full_cost : 0.0, full_cost,
        wall, full_wall > 0 ? 100.0 * wall / full_wall : 0.0, full_wall, timed, full_timed);
}

}  // namespace fftune
