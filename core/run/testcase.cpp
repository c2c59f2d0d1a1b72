#include "core/run/testcase.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/platform/backend.hpp"
#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

struct Parser {
    std::string source;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw TestcaseError(fmt::format("{}: {}: {}", source, path.empty() ? "/" : path, what));
    }
    static std::string show(const json& v) { return v.dump(); }
    static std::string list(const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
    }

    // An axis is a single value, a list of values, or "all".
    std::vector<std::string> names_axis(const json& j, const std::string& path,
                                        const std::vector<std::string>& allowed) const {
        if (j.is_string() && j.get<std::string>() == "all") return allowed;
        std::vector<json> items;
        if (j.is_array()) {
            if (j.empty()) fail(path, "empty list (give a value, a list of values, or \"all\")");
            items.assign(j.begin(), j.end());
        } else {
            items.push_back(j);
        }
        std::vector<std::string> out;
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string p = j.is_array() ? fmt::format("{}/{}", path, i) : path;
            if (!items[i].is_string())
                fail(p, fmt::format("{} is not a string (allowed: {}, or \"all\")", show(items[i]), list(allowed)));
            const auto v = items[i].get<std::string>();
            if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
                fail(p, fmt::format("unknown value '{}' (allowed: {}, or \"all\")", v, list(allowed)));
            if (std::find(out.begin(), out.end(), v) != out.end()) fail(p, fmt::format("'{}' appears twice", v));
            out.push_back(v);
        }
        return out;
    }

    template <class E>
    std::vector<E> enum_axis(const json& j, const std::string& path) const {
        std::vector<E> out;
        for (const auto& n : names_axis(j, path, all_names<E>())) out.push_back(parse<E>(n));
        return out;
    }

    int positive_int(const json& j, const std::string& path, int min) const {
        if (!j.is_number_integer()) fail(path, fmt::format("{} is not an integer", show(j)));
        const auto v = j.get<long long>();
        if (v < min || v > 1 << 30) fail(path, fmt::format("{} is out of range (allowed: {} to {})", v, min, 1 << 30));
        return static_cast<int>(v);
    }
};

}  // namespace

std::array<int, 2> auto_grid(int p) {
    int best = 1;
    for (int a = 1; a * a <= p; ++a)
        if (p % a == 0) best = a;
    return {p / best, best};
}

std::vector<std::array<int, 2>> all_grids(int p) {
    std::vector<std::array<int, 2>> out;
    for (int a = 1; a <= p; ++a)
        if (p % a == 0) out.push_back({a, p / a});
    return out;
}

Testcase parse_testcase(const json& j, const std::string& source) {
    Parser ps{source};
    if (!j.is_object()) ps.fail("", "a testcase must be a JSON object");
    static const std::set<std::string> known{
        "name", "problem", "sizes", "ranks", "precision", "direction", "decomposition", "layout",
        "redistribution", "redistribution_phases", "process_grid", "backend", "gpu_aware", "overlap",
        "warmup", "iterations", "validate", "point_timeout_s", "launcher", "description"};
    for (const auto& [key, value] : j.items())
        if (!known.count(key)) {
            std::string allowed;
            for (const auto& k : known) allowed += (allowed.empty() ? "" : ", ") + k;
            ps.fail("/" + key, fmt::format("unknown key (allowed: {})", allowed));
        }
    auto require = [&](const char* key) -> const json& {
        if (!j.contains(key)) ps.fail(std::string("/") + key, "missing required key");
        return j.at(key);
    };

    Testcase tc;
    const json& name = require("name");
    if (!name.is_string() || name.get<std::string>().empty())
        ps.fail("/name", fmt::format("{} is not a non-empty string", name.dump()));
    tc.name = name.get<std::string>();
    tc.problem = ps.names_axis(require("problem"), "/problem", {"fft3d"}).front();

    const json& sizes = require("sizes");
    std::vector<json> size_items;
    if (sizes.is_array()) size_items.assign(sizes.begin(), sizes.end());
    else size_items.push_back(sizes);
    if (size_items.empty()) ps.fail("/sizes", "empty list (give N or [Nx, Ny, Nz] entries)");
    for (std::size_t i = 0; i < size_items.size(); ++i) {
        const std::string p = sizes.is_array() ? fmt::format("/sizes/{}", i) : "/sizes";
        const json& s = size_items[i];
        std::array<index_t, 3> n{};
        if (s.is_number_integer()) {
            const int v = ps.positive_int(s, p, 1);
            n = {v, v, v};
        } else if (s.is_array() && s.size() == 3) {
            for (int a = 0; a < 3; ++a) n[a] = ps.positive_int(s[a], fmt::format("{}/{}", p, a), 1);
        } else {
            ps.fail(p, fmt::format("{} is not a size (allowed: N or [Nx, Ny, Nz] with positive integers)", s.dump()));
        }
        if (n[0] * n[1] * n[2] > (index_t{1} << 40))
            ps.fail(p, fmt::format("{} has more than 2^40 points", size_string(n)));
        tc.sizes.push_back(n);
    }

    const json& ranks = require("ranks");
    if (ranks.is_array()) {
        if (ranks.empty()) ps.fail("/ranks", "empty list");
        for (std::size_t i = 0; i < ranks.size(); ++i)
            tc.ranks.push_back(ps.positive_int(ranks[i], fmt::format("/ranks/{}", i), 1));
    } else {
        tc.ranks.push_back(ps.positive_int(ranks, "/ranks", 1));
    }

    tc.precisions = ps.enum_axis<Precision>(j.value("precision", json("double")), "/precision");
    tc.directions = ps.enum_axis<Direction>(j.value("direction", json("forward")), "/direction");
    tc.layouts = ps.enum_axis<LayoutVariant>(j.value("layout", json("all")), "/layout");
    tc.decompositions = ps.names_axis(j.value("decomposition", json("all")), "/decomposition",
                                      Registry<Decomposition>::instance().names());
    tc.backends = ps.names_axis(j.value("backend", json("fftw")), "/backend",
                                Registry<Backend>::instance().names());
    const auto methods = Registry<Transport>::instance().names();
    tc.redistribution = {ps.names_axis(j.value("redistribution", json("all")), "/redistribution", methods)};
    if (j.contains("redistribution_phases")) {
        const json& ph = j.at("redistribution_phases");
        if (!ph.is_array() || ph.size() != 2)
            ps.fail("/redistribution_phases", fmt::format("{} is not a list of two axes (phase 0, phase 1)", ph.dump()));
        tc.redistribution = {ps.names_axis(ph[0], "/redistribution_phases/0", methods),
                             ps.names_axis(ph[1], "/redistribution_phases/1", methods)};
    }

    const json grid = j.value("process_grid", json("auto"));
    if (grid.is_string() && grid.get<std::string>() == "auto") {
        tc.grid_mode = Testcase::GridMode::automatic;
    } else if (grid.is_string() && grid.get<std::string>() == "all") {
        tc.grid_mode = Testcase::GridMode::all;
    } else if (grid.is_array() && !grid.empty()) {
        tc.grid_mode = Testcase::GridMode::list;
        for (std::size_t i = 0; i < grid.size(); ++i) {
            const std::string p = fmt::format("/process_grid/{}", i);
            if (!grid[i].is_array() || grid[i].size() != 2)
                ps.fail(p, fmt::format("{} is not [P1, P2]", grid[i].dump()));
            tc.grids.push_back({ps.positive_int(grid[i][0], p + "/0", 1), ps.positive_int(grid[i][1], p + "/1", 1)});
        }
    } else {
        ps.fail("/process_grid", fmt::format("{} is not a process grid axis (allowed: \"auto\", \"all\", or a list of [P1, P2])", grid.dump()));
    }

    for (std::size_t i = 0; i < tc.grids.size(); ++i) {
        const int n = tc.grids[i][0] * tc.grids[i][1];
        if (std::find(tc.ranks.begin(), tc.ranks.end(), n) == tc.ranks.end())
            ps.fail(fmt::format("/process_grid/{}", i),
                    fmt::format("{}x{} needs {} ranks, which /ranks ({}) does not list", tc.grids[i][0],
                                tc.grids[i][1], n, fmt::join(tc.ranks, ", ")));
    }

    const json ga = j.value("gpu_aware", json(false));
    if (ga.is_string() && ga.get<std::string>() == "all") {
        tc.gpu_aware = {false, true};
    } else if (ga.is_boolean()) {
        tc.gpu_aware = {ga.get<bool>()};
    } else if (ga.is_array() && !ga.empty()) {
        for (std::size_t i = 0; i < ga.size(); ++i) {
            if (!ga[i].is_boolean())
                ps.fail(fmt::format("/gpu_aware/{}", i), fmt::format("{} is not a boolean (allowed: true, false, or \"all\")", ga[i].dump()));
            tc.gpu_aware.push_back(ga[i].get<bool>());
        }
    } else {
        ps.fail("/gpu_aware", fmt::format("{} is not a boolean axis (allowed: true, false, a list of them, or \"all\")", ga.dump()));
    }

    // Overlap chunks: K or a list of them; 1 is no overlap.
    const json ov = j.value("overlap", json(1));
    if (ov.is_array() && ov.empty()) ps.fail("/overlap", "empty list (give chunk counts, 1 for no overlap)");
    tc.overlap.clear();
    for (std::size_t i = 0; i < (ov.is_array() ? ov.size() : 1); ++i) {
        const std::string p = ov.is_array() ? fmt::format("/overlap/{}", i) : "/overlap";
        const int k = ps.positive_int(ov.is_array() ? ov[i] : ov, p, 1);
        if (k > max_overlap_chunks)
            ps.fail(p, fmt::format("{} chunks is out of range (allowed: 1 to {})", k, max_overlap_chunks));
        tc.overlap.push_back(k);
    }

    if (j.contains("warmup")) tc.warmup = ps.positive_int(j.at("warmup"), "/warmup", 0);
    if (j.contains("iterations")) tc.iterations = ps.positive_int(j.at("iterations"), "/iterations", 1);
    if (j.contains("point_timeout_s")) {
        const json& t = j.at("point_timeout_s");
        if (!t.is_number() || t.get<double>() < 0 || !std::isfinite(t.get<double>()))
            ps.fail("/point_timeout_s", fmt::format("{} is not allowed (allowed: seconds, a number > 0, or 0 for no limit)",
                                                    t.dump()));
        tc.point_timeout_s = t.get<double>();
    }
    if (j.contains("validate")) {
        if (!j.at("validate").is_boolean()) ps.fail("/validate", fmt::format("{} is not a boolean", j.at("validate").dump()));
        tc.validate = j.at("validate").get<bool>();
    }
    if (j.contains("description") && !j.at("description").is_string())
        ps.fail("/description", "is not a string");
    if (j.contains("launcher")) {
        const json& l = j.at("launcher");
        if (!l.is_object()) ps.fail("/launcher", "is not an object {\"command\": ..., \"args\": [...]}");
        for (const auto& [key, value] : l.items()) {
            if (key == "command") {
                if (!value.is_string() || value.get<std::string>().empty())
                    ps.fail("/launcher/command", fmt::format("{} is not a command name", value.dump()));
                tc.launcher = value.get<std::string>();
            } else if (key == "args") {
                if (!value.is_array()) ps.fail("/launcher/args", "is not a list of strings");
                for (std::size_t i = 0; i < value.size(); ++i) {
                    if (!value[i].is_string()) ps.fail(fmt::format("/launcher/args/{}", i), "is not a string");
                    tc.launcher_args.push_back(value[i].get<std::string>());
                }
            } else {
                ps.fail("/launcher/" + key, "unknown key (allowed: args, command)");
            }
        }
    }
    return tc;
}

Testcase load_testcase(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw TestcaseError(path + ": cannot open the file");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        throw TestcaseError(fmt::format("{}: malformed JSON: {}", path, e.what()));
    }
    return parse_testcase(j, path);
}

std::vector<Point> Testcase::points(int p) const {
    std::vector<Point> out;
    auto& decomps = Registry<Decomposition>::instance();
    for (const auto& size : sizes)
        for (const auto& dname : decompositions) {
            const auto decomposition = decomps.create(dname);
            std::vector<std::array<int, 2>> gs;
            if (!decomposition->uses_process_grid()) gs = {{p, 1}};
            else if (grid_mode == GridMode::automatic) gs = {auto_grid(p)};
            else if (grid_mode == GridMode::all) gs = all_grids(p);
            else gs = grids;
            // Methods: "redistribution" uses each method for every phase;
            // "redistribution_phases" takes the product of the per-phase axes.
            const int phases = decomposition->redistribution_phases();
            std::vector<std::vector<std::string>> combos;
            if (redistribution.size() == 1) {
                for (const auto& m : redistribution[0]) combos.push_back(std::vector<std::string>(phases, m));
                if (phases == 0) combos = {{}};
            } else {
                combos = {{}};
                for (int ph = 0; ph < phases; ++ph) {
                    std::vector<std::vector<std::string>> next;
                    for (const auto& c : combos)
                        for (const auto& m : redistribution[ph]) {
                            next.push_back(c);
                            next.back().push_back(m);
                        }
                    combos = std::move(next);
                }
            }
            for (auto layout : layouts)
                for (const auto& grid : gs)
                    for (const auto& methods : combos)
                        for (auto precision : precisions)
                            for (auto direction : directions)
                                for (const auto& backend : backends)
                                    for (bool aware : gpu_aware)
                                        for (int chunks : overlap) {
                                            Point pt;
                                            pt.index = static_cast<int>(out.size());
                                            pt.problem = {problem, size, precision, direction, p};
                                            pt.config = {backend, dname, layout, grid, methods, aware, chunks};
                                            out.push_back(std::move(pt));
                                        }
        }
    return out;
}

}  // namespace fftune
