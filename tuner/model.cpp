#include "tuner/model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/decomposition.hpp"
#include "core/plan.hpp"
#include "core/registry.hpp"
#include "core/testcase.hpp"
#include "tuner/strategies.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

bool usable(const json& r) {
    return r.value("status", "") == "ok" && r.contains("validation") && r["validation"].value("passed", false) == true;
}

double total_points(const Problem& p) { return double(p.size[0]) * double(p.size[1]) * double(p.size[2]); }

// FFT work per rank: points per rank * log2 N (the whole transform's flop shape).
double fft_work(const Problem& p) {
    const double n = total_points(p);
    return n / p.ranks * std::max(1.0, std::log2(n));
}

// Phase-communicator size of each redistribution phase.
std::vector<int> phase_sizes(const Config& c, int ranks) {
    if (c.redistribution.empty()) return {};
    if (c.redistribution.size() == 1) return {ranks};
    return {c.process_grid[1], c.process_grid[0]};  // pencil: rows (P2), then columns (P1)
}

// Bytes a rank sends in a phase among q ranks: its complex share minus the part it keeps.
double phase_bytes(const Problem& p, int q) {
    const auto nc = complex_size(p.size);
    const double elems = double(nc[0]) * double(nc[1]) * double(nc[2]) / p.ranks;
    return elems * double(complex_bytes(p.precision)) * (q - 1) / q;
}

// Coefficients are kept per variant and per backend alone; predictions use the
// most specific one measured (strided FFTs and pack kernels differ by layout).
std::string fft_key(const std::string& backend, Precision p) { return backend + "/" + to_string(p); }
std::string fft_variant_key(const Config& c, Precision p) {
    return fft_key(c.backend, p) + "/" + c.decomposition + "/" + to_string(c.layout);
}
std::string link_key(const Config& c, const std::string& method) { return c.backend + "/" + method; }
std::string link_variant_key(const Config& c, const std::string& method, std::size_t phase) {
    return link_key(c, method) + "/" + c.decomposition + "/" + to_string(c.layout) + "/" + std::to_string(phase);
}

}  // namespace

CostModel CostModel::fit(const std::vector<json>& records) {
    CostModel m;
    std::map<std::string, std::vector<double>> rates;
    // Per link: sums for the 2-parameter least squares t = a * x1 + b * x2.
    struct Sums { double s11 = 0, s12 = 0, s22 = 0, s1t = 0, s2t = 0; int n = 0; };
    std::map<std::string, Sums> sums;
    for (const auto& r : records) {
        if (!usable(r)) continue;
        const Problem p = r.at("problem").get<Problem>();
        const Config c = r.at("config").get<Config>();
        const json& phases = r.at("timing").at("phases");
        double t_fft = 0;
        std::map<int, double> t_phase;
        for (const auto& [name, s] : phases.items()) {
            const double t = s.at("median").get<double>();
            const auto dot = name.find('.');
            const std::string kind = name.substr(0, dot);
            if (kind == "fft") t_fft += t;
            else if (kind == "pack" || kind == "exchange" || kind == "unpack") t_phase[std::stoi(name.substr(dot + 1))] += t;
        }
        rates[fft_key(c.backend, p.precision)].push_back(t_fft / fft_work(p));
        rates[fft_variant_key(c, p.precision)].push_back(t_fft / fft_work(p));
        const auto qs = phase_sizes(c, p.ranks);
        for (std::size_t k = 0; k < qs.size() && k < c.redistribution.size(); ++k) {
            if (qs[k] < 2) continue;  // nothing crosses ranks: a local copy
            const double x1 = qs[k] - 1, x2 = phase_bytes(p, qs[k]), t = t_phase[static_cast<int>(k)];
            for (const auto& key : {link_key(c, c.redistribution[k]), link_variant_key(c, c.redistribution[k], k)}) {
                Sums& s = sums[key];
                s.s11 += x1 * x1, s.s12 += x1 * x2, s.s22 += x2 * x2, s.s1t += x1 * t, s.s2t += x2 * t, ++s.n;
            }
        }
    }
    for (auto& [k, v] : rates) {
        std::sort(v.begin(), v.end());
        m.fft_[k] = v[v.size() / 2];
    }
    for (const auto& [k, s] : sums) {
        LinkFit f;
        f.samples = s.n;
        const double det = s.s11 * s.s22 - s.s12 * s.s12;
        if (det > 1e-30 * s.s11 * s.s22) {
            f.alpha_ms = (s.s1t * s.s22 - s.s2t * s.s12) / det;
            f.ms_per_byte = (s.s11 * s.s2t - s.s12 * s.s1t) / det;
        }
        // Non-negative: refit with one parameter when the other came out negative or undetermined.
        if (f.alpha_ms < 0 || det <= 1e-30 * s.s11 * s.s22) f.alpha_ms = 0, f.ms_per_byte = s.s22 > 0 ? s.s2t / s.s22 : 0;
        if (f.ms_per_byte < 0) f.ms_per_byte = 0, f.alpha_ms = s.s11 > 0 ? s.s1t / s.s11 : 0;
        m.links_[k] = f;
    }
    return m;
}

std::optional<double> CostModel::predict(const Problem& p, const Config& c) const {
    auto f = fft_.find(fft_variant_key(c, p.precision));
    if (f == fft_.end()) f = fft_.find(fft_key(c.backend, p.precision));
    if (f == fft_.end()) return std::nullopt;
    double t = f->second * fft_work(p);
    const auto qs = phase_sizes(c, p.ranks);
    for (std::size_t k = 0; k < qs.size() && k < c.redistribution.size(); ++k) {
        if (qs[k] < 2) continue;
        auto l = links_.find(link_variant_key(c, c.redistribution[k], k));
        if (l == links_.end()) l = links_.find(link_key(c, c.redistribution[k]));
        if (l == links_.end()) return std::nullopt;
        t += l->second.alpha_ms * (qs[k] - 1) + phase_bytes(p, qs[k]) * l->second.ms_per_byte;
    }
    return t;
}

std::optional<std::pair<Config, double>> CostModel::best(const Problem& p, const std::string& backend) const {
    std::optional<std::pair<Config, double>> out;
    std::vector<std::string> methods;
    for (const auto& [k, f] : links_)
        if (k.rfind(backend + "/", 0) == 0 && std::count(k.begin(), k.end(), '/') == 1)
            methods.push_back(k.substr(backend.size() + 1));
    for (const auto& d : Registry<Decomposition>::instance().names()) {
        const auto decomposition = Registry<Decomposition>::instance().create(d);
        const int phases = decomposition->redistribution_phases();
        const auto grids = decomposition->uses_process_grid() ? all_grids(p.ranks) : std::vector<std::array<int, 2>>{{p.ranks, 1}};
        std::vector<std::vector<std::string>> combos;
        if (phases == 0) combos = {{}};
        for (const auto& m : methods) combos.push_back(std::vector<std::string>(phases, m));
        if (phases > 0 && p.ranks == 1) combos = {std::vector<std::string>(phases, methods.empty() ? "a2a_sync" : methods[0])};
        for (auto layout : all_values<LayoutVariant>())
            for (const auto& g : grids)
                for (const auto& methods_ : combos) {
                    const Config c{backend, d, layout, g, methods_, false};
                    try {
                        if (check_applicable(p, c)) continue;
                    } catch (const std::exception&) {
                        continue;
                    }
                    const auto t = predict(p, c);
                    if (t && (!out || *t < out->second)) out = {c, *t};
                }
    }
    return out;
}

std::string model_accuracy(const std::vector<json>& records) {
    const auto best = best_per_problem(records);
    int problems = 0, right = 0, unpredicted = 0;
    double lost_sum = 0, lost_max = 0;
    std::map<std::pair<std::string, std::string>, double> measured;
    std::map<std::string, Config> configs;
    for (const auto& r : records)
        if (usable(r)) {
            configs.emplace(r.at("key").get<std::string>(), r.at("config").get<Config>());
            auto& t = measured[{problem_signature(r), r.at("key").get<std::string>()}];
            const double m = r["timing"]["total"]["median"].get<double>();
            if (t == 0 || m < t) t = m;
        }
    for (const auto& [sig, b] : best) {
        std::vector<json> others;
        for (const auto& r : records)
            if (usable(r) && problem_signature(r) != sig) others.push_back(r);
        const CostModel m = CostModel::fit(others);
        const Problem p = b->at("problem").get<Problem>();
        // Among the configurations measured for this problem, which does the model rank first?
        std::optional<std::pair<double, std::string>> pick;
        for (const auto& [k, t] : measured) {
            if (k.first != sig) continue;
            if (auto pr = m.predict(p, configs.at(k.second)); pr && (!pick || *pr < pick->first)) pick = {*pr, k.second};
        }
        if (!pick) {
            ++unpredicted;
            continue;
        }
        ++problems;
        const double t_best = b->at("timing").at("total").at("median").get<double>();
        const double lost = measured[{sig, pick->second}] / t_best - 1;
        right += pick->second == b->at("key").get<std::string>();
        lost_sum += lost;
        lost_max = std::max(lost_max, lost);
    }
    return fmt::format("model (leave one problem out): {} problems; predicted winner = measured winner in {} ({:.0f}%); "
                       "measured time of its pick over the best: mean +{:.1f}%, worst +{:.1f}%{}\n",
                       problems, right, problems ? 100.0 * right / problems : 0.0,
                       problems ? 100.0 * lost_sum / problems : 0.0, 100.0 * lost_max,
                       unpredicted ? fmt::format("; {} problems without coefficients", unpredicted) : "");
}

}  // namespace fftune
