#include "core/run/engine_axes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/base/registry.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/transport.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

bool usable(const Backend& b) { return !b.unavailable(); }

bool applies(const Problem& p, const Config& c) {
    try {
        return !check_applicable(p, c);
    } catch (const std::exception&) {
        return false;  // a name this build does not have
    }
}

}  // namespace

const std::vector<std::string>& engine_axis_keys() {
    static const std::vector<std::string> keys{"decomposition", "layout",    "redistribution", "redistribution_phases",
                                               "process_grid",  "backend",   "gpu_aware",      "overlap",
                                               "fft_stores_kept"};
    return keys;
}

EngineAxes parse_engine_axes(const TestcaseParser& ps, const json& j, const std::vector<int>& ranks) {
    EngineAxes a;
    a.layouts = ps.enum_axis<LayoutVariant>(TestcaseParser::value_or(j, "layout", "all"), "/layout");
    a.decompositions = ps.names_axis(TestcaseParser::value_or(j, "decomposition", "all"), "/decomposition",
                                       Registry<Decomposition>::instance().names());
    a.backends = ps.names_axis(TestcaseParser::value_or(j, "backend", "fftw"), "/backend",
                                 Registry<Backend>::instance().names());
    const auto methods = Registry<Transport>::instance().names();
    a.redistribution = {
        ps.names_axis(TestcaseParser::value_or(j, "redistribution", "all"), "/redistribution", methods)};
    if (j.contains("redistribution_phases")) {
        // Either one axis for every phase or one per phase: both would silently drop one.
        if (j.contains("redistribution"))
            ps.fail("/redistribution_phases",
                    fmt::format("given together with /redistribution {} (allowed: one of them: \"redistribution\" "
                                "uses each method in every phase, \"redistribution_phases\" takes one axis per "
                                "phase)",
                                j.at("redistribution").dump()));
        const json& ph = j.at("redistribution_phases");
        if (!ph.is_array() || ph.size() != 2)
            ps.fail("/redistribution_phases",
                    fmt::format("{} is not a list of two axes (phase 0, phase 1)", ph.dump()));
        a.redistribution = {ps.names_axis(ph[0], "/redistribution_phases/0", methods),
                              ps.names_axis(ph[1], "/redistribution_phases/1", methods)};
    }

    const json grid = TestcaseParser::value_or(j, "process_grid", "auto");
    if (grid.is_string() && grid.get<std::string>() == "auto") {
        a.grid_mode = EngineAxes::GridMode::automatic;
    } else if (grid.is_string() && grid.get<std::string>() == "all") {
        a.grid_mode = EngineAxes::GridMode::all;
    } else if (grid.is_array() && !grid.empty()) {
        a.grid_mode = EngineAxes::GridMode::list;
        for (std::size_t i = 0; i < grid.size(); ++i) {
            const std::string p = fmt::format("/process_grid/{}", i);
            if (!grid[i].is_array() || grid[i].size() != 2)
                ps.fail(p, fmt::format("{} is not [P1, P2]", grid[i].dump()));
            a.grids.push_back({ps.integer(grid[i][0], p + "/0", 1), ps.integer(grid[i][1], p + "/1", 1)});
        }
    } else {
        ps.fail("/process_grid", fmt::format("{} is not a process grid axis (allowed: \"auto\", \"all\", or a list "
                                             "of [P1, P2])",
                                             grid.dump()));
    }
    for (std::size_t i = 0; i < a.grids.size(); ++i) {
        const int n = a.grids[i][0] * a.grids[i][1];
        if (std::find(ranks.begin(), ranks.end(), n) == ranks.end())
            ps.fail(fmt::format("/process_grid/{}", i),
                    fmt::format("{}x{} needs {} ranks, which /ranks ({}) does not list", a.grids[i][0],
                                a.grids[i][1], n, fmt::join(ranks, ", ")));
    }

    // A boolean axis: true, false, a list of them, or "all".
    auto bool_axis = [&](const char* key) {
        const json v = TestcaseParser::value_or(j, key, false);
        const std::string path = fmt::format("/{}", key);
        std::vector<bool> out;
        if (v.is_string() && v.get<std::string>() == "all") {
            out = {false, true};
        } else if (v.is_boolean()) {
            out = {v.get<bool>()};
        } else if (v.is_array() && !v.empty()) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                if (!v[i].is_boolean())
                    ps.fail(fmt::format("{}/{}", path, i),
                            fmt::format("{} is not a boolean (allowed: true, false, or \"all\")", v[i].dump()));
                out.push_back(v[i].get<bool>());
            }
        } else {
            ps.fail(path, fmt::format("{} is not a boolean axis (allowed: true, false, a list of them, or "
                                      "\"all\")",
                                      v.dump()));
        }
        return out;
    };
    a.gpu_aware = bool_axis("gpu_aware");
    a.fft_stores_kept = bool_axis("fft_stores_kept");

    // Overlap chunks: K or a list of them; 1 is no overlap.
    const json ov = TestcaseParser::value_or(j, "overlap", 1);
    if (ov.is_array() && ov.empty()) ps.fail("/overlap", "empty list (give chunk counts, 1 for no overlap)");
    a.overlap.clear();
    for (std::size_t i = 0; i < (ov.is_array() ? ov.size() : 1); ++i) {
        const std::string p = ov.is_array() ? fmt::format("/overlap/{}", i) : "/overlap";
        const int k = ps.integer(ov.is_array() ? ov[i] : ov, p, 1);
        if (k > max_overlap_chunks)
            ps.fail(p, fmt::format("{} chunks is out of range (allowed: 1 to {})", k, max_overlap_chunks));
        a.overlap.push_back(k);
    }
    return a;
}

std::vector<EngineShape> engine_shapes(const EngineAxes& tc, const std::string& dname, int p) {
    const auto decomposition = Registry<Decomposition>::instance().create(dname);
    std::vector<std::array<int, 2>> gs;
    if (!decomposition->uses_process_grid()) gs = {{p, 1}};
    else if (tc.grid_mode == EngineAxes::GridMode::automatic) gs = {auto_grid(p)};
    else if (tc.grid_mode == EngineAxes::GridMode::all) gs = all_grids(p);
    else gs = tc.grids;
    // Methods: "redistribution" uses each method for every phase;
    // "redistribution_phases" takes the product of the per-phase axes.
    const int phases = decomposition->redistribution_phases();
    std::vector<std::vector<std::string>> combos;
    if (tc.redistribution.size() == 1) {
        for (const auto& m : tc.redistribution[0]) combos.push_back(std::vector<std::string>(phases, m));
        if (phases == 0) combos = {{}};
    } else {
        combos = {{}};
        for (int ph = 0; ph < phases; ++ph) {
            std::vector<std::vector<std::string>> next;
            for (const auto& c : combos)
                for (const auto& m : tc.redistribution[ph]) {
                    next.push_back(c);
                    next.back().push_back(m);
                }
            combos = std::move(next);
        }
    }
    std::vector<EngineShape> out;
    for (auto layout : tc.layouts)
        for (const auto& grid : gs)
            for (const auto& methods : combos) out.push_back({layout, grid, methods});
    return out;
}

std::vector<Config> engine_configs(const EngineAxes& tc, const std::string& dname, const EngineShape& s) {
    std::vector<Config> out;
    for (const auto& backend : tc.backends)
        for (bool aware : tc.gpu_aware)
            for (int chunks : tc.overlap)
                for (bool kept : tc.fft_stores_kept)
                    out.push_back({backend, dname, s.layout, s.grid, s.methods, aware, chunks, kept});
    return out;
}

std::vector<Config> engine_configs(const EngineAxes& axes, int ranks) {
    std::vector<Config> out;
    for (const auto& d : axes.decompositions)
        for (const auto& shape : engine_shapes(axes, d, ranks))
            for (auto& c : engine_configs(axes, d, shape))
                if (std::none_of(out.begin(), out.end(), [&](const Config& o) { return json(o) == json(c); }))
                    out.push_back(std::move(c));
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
        auto skew = [](const std::array<int, 2>& g) {
            return std::abs(std::log(double(g[0]) / g[1])) - (g[0] >= g[1] ? 1e-9 : 0);
        };
        return skew(a) < skew(b);
    });
    for (const auto& g : grids) {
        Config pencil{backend, "pencil", LayoutVariant::default_, g, {method, method}, false};
        if (applies(problem, pencil)) return pencil;
    }
    return slab;  // nothing applies (e.g. more ranks than Nx * Ny); Plan will say why
}

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

std::string regridded(const Config& measured, const Config& adapted, int ranks) {
    if (adapted.process_grid == measured.process_grid) return "";
    auto grid = [](const std::array<int, 2>& g) { return fmt::format("{}x{}", g[0], g[1]); };
    return fmt::format("with the process grid {} re-derived as {} for {} ranks", grid(measured.process_grid),
                       grid(adapted.process_grid), ranks);
}

}  // namespace fftune
