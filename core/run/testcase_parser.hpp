// Reading a testcase's JSON: every error names the file, the JSON path, the
// bad value and what is allowed (testcases/README.md). The common keys are
// read in core/run/testcase.cpp; each family reads its own keys with these
// helpers (core/run/family.hpp).
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/box.hpp"
#include "core/base/names.hpp"

namespace fftune {

struct TestcaseError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

class TestcaseParser {
public:
    explicit TestcaseParser(std::string source) : source_(std::move(source)) {}
    const std::string& source() const { return source_; }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const;

    // The JSON document of a testcase file. Stricter than JSON itself, and its
    // errors name the JSON path: a key given twice in one object (which would
    // silently take the last), a number beyond a double's range (1e999), and
    // malformed text.
    nlohmann::json parse_document(const std::string& text) const;

    // An axis of names: a single value, a list of values, or "all" (every allowed value).
    std::vector<std::string> names_axis(const nlohmann::json& j, const std::string& path,
                                        const std::vector<std::string>& allowed) const;
    template <class E>
    std::vector<E> enum_axis(const nlohmann::json& j, const std::string& path) const {
        std::vector<E> out;
        for (const auto& n : names_axis(j, path, all_names<E>())) out.push_back(parse<E>(n));
        return out;
    }
    // An integer in [min, max].
    int integer(const nlohmann::json& j, const std::string& path, int min, int max = 1 << 30) const;
    // An axis of integers in [min, max]: one or a non-empty list of distinct values.
    std::vector<int> int_axis(const nlohmann::json& j, const std::string& path, int min, int max = 1 << 30) const;
    bool boolean(const nlohmann::json& j, const std::string& path) const;
    // Grid sizes: N (a cube) or [Nx, Ny, Nz], or a list of them; positive, at
    // most `max_points` points each.
    std::vector<std::array<index_t, 3>> sizes(const nlohmann::json& j, const std::string& path,
                                              index_t max_points = index_t{1} << 40) const;
    // A key's value, or `fallback` when the object has no such key.
    static nlohmann::json value_or(const nlohmann::json& object, const char* key, nlohmann::json fallback);

    static std::string list(const std::vector<std::string>& v);

private:
    std::string source_;
};

}  // namespace fftune
