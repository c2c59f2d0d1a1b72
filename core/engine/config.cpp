#include "core/engine/config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fftune {

std::string Config::key() const {
    std::string methods;
    for (const auto& m : redistribution) methods += (methods.empty() ? "" : "+") + m;
    if (methods.empty()) methods = "none";
    return fmt::format("{}/{}/{}/{}x{}/{}/{}{}{}", backend, decomposition, to_string(layout),
                       process_grid[0], process_grid[1], methods, gpu_aware ? "gpu_aware" : "host",
                       overlap > 1 ? fmt::format("/overlap{}{}{}", overlap, tapered() ? "/tapered" : "",
                                                 parted() ? fmt::format("/parts{}", exchange_parts) : "")
                                   : "",
                       fft_stores_kept ? "/kept_by_fft" : "");
}

void to_json(nlohmann::json& j, const Problem& p) {
    j = nlohmann::json{{"kind", p.kind},
                       {"size", p.size},
                       {"precision", to_string(p.precision)},
                       {"direction", to_string(p.direction)},
                       {"ranks", p.ranks}};
    if (p.ranks_per_node > 0) j["ranks_per_node"] = p.ranks_per_node;
}

void from_json(const nlohmann::json& j, Problem& p) {
    p.kind = j.at("kind").get<std::string>();
    p.size = j.at("size").get<std::array<index_t, 3>>();
    p.precision = parse<Precision>(j.at("precision").get<std::string>());
    p.direction = parse<Direction>(j.at("direction").get<std::string>());
    p.ranks = j.at("ranks").get<int>();
    p.ranks_per_node = j.value("ranks_per_node", 0);
}

void to_json(nlohmann::json& j, const Config& c) {
    j = nlohmann::json{{"backend", c.backend},
                       {"decomposition", c.decomposition},
                       {"layout", to_string(c.layout)},
                       {"process_grid", c.process_grid},
                       {"redistribution", c.redistribution},
                       {"gpu_aware", c.gpu_aware}};
    if (c.overlap > 1) j["overlap"] = c.overlap;
    if (c.tapered()) j["overlap_slices"] = to_string(c.overlap_slices);
    if (c.parted()) j["exchange_parts"] = c.exchange_parts;
    if (c.fft_stores_kept) j["fft_stores_kept"] = true;
}

void from_json(const nlohmann::json& j, Config& c) {
    c.backend = j.at("backend").get<std::string>();
    c.decomposition = j.at("decomposition").get<std::string>();
    c.layout = parse<LayoutVariant>(j.at("layout").get<std::string>());
    c.process_grid = j.at("process_grid").get<std::array<int, 2>>();
    c.redistribution = j.at("redistribution").get<std::vector<std::string>>();
    c.gpu_aware = j.at("gpu_aware").get<bool>();
    c.overlap = j.value("overlap", 1);
    c.fft_stores_kept = j.value("fft_stores_kept", false);
    c.overlap_slices = parse<SliceSchedule>(j.value("overlap_slices", "even"));
    c.exchange_parts = j.value("exchange_parts", 1);
}

}  // namespace fftune
