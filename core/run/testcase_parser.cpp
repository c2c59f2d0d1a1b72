#include "core/run/testcase_parser.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <set>

#include <fmt/format.h>


namespace fftune {

using json = nlohmann::json;

void TestcaseParser::fail(const std::string& path, const std::string& what) const {
    throw TestcaseError(fmt::format("{}: {}: {}", source_, path.empty() ? "/" : path, what));
}

namespace {

// JSON pointer escaping of one key (RFC 6901): ~ as ~0, / as ~1.
std::string pointer_token(const std::string& key) {
    std::string t;
    for (char c : key) t += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    return t;
}

// A SAX pass that only follows where it is (the JSON path of the value being
// read) and the keys each open object has had, and stops at the first
// duplicate key or error.
class StrictSax final : public json::json_sax_t {
public:
    std::string error_path, error;  // set when the pass stopped

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override {
        open_.push_back({true});
        return true;
    }
    bool key(string_t& k) override {
        Frame& f = open_.back();
        f.key = k;
        if (!f.keys.insert(k).second) {
            error_path = path();
            error = fmt::format("the key '{}' appears twice in one object (JSON would keep only the last)", k);
            return false;
        }
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override {
        open_.push_back({false});
        return true;
    }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string& token, const nlohmann::detail::exception& e) override {
        error_path = path();
        if (e.id == 406)  // number overflow
            error = fmt::format("{} is out of range (allowed: numbers within +-1.8e308)", token);
        else
            error = e.what();
        return false;
    }

private:
    struct Frame {
        bool object;
        std::size_t index = 0;  // arrays: of the element being read
        std::string key;        // objects: of the value being read
        std::set<std::string> keys;
    };
    std::vector<Frame> open_;

    // The path of the value being read (in an object: after its key).
    std::string path() const {
        std::string p;
        for (const auto& f : open_) p += "/" + (f.object ? pointer_token(f.key) : std::to_string(f.index));
        return p;
    }
    bool value() {
        if (!open_.empty() && !open_.back().object) ++open_.back().index;
        return true;
    }
    bool close() {
        open_.pop_back();
        return value();
    }
};

}  // namespace

json TestcaseParser::parse_document(const std::string& text) const {
    StrictSax sax;
    if (!json::sax_parse(text, &sax)) {
        if (sax.error.starts_with("[json.exception.parse_error"))
            throw TestcaseError(fmt::format("{}: malformed JSON: {}", source_, sax.error));
        fail(sax.error_path, sax.error);
    }
    return json::parse(text);
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
    // 2^63 and above are unsigned: read as long long they would wrap to negative.
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
        fail(path, fmt::format("{} is out of range (allowed: {} to {})", j.dump(), min, max));
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
        // In double: three extents up to 2^30 overflow 64 bits (2^90 wraps to 0); exact up to 2^53.
        if (static_cast<double>(n[0]) * static_cast<double>(n[1]) * static_cast<double>(n[2]) >
            static_cast<double>(max_points))
            fail(p, fmt::format("{} has more than {} points", size_string(n),
                                std::has_single_bit(static_cast<std::uint64_t>(max_points))
                                    ? fmt::format("2^{}", std::countr_zero(static_cast<std::uint64_t>(max_points)))
                                    : std::to_string(max_points)));
        out.push_back(n);
    }
    return out;
}

}  // namespace fftune
