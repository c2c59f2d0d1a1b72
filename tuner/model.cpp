#include "tuner/model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

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

// Weighted sums for the 2-parameter least squares t = a * x1 + b * x2.
struct Sums {
    double s11 = 0, s12 = 0, s22 = 0, s1t = 0, s2t = 0;
    int n = 0;
    void add(double x1, double x2, double t, double w = 1) {
        s11 += w * x1 * x1, s12 += w * x1 * x2, s22 += w * x2 * x2, s1t += w * x1 * t, s2t += w * x2 * t, ++n;
    }
    LinkFit solve() const {
        LinkFit f;
        f.samples = n;
        const double det = s11 * s22 - s12 * s12;
        const bool determined = det > 1e-30 * s11 * s22;
        if (determined) {
            f.alpha_ms = (s1t * s22 - s2t * s12) / det;
            f.ms_per_byte = (s11 * s2t - s12 * s1t) / det;
        }
        // Non-negative: refit with one parameter when the other came out negative or undetermined.
        if (f.alpha_ms < 0 || !determined) f.alpha_ms = 0, f.ms_per_byte = s22 > 0 ? s2t / s22 : 0;
        if (f.ms_per_byte < 0) f.ms_per_byte = 0, f.alpha_ms = s11 > 0 ? s1t / s11 : 0;
        return f;
    }
};

// The entry of `m` (keyed by world size) nearest `ranks` by log ratio; ties go to the smaller world.
template <class Map>
auto nearest_world(const Map& m, int ranks) {
    auto best = m.end();
    double d_best = 0;
    for (auto it = m.begin(); it != m.end(); ++it) {
        const double d = std::abs(std::log(double(it->first) / ranks));
        if (best == m.end() || d < d_best - 1e-12) best = it, d_best = d;
    }
    return best;
}

// Rate at transform length n: linear in log2 n between the probed lengths, clamped outside them.
double rate_at(const std::map<long long, double>& rates, double n) {
    auto hi = rates.lower_bound(static_cast<long long>(std::ceil(n)));
    if (hi == rates.begin()) return hi->second;
    if (hi == rates.end()) return std::prev(hi)->second;
    auto lo = std::prev(hi);
    const double f = (std::log2(n) - std::log2(double(lo->first))) / (std::log2(double(hi->first)) - std::log2(double(lo->first)));
    return lo->second + std::clamp(f, 0.0, 1.0) * (hi->second - lo->second);
}

}  // namespace

CostModel CostModel::fit(const std::vector<json>& records, const std::vector<json>& probes) {
    CostModel m;
    std::map<std::string, std::vector<double>> rates;
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
            for (const auto& key : {link_key(c, c.redistribution[k]), link_variant_key(c, c.redistribution[k], k)})
                sums[key].add(x1, x2, t);
        }
    }
    for (auto& [k, v] : rates) {
        std::sort(v.begin(), v.end());
        m.fft_[k] = v[v.size() / 2];
        m.fft_samples_[k] = static_cast<int>(v.size());
    }
    for (const auto& [k, s] : sums) m.links_[k] = s.solve();

    // Probe calibrations. Exchanges: t = alpha * (q - 1) + m * (q - 1) / beta per
    // (backend/transport, world), weighted by 1/t^2 (relative error: 8 B and 16 MiB
    // messages count alike, so alpha is not lost under the large messages' times).
    std::map<std::string, std::map<int, Sums>> probe_sums;
    std::map<std::string, std::map<int, std::map<long long, std::vector<double>>>> probe_rates;
    for (const auto& r : probes) {
        if (r.value("kind", "") != "probe" || r.value("status", "") != "ok") continue;
        const std::string probe = r.at("probe").get<std::string>();
        const std::string backend = r.at("backend").get<std::string>();
        const int world = r.at("world").get<int>();
        const double t = r.at("timing").at("total").at("median").get<double>();
        if (probe == "exchange" && r.at("validation").value("passed", false) && t > 0) {
            const double q = r.at("peers").get<double>(), bytes = r.at("bytes_per_peer").get<double>();
            probe_sums[backend + "/" + r.at("transport").get<std::string>()][world].add(q - 1, bytes * (q - 1), t, 1 / (t * t));
        } else if (probe == "fft") {
            probe_rates[backend + "/" + r.at("precision").get<std::string>()][world][r.at("n").get<long long>()].push_back(
                r.at("ms_per_point_log2n").get<double>());
        }
    }
    for (const auto& [k, by_world] : probe_sums)
        for (const auto& [world, s] : by_world) m.probe_links_[k][world] = s.solve();
    for (const auto& [k, by_world] : probe_rates) {
        FftRates& f = m.probe_fft_[k];
        for (const auto& [world, by_n] : by_world)
            for (const auto& [n, v] : by_n) {
                f.by_world[world][n] = std::accumulate(v.begin(), v.end(), 0.0) / v.size();  // contiguous and strided alike
                f.samples += static_cast<int>(v.size());
            }
    }
    return m;
}

const std::map<long long, double>* CostModel::probe_rates(const std::string& key, int ranks, int* world) const {
    const auto f = probe_fft_.find(key);
    if (f == probe_fft_.end() || f->second.by_world.empty()) return nullptr;
    const auto it = nearest_world(f->second.by_world, ranks);
    if (world) *world = it->first;
    return &it->second;
}

const LinkFit* CostModel::probe_link(const std::string& key, int ranks, int* world) const {
    const auto l = probe_links_.find(key);
    if (l == probe_links_.end() || l->second.empty()) return nullptr;
    const auto it = nearest_world(l->second, ranks);
    if (world) *world = it->first;
    return &it->second;
}

std::vector<std::string> CostModel::backends() const {
    std::set<std::string> out;
    for (const auto& [k, v] : fft_) out.insert(k.substr(0, k.find('/')));
    for (const auto& [k, v] : probe_fft_) out.insert(k.substr(0, k.find('/')));
    return {out.begin(), out.end()};
}

std::optional<double> CostModel::predict(const Problem& p, const Config& c) const {
    double t = 0;
    if (const auto* rates = probe_rates(fft_key(c.backend, p.precision), p.ranks, nullptr)) {
        // Sum over axes of rate(N_a) * (complex points per rank) * log2 N_a.
        const auto nc = complex_size(p.size);
        const double complex_per_rank = double(nc[0]) * double(nc[1]) * double(nc[2]) / p.ranks;
        for (int a = 0; a < 3; ++a)
            if (p.size[a] > 1) t += rate_at(*rates, double(p.size[a])) * complex_per_rank * std::log2(double(p.size[a]));
    } else {
        auto f = fft_.find(fft_variant_key(c, p.precision));
        if (f == fft_.end()) f = fft_.find(fft_key(c.backend, p.precision));
        if (f == fft_.end()) return std::nullopt;
        t = f->second * fft_work(p);
    }
    const auto qs = phase_sizes(c, p.ranks);
    for (std::size_t k = 0; k < qs.size() && k < c.redistribution.size(); ++k) {
        if (qs[k] < 2) continue;
        const LinkFit* fit = probe_link(link_key(c, c.redistribution[k]), p.ranks, nullptr);
        if (!fit) {
            auto l = links_.find(link_variant_key(c, c.redistribution[k], k));
            if (l == links_.end()) l = links_.find(link_key(c, c.redistribution[k]));
            if (l == links_.end()) return std::nullopt;
            fit = &l->second;
        }
        t += fit->alpha_ms * (qs[k] - 1) + phase_bytes(p, qs[k]) * fit->ms_per_byte;
    }
    return t;
}

std::string CostModel::sources(const Problem& p, const Config& c) const {
    int world = 0;
    std::string s = "fft " + fft_key(c.backend, p.precision) + ": ";
    if (probe_rates(fft_key(c.backend, p.precision), p.ranks, &world)) s += fmt::format("probe at {} ranks", world);
    else s += "sweep fit";
    std::set<std::string> seen;
    const auto qs = phase_sizes(c, p.ranks);
    for (std::size_t k = 0; k < qs.size() && k < c.redistribution.size(); ++k) {
        const std::string& method = c.redistribution[k];
        if (qs[k] < 2 || !seen.insert(method).second) continue;
        s += "; " + method + ": ";
        if (probe_link(link_key(c, method), p.ranks, &world)) s += fmt::format("probe at {} ranks", world);
        else s += "sweep fit";
    }
    return s;
}

std::string CostModel::describe() const {
    std::string s;
    auto gbs = [](const LinkFit& f) { return f.ms_per_byte > 0 ? 1e-6 / f.ms_per_byte : 0.0; };
    std::set<std::string> keys;
    for (const auto& [k, f] : links_)
        if (std::count(k.begin(), k.end(), '/') == 1) keys.insert(k);  // per backend/transport; variants are finer
    for (const auto& [k, f] : probe_links_) keys.insert(k);
    for (const auto& k : keys) {
        const auto probe = probe_links_.find(k);
        if (probe != probe_links_.end())
            for (const auto& [world, f] : probe->second)
                s += fmt::format("{:<24} alpha {:.3g} ms per peer, beta {:.3g} GB/s  [probe: {} exchanges at {} ranks]\n", k,
                                 f.alpha_ms, gbs(f), f.samples, world);
        if (const auto l = links_.find(k); l != links_.end())
            s += fmt::format("{:<24} alpha {:.3g} ms per peer, beta {:.3g} GB/s  [sweep: {} phases{}]\n", k, l->second.alpha_ms,
                             gbs(l->second), l->second.samples, probe != probe_links_.end() ? "; not used, the probe is" : "");
    }
    std::set<std::string> fkeys;
    for (const auto& [k, v] : fft_)
        if (std::count(k.begin(), k.end(), '/') == 1) fkeys.insert(k);
    for (const auto& [k, v] : probe_fft_) fkeys.insert(k);
    for (const auto& k : fkeys) {
        const auto probe = probe_fft_.find(k);
        if (probe != probe_fft_.end())
            for (const auto& [world, rates] : probe->second.by_world) {
                const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end(),
                                                          [](const auto& a, const auto& b) { return a.second < b.second; });
                s += fmt::format("fft {:<20} {:.3g}..{:.3g} ms per point*log2 n over n = {}..{}  [probe: {} lengths at {} ranks]\n",
                                 k, lo->second, hi->second, rates.begin()->first, rates.rbegin()->first, rates.size(), world);
            }
        if (const auto f = fft_.find(k); f != fft_.end())
            s += fmt::format("fft {:<20} {:.3g} ms per point*log2 N  [sweep: {} records{}]\n", k, f->second, fft_samples_.at(k),
                             probe != probe_fft_.end() ? "; not used, the probe is" : "");
    }
    return s;
}

std::optional<std::pair<Config, double>> CostModel::best(const Problem& p, const std::string& backend) const {
    std::optional<std::pair<Config, double>> out;
    std::set<std::string> calibrated;
    for (const auto& [k, f] : links_)
        if (k.rfind(backend + "/", 0) == 0 && std::count(k.begin(), k.end(), '/') == 1)
            calibrated.insert(k.substr(backend.size() + 1));
    for (const auto& [k, f] : probe_links_)
        if (k.rfind(backend + "/", 0) == 0) calibrated.insert(k.substr(backend.size() + 1));
    const std::vector<std::string> methods(calibrated.begin(), calibrated.end());
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
                    if (!t) continue;
                    // Ties (the model sees no cost in a phase among one rank, e.g. pencil 1xP
                    // vs slab) go to fewer redistribution phases: less local copying.
                    const bool tie = out && std::abs(*t - out->second) <= 1e-9 * out->second;
                    if (!out || (*t < out->second && !tie) ||
                        (tie && c.redistribution.size() < out->first.redistribution.size()))
                        out = {c, *t};
                }
    }
    return out;
}

std::string model_accuracy(const std::vector<json>& records, const std::vector<json>& probes) {
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
        const CostModel m = CostModel::fit(others, probes);
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
    return fmt::format("model{} (leave one problem out): {} problems; predicted winner = measured winner in {} ({:.0f}%); "
                       "measured time of its pick over the best: mean +{:.1f}%, worst +{:.1f}%{}\n",
                       probes.empty() ? "" : fmt::format(" with {} probe records", probes.size()), problems, right,
                       problems ? 100.0 * right / problems : 0.0,
                       problems ? 100.0 * lost_sum / problems : 0.0, 100.0 * lost_max,
                       unpredicted ? fmt::format("; {} problems without coefficients", unpredicted) : "");
}

}  // namespace fftune
