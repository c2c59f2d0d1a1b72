#include "core/run/testcase_parser.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>

#include <fmt/format.h>


namespace fftune {

using json = nlohmann::json;

void TestcaseParser::fail(const std::string& path, const std::string& what) const {
    throw TestcaseError(fmt::format("{}: {}: {}", source_, path.empty() ? "/" : path, what));
}

std::string TestcaseParser::list(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

json TestcaseParser::value_or(const json& object, const char* key, json fallback) {
    return object.contains(key) ? object.at(key) : std::move(fallback);
}

std::vector<std::string> TestcaseParser::names_axis(const json& j, const std::string& path,
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
            fail(p, fmt::format("{} is not a string (allowed: {}, or \"all\")", items[i].dump(), list(allowed)));
        const auto v = items[i].get<std::string>();
        if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
            fail(p, fmt::format("unknown value '{}' (allowed: {}, or \"all\")", v, list(allowed)));
        if (std::find(out.begin(), out.end(), v) != out.end()) fail(p, fmt::format("'{}' appears twice", v));
        out.push_back(v);
    }
    return out;
}

int TestcaseParser::integer(const json& j, const std::string& path, int min, int max) const {
    if (!j.is_number_integer()) fail(path, fmt::format("{} is not an integer", j.dump()));
    const auto v = j.get<long long>();
    if (v < min || v > max) fail(path, fmt::format("{} is out of range (allowed: {} to {})", v, min, max));
    return static_cast<int>(v);
}

std::vector<int> TestcaseParser::int_axis(const json& j, const std::string& path, int min, int max) const {
    if (j.is_array() && j.empty()) fail(path, "empty list");
    std::vector<int> out;
    for (std::size_t i = 0; i < (j.is_array() ? j.size() : 1); ++i) {
        const std::string p = j.is_array() ? fmt::format("{}/{}", path, i) : path;
        const int v = integer(j.is_array() ? j[i] : j, p, min, max);
        if (std::find(out.begin(), out.end(), v) != out.end()) fail(p, fmt::format("{} appears twice", v));
        out.push_back(v);
    }
    return out;
}

bool TestcaseParser::boolean(const json& j, const std::string& path) const {
    if (!j.is_boolean()) fail(path, fmt::format("{} is not a boolean", j.dump()));
    return j.get<bool>();
}

std::vector<index_t> TestcaseParser::cube_sizes(const json& j, const std::string& path, index_t max_points,
                                                const std::string& what) const {
    std::vector<index_t> out;
    const auto all = sizes(j, path, max_points);
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& s = all[i];
        if (s[0] != s[1] || s[1] != s[2])
            fail(j.is_array() ? fmt::format("{}/{}", path, i) : path,
                 fmt::format("{} grids are cubes n^3, not {}x{}x{}", what, s[0], s[1], s[2]));
        out.push_back(s[0]);
    }
    return out;
}

std::vector<std::array<index_t, 3>> TestcaseParser::sizes(const json& sizes, const std::string& path,
                                                          index_t max_points) const {
    std::vector<json> items;
    if (sizes.is_array()) items.assign(sizes.begin(), sizes.end());
    else items.push_back(sizes);
    if (items.empty()) fail(path, "empty list (give N or [Nx, Ny, Nz] entries)");
    std::vector<std::array<index_t, 3>> out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string p = sizes.is_array() ? fmt::format("{}/{}", path, i) : path;
        const json& s = items[i];
        std::array<index_t, 3> n{};
        if (s.is_number_integer()) {
            const int v = integer(s, p, 1);
            n = {v, v, v};
        } else if (s.is_array() && s.size() == 3) {
            for (int a = 0; a < 3; ++a) n[a] = integer(s[a], fmt::format("{}/{}", p, a), 1);
        } else {
            fail(p, fmt::format("{} is not a size (allowed: N or [Nx, Ny, Nz] with positive integers)", s.dump()));
        }
        if (n[0] * n[1] * n[2] > max_points)
            fail(p, fmt::format("{} has more than {} points", size_string(n),
                                std::has_single_bit(static_cast<std::uint64_t>(max_points))
                                    ? fmt::format("2^{}", std::countr_zero(static_cast<std::uint64_t>(max_points)))
                                    : std::to_string(max_points)));
        out.push_back(n);
    }
    return out;
}

}  // namespace fftune
