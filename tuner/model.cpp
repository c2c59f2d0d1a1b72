#include "tuner/model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/engine/decomposition.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/transport.hpp"
#include "core/base/registry.hpp"
#include "core/run/testcase.hpp"
#include "tuner/selector.hpp"
#include "tuner/strategies.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

// Validated fft3d records: the model is of distributed FFTs.
bool usable(const json& r) {
    return r.value("status", "") == "ok" && r.contains("validation") && r["validation"].value("passed", false) == true &&
           r.at("problem").value("kind", "") == "fft3d";
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

// Weighted non-negative least squares t = o * 1 + alpha * x1 + b * x2 (the probe fit):
// normal equations over every subset of the three parameters, the feasible one
// with the least weighted residual (ties: fewer parameters, alpha before o).
struct Sums3 {
    double a[3][3] = {}, y[3] = {}, tt = 0;
    int n = 0;
    void add(double x1, double x2, double t, double w) {
        const double x[3] = {1, x1, x2};
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) a[i][j] += w * x[i] * x[j];
            y[i] += w * x[i] * t;
        }
        tt += w * t * t, ++n;
    }
    LinkFit solve() const {
        LinkFit best;
        best.samples = n;
        double best_ssr = tt;  // all zero
        // Subsets by bit mask over (o, alpha, 1/beta), fewer parameters first, alpha-based before o-based.
        for (int mask : {2, 4, 1, 6, 5, 3, 7}) {
            int idx[3], k = 0;
            for (int i = 0; i < 3; ++i)
                if (mask & (1 << i)) idx[k++] = i;
            // Gaussian elimination on the k x k sub-system.
            double m[3][4];
            for (int i = 0; i < k; ++i) {
                for (int j = 0; j < k; ++j) m[i][j] = a[idx[i]][idx[j]];
                m[i][k] = y[idx[i]];
            }
            bool ok = true;
            for (int c = 0; c < k && ok; ++c) {
                int piv = c;
                for (int r = c + 1; r < k; ++r)
                    if (std::abs(m[r][c]) > std::abs(m[piv][c])) piv = r;
                if (std::abs(m[piv][c]) <= 1e-12 * std::abs(a[idx[c]][idx[c]])) ok = false;  // collinear
                if (!ok) break;
                std::swap(m[c], m[piv]);
                for (int r = 0; r < k; ++r) {
                    if (r == c) continue;
                    const double f = m[r][c] / m[c][c];
                    for (int j = c; j <= k; ++j) m[r][j] -= f * m[c][j];
                }
            }
            if (!ok) continue;
            double b[3] = {0, 0, 0};
            for (int i = 0; i < k; ++i) b[idx[i]] = m[i][k] / m[i][i];
            if (b[0] < 0 || b[1] < 0 || b[2] < 0) continue;
            // Weighted residual: t'Wt - 2 b'X'Wt + b'X'WX b.
            double ssr = tt;
            for (int i = 0; i < 3; ++i) {
                ssr -= 2 * b[i] * y[i];
                for (int j = 0; j < 3; ++j) ssr += b[i] * a[i][j] * b[j];
            }
            if (ssr < best_ssr - 1e-12 * tt) {  // clearly better, not by rounding
                best_ssr = ssr;
                best.call_ms = b[0], best.alpha_ms = b[1], best.ms_per_byte = b[2];
            }
        }
        return best;
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

// FFT stages of rank 0's chain: per stage and transformed axis a,
// rate(N_a) * (complex elements of the stage) * log2 N_a; the contiguous rate
// when a is the fastest axis of the stage's input and output layouts, else the strided one.
// A decomposition this build lacks: the whole transform as one stage.
double stage_fft_ms(const Problem& p, const Config& c, const CostModel::StrideRates& r) {
    const auto& contiguous = r.contiguous.empty() ? r.mean : r.contiguous;
    const auto& strided = r.strided.empty() ? r.mean : r.strided;
    Chain chain;
    try {
        // Every rank's chain, settled as the plan settles them (orders no exchange needs).
        const auto decomposition = Registry<Decomposition>::instance().create(c.decomposition);
        std::vector<Chain> chains;
        for (int r = 0; r < p.ranks; ++r) chains.push_back(decomposition->chain(p, c, r));
        settle_unexchanged_orders(chains);
        // As the plan merges them for the runner, whose inverse preserves its input.
        merge_unexchanged_ffts(chains, [&](int phase, bool c2r_first) {
            if (c2r_first && p.direction == Direction::inverse) return false;
            const auto& transports = Registry<Transport>::instance();
            const std::string& m = c.redistribution.at(phase);
            return !transports.contains(m) || !transports.create(m)->runs_alone();
        });
        chain = chains.at(0);
    } catch (const std::exception&) {
        const auto nc = complex_size(p.size);
        chain.layouts = {{{{0, 0, 0}, p.size}, order_xyz}, {{{0, 0, 0}, nc}, order_xyz}};
        chain.steps = {{ChainStep::Kind::fft, {axis_x, axis_y, axis_z}, 0, 0}};
    }
    double t = 0;
    for (std::size_t i = 0; i < chain.steps.size(); ++i) {
        const ChainStep& step = chain.steps[i];
        if (step.kind != ChainStep::Kind::fft) continue;
        const double elems = double(chain.layouts[i + 1].box.count());  // complex, after the stage
        for (int a : step.axes) {
            const double n = double(p.size[a]);
            if (n < 2) continue;
            // Contiguous only when the axis is the fastest of both the input and the output layout
            // (a realigned stage that writes another order pays strided stores).
            const bool dense = chain.layouts[i].order[2] == a && chain.layouts[i + 1].order[2] == a;
            t += rate_at(dense ? contiguous : strided, n) * elems * std::log2(n);
        }
    }
    return t;
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
        if (c.overlap > 1) continue;  // overlapping phases do not split into FFT and link times
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

    // Probe calibrations. Exchanges: t = o + alpha * (q - 1) + m * (q - 1) / beta per
    // (backend/transport, world), weighted by 1/t^2 (relative error: 8 B and 16 MiB
    // messages count alike, so o and alpha are not lost under the large messages' times).
    std::map<std::string, std::map<int, Sums3>> probe_sums;
    std::map<std::string, std::map<int, std::map<std::string, std::map<long long, std::vector<double>>>>> probe_rates;
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
            probe_rates[backend + "/" + r.at("precision").get<std::string>()][world][r.value("stride", "contiguous")]
                       [r.at("n").get<long long>()].push_back(
                r.at("ms_per_point_log2n").get<double>());
        }
    }
    for (const auto& [k, by_world] : probe_sums)
        for (const auto& [world, s] : by_world) m.probe_links_[k][world] = s.solve();
    for (const auto& [k, by_world] : probe_rates) {
        FftRates& f = m.probe_fft_[k];
        for (const auto& [world, by_stride] : by_world)
            for (const auto& [stride, by_n] : by_stride)
                for (const auto& [n, v] : by_n) {
                    StrideRates& sr = f.by_world[world];
                    (stride == "contiguous" ? sr.contiguous : sr.strided)[n] = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
                    sr.mean[n] = (sr.contiguous.count(n) && sr.strided.count(n)) ? (sr.contiguous[n] + sr.strided[n]) / 2
                                                                                  : (stride == "contiguous" ? sr.contiguous : sr.strided)[n];
                    f.samples += static_cast<int>(v.size());
                }
    }
    return m;
}

const CostModel::StrideRates* CostModel::probe_rates(const std::string& key, int ranks, int* world) const {
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
    if (c.overlap > 1) return std::nullopt;  // the additive model has no term for overlap
    double t = 0;
    if (const auto* rates = probe_rates(fft_key(c.backend, p.precision), p.ranks, nullptr)) {
        t = stage_fft_ms(p, c, *rates);
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
        t += fit->call_ms + fit->alpha_ms * (qs[k] - 1) + phase_bytes(p, qs[k]) * fit->ms_per_byte;
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
                s += fmt::format("{:<24} alpha {:.3g} ms per peer, beta {:.3g} GB/s, {:.3g} ms per call  [probe: {} exchanges at {} ranks]\n",
                                 k, f.alpha_ms, gbs(f), f.call_ms, f.samples, world);
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
            for (const auto& [world, r] : probe->second.by_world) {
                auto range = [](const std::map<long long, double>& rates) {
                    if (rates.empty()) return std::string("none");
                    const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end(),
                                                              [](const auto& a, const auto& b) { return a.second < b.second; });
                    return fmt::format("{:.3g}..{:.3g}", lo->second, hi->second);
                };
                s += fmt::format("fft {:<20} contiguous {}, strided {} ms per point*log2 n over n = {}..{}  [probe: {} lengths at {} ranks]\n",
                                 k, range(r.contiguous), range(r.strided), r.mean.begin()->first, r.mean.rbegin()->first,
                                 r.mean.size(), world);
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

std::string model_accuracy(const std::vector<json>& all, const std::vector<json>& probes) {
    // Other families' records are no distributed FFTs: the model neither fits nor ranks them.
    std::vector<json> records;
    for (const auto& r : all)
        if (usable(r)) records.push_back(r);
    if (records.empty())
        return all.empty() ? "model accuracy: no validated records\n"
                           : fmt::format("model accuracy: none of the {} validated records is of fft3d, the only family "
                                         "with a cost model\n", all.size());
    const auto best = best_per_problem(records);
    int problems = 0, right = 0, close = 0, unpredicted = 0;
    double lost_sum = 0, lost_max = 0;
    struct PerRanks { int problems = 0, right = 0; double lost = 0; };
    std::map<int, PerRanks> by_ranks;
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
        // Among the configurations measured for this problem, which does the model rank first
        // (ties to fewer redistribution phases, as in best())?
        std::optional<std::pair<double, std::string>> pick;
        for (const auto& [k, t] : measured) {
            if (k.first != sig) continue;
            const auto pr = m.predict(p, configs.at(k.second));
            if (!pr) continue;
            const bool tie = pick && std::abs(*pr - pick->first) <= 1e-9 * pick->first;
            if (!pick || (*pr < pick->first && !tie) ||
                (tie && configs.at(k.second).redistribution.size() < configs.at(pick->second).redistribution.size()))
                pick = {*pr, k.second};
        }
        if (!pick) {
            ++unpredicted;
            continue;
        }
        ++problems;
        const double t_best = b->at("timing").at("total").at("median").get<double>();
        const double lost = measured[{sig, pick->second}] / t_best - 1;
        const bool hit = pick->second == b->at("key").get<std::string>();
        right += hit;
        close += lost <= 0.05;
        lost_sum += lost;
        lost_max = std::max(lost_max, lost);
        PerRanks& pr = by_ranks[p.ranks];
        ++pr.problems, pr.right += hit, pr.lost += lost;
    }
    std::string ranks_line;
    for (const auto& [ranks, pr] : by_ranks)
        ranks_line += fmt::format("{}{} ranks: {}/{} right, mean +{:.1f}%", ranks_line.empty() ? "  by rank count: " : "; ", ranks,
                                  pr.right, pr.problems, 100.0 * pr.lost / pr.problems);
    return fmt::format("model{} (leave one problem out): {} problems; predicted winner = measured winner in {} ({:.0f}%), "
                       "within 5% in {}; measured time of its pick over the best: mean +{:.1f}%, worst +{:.1f}%{}\n{}",
                       probes.empty() ? "" : fmt::format(" with {} probe records", probes.size()), problems, right,
                       problems ? 100.0 * right / problems : 0.0, close,
                       problems ? 100.0 * lost_sum / problems : 0.0, 100.0 * lost_max,
                       unpredicted ? fmt::format("; {} problems without coefficients", unpredicted) : "",
                       ranks_line.empty() ? "" : ranks_line + "\n");
}

namespace {

// The selector's model rung for fft3d: the fastest predicted configuration over the calibrated backends.
class Fft3dModelRung final : public CostModelRung {
public:
    std::optional<Answer> best(const json& problem, const std::vector<json>& records,
                               const std::vector<json>& probes) const override {
        const Problem p = problem.get<Problem>();
        const CostModel model = CostModel::fit(records, probes);
        std::optional<std::pair<Config, double>> best;
        for (const auto& b : model.backends())
            if (auto c = model.best(p, b); c && (!best || c->second < best->second)) best = c;
        if (!best) return std::nullopt;
        return Answer{best->first, best->second,
                      fmt::format("alpha-beta model ({} probe records, {} measurements of this machine) predicts {:.4g} "
                                  "ms; coefficients: {}",
                                  probes.size(), records.size(), best->second, model.sources(p, best->first))};
    }
};

const bool registered = register_variant<CostModelRung, Fft3dModelRung>("fft3d");

}  // namespace

}  // namespace fftune
