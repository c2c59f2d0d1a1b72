// One name table per enum, used by the CLI, JSON, the database and the plots.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fftune {

enum class Precision { single, double_ };
enum class Direction { forward, inverse };
enum class LayoutVariant { default_, realigned };
// How an overlapped stage's slices are sized (Config::overlap_slices).
enum class SliceSchedule { even, tapered };

template <class E>
struct EnumNames;  // specialised below: static constexpr array of {value, name}

template <>
struct EnumNames<Precision> {
    static constexpr std::string_view what = "precision";
    static constexpr std::array<std::pair<Precision, std::string_view>, 2> table{
        {{Precision::single, "single"}, {Precision::double_, "double"}}};
};
template <>
struct EnumNames<Direction> {
    static constexpr std::string_view what = "direction";
    static constexpr std::array<std::pair<Direction, std::string_view>, 2> table{
        {{Direction::forward, "forward"}, {Direction::inverse, "inverse"}}};
};
template <>
struct EnumNames<LayoutVariant> {
    static constexpr std::string_view what = "layout";
    static constexpr std::array<std::pair<LayoutVariant, std::string_view>, 2> table{
        {{LayoutVariant::default_, "default"}, {LayoutVariant::realigned, "realigned"}}};
};

template <>
struct EnumNames<SliceSchedule> {
    static constexpr std::string_view what = "overlap_slices";
    static constexpr std::array<std::pair<SliceSchedule, std::string_view>, 2> table{
        {{SliceSchedule::even, "even"}, {SliceSchedule::tapered, "tapered"}}};
};

template <class E>
std::string to_string(E value) {
    for (const auto& [v, n] : EnumNames<E>::table)
        if (v == value) return std::string(n);
    throw std::logic_error("enum value without a name");
}

template <class E>
std::optional<E> try_parse(std::string_view name) {
    for (const auto& [v, n] : EnumNames<E>::table)
        if (n == name) return v;
    return std::nullopt;
}

template <class E>
std::vector<std::string> all_names() {
    std::vector<std::string> out;
    for (const auto& entry : EnumNames<E>::table) out.emplace_back(entry.second);
    return out;
}

template <class E>
std::vector<E> all_values() {
    std::vector<E> out;
    for (const auto& entry : EnumNames<E>::table) out.push_back(entry.first);
    return out;
}

template <class E>
E parse(std::string_view name) {
    if (auto v = try_parse<E>(name)) return *v;
    std::string allowed;
    for (const auto& n : all_names<E>()) allowed += (allowed.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown " + std::string(EnumNames<E>::what) + " '" +
                                std::string(name) + "' (allowed: " + allowed + ")");
}

inline std::size_t real_bytes(Precision p) { return p == Precision::single ? 4 : 8; }
inline std::size_t complex_bytes(Precision p) { return 2 * real_bytes(p); }

}  // namespace fftune
