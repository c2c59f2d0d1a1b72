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

// Whatever the ranks' placement: the launcher and its job choose alike.
bool applies(const Problem& p, const Config& c) {
    try {
        return !check_applicable(p, c, /*placement=*/false);
    } catch (const std::exception&) {
        return false;  // a name this build does not have
    }
}

}  // namespace

const std::vector<std::string>& engine_axis_keys() {
    static const std::vector<std::string> keys{"decomposition", "layout",    "redistribution", "redistribution_phases",
                                               "process_grid",  "backend",   "gpu_aware",      "overlap",
                                               "overlap_slices", "exchange_parts", "fft_stores_kept"};
    return keys;
}

EngineAxes parse_engine_axes(const TestcaseParser& ps, const json& j, const std::vector<int>& ranks) {
    EngineAxes a;
    auto is_all = [&](const char* key, json fallback) {
        const json v = TestcaseParser::value_or(j, key, std::move(fallback));
        return v.is_string() && v.get<std::string>() == "all";
    };
    a.from_all.decomposition = is_all("decomposition", "all");
    a.from_all.layout = is_all("layout", "all");
    a.from_all.backend = is_all("backend", "fftw");
    a.from_all.gpu_aware = is_all("gpu_aware", false);
    a.from_all.fft_stores_kept = is_all("fft_stores_kept", false);
    if (j.contains("redistribution_phases") && j.at("redistribution_phases").is_array())
        for (const auto& ph : j.at("redistribution_phases"))
            a.from_all.redistribution.push_back(ph.is_string() && ph.get<std::string>() == "all");
    else
        a.from_all.redistribution = {is_all("redistribution", "all")};
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

    // Overlap chunks and exchange parts: K or a list of them; 1 is none.
    auto counts = [&](const char* key, const char* what) {
        const json v = TestcaseParser::value_or(j, key, 1);
        if (v.is_array() && v.empty()) ps.fail(fmt::format("/{}", key), fmt::format("empty list (give {} counts, 1 for none)", what));
        std::vector<int> out;
        for (std::size_t i = 0; i < (v.is_array() ? v.size() : 1); ++i) {
            const std::string p = v.is_array() ? fmt::format("/{}/{}", key, i) : fmt::format("/{}", key);
            const int k = ps.integer(v.is_array() ? v[i] : v, p, 1);
            if (k > max_overlap_chunks)
                ps.fail(p, fmt::format("{} {}s is out of range (allowed: 1 to {})", k, what, max_overlap_chunks));
            out.push_back(k);
        }
        return out;
    };
    a.overlap = counts("overlap", "chunk");
    a.exchange_parts = counts("exchange_parts", "part");
    a.overlap_slices = ps.enum_axis<SliceSchedule>(TestcaseParser::value_or(j, "overlap_slices", "even"), "/overlap_slices");
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
    const int ranks = s.grid[0] * s.grid[1];
    for (const auto& backend : tc.backends)
        for (bool aware : tc.gpu_aware)
            for (int chunks : tc.overlap)
                for (SliceSchedule slices : tc.overlap_slices) {
                    if (chunks == 1 && slices != tc.overlap_slices.front()) continue;  // one slice: one schedule
                    for (int parts : tc.exchange_parts) {
                        if (chunks == 1 && parts != tc.exchange_parts.front()) continue;  // no slices: no parts
                        for (bool kept : tc.fft_stores_kept) {
                            Config c{backend, dname, s.layout, s.grid, s.methods, aware, chunks, kept};
                            c.overlap_slices = chunks > 1 ? slices : SliceSchedule::even;
                            c.exchange_parts = chunks > 1 ? parts : 1;
                            if (!left_out_by_all(tc, c, ranks)) out.push_back(std::move(c));
                        }
                    }
                }
    return out;
}

std::optional<std::string> left_out_by_all(const EngineAxes& axes, const Config& c, int ranks) {
    // Applicability at a size where no size rule binds (every axis split once per rank at least).
    const index_t n = std::max<index_t>(64, 2 * index_t(ranks));
    const Problem probe{"fft3d", {n, n, n}, Precision::double_, Direction::forward, ranks};
    auto why = [&](const Config& o) -> std::optional<std::string> {
        try {
            return check_applicable(probe, o, /*placement=*/false);  // the launcher and its job leave out alike
        } catch (const std::exception& e) {
            return std::string(e.what());  // a name this build does not have, a phase count that differs
        }
    };
    // A decomposition in its plainest form: default layout, an MPI transport
    // in every phase, nothing else asked of it.
    auto plain = [&](const std::string& d, const std::array<int, 2>& grid) -> std::optional<Config> {
        try {
            const auto dec = Registry<Decomposition>::instance().create(d);
            Config o{c.backend, d, LayoutVariant::default_, grid, {}, false};
            if (d != c.decomposition) o.process_grid = dec->uses_process_grid() ? auto_grid(ranks) : std::array{ranks, 1};
            o.redistribution.assign(dec->redistribution_phases(), "a2a_sync");
            return o;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    const auto& all = axes.from_all;
    const auto base = plain(c.decomposition, c.process_grid);
    if (!base) return std::nullopt;
    if (const auto reason = why(*base)) {
        // Not even plain: the decomposition's fault where another one applies here.
        if (all.decomposition)
            for (const auto& d : axes.decompositions)
                if (const auto other = plain(d, c.process_grid); d != c.decomposition && other && !why(*other))
                    return reason;
        // An "all" backend that cannot run here where another one can.
        if (all.backend)
            for (const auto& b : axes.backends) {
                Config o = *base;
                o.backend = b;
                if (b != c.backend && !why(o)) return reason;
            }
        return std::nullopt;  // a named value, or nothing applies here: skipped with its reason
    }
    // Each value an "all" axis brought, on the plain form alone.
    auto fails_with = [&](auto change) {
        Config o = *base;
        change(o);
        return why(o);
    };
    if (all.layout)
        if (auto r = fails_with([&](Config& o) { o.layout = c.layout; })) return r;
    for (std::size_t ph = 0; ph < c.redistribution.size(); ++ph) {
        const bool from_all = all.redistribution.size() == 1 ? all.redistribution[0]
                              : ph < all.redistribution.size() ? bool(all.redistribution[ph])
                                                               : false;
        if (from_all)
            if (auto r = fails_with([&](Config& o) { o.redistribution[ph] = c.redistribution[ph]; })) return r;
    }
    if (all.gpu_aware && c.gpu_aware)
        if (auto r = fails_with([](Config& o) { o.gpu_aware = true; })) return r;
    if (all.fft_stores_kept && c.fft_stores_kept)
        if (auto r = fails_with([&](Config& o) {
                o.fft_stores_kept = true;
                o.redistribution = c.redistribution;  // kept needs methods that copy the self block
            }))
            return r;
    return std::nullopt;
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
