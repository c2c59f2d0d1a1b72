// The family registry and the defaults every family inherits; the checks a
// validation is made of.
#include "core/run/family.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace fftune {
namespace {

using json = nlohmann::json;

// A family of two size fields and a category: only what the defaults read.
class Shape final : public Family {
public:
    std::string name() const override { return "test_shape"; }
    std::string summary() const override { return "a family for the tests"; }
    std::vector<std::string> testcase_keys() const override { return {}; }
    std::shared_ptr<const FamilyAxes> parse(const TestcaseParser&, const json&, const std::vector<int>&) const override {
        return std::make_shared<FamilyAxes>();
    }
    std::vector<Point> points(const FamilyAxes&, int) const override { return {}; }
    std::optional<std::string> not_applicable(const json&, const json&) const override { return std::nullopt; }
    std::unique_ptr<Workload> workload(const Point&) const override { return nullptr; }
    std::string config_key(const json& c) const override { return c.at("m").get<std::string>(); }
    std::vector<ProblemAxis> problem_axes() const override {
        using Role = ProblemAxis::Role;
        return {{"grid", Role::size, {}, "", 2, "NxM"},
                {"kernel", Role::category, {"a", "b"}, "a", 0, "which kernel"},
                {"halo", Role::size, {}, "", 1, "width"}};
    }
    std::vector<std::string> config_axes() const override { return {"m"}; }
    json default_config(const json&) const override { return {{"m", "x"}}; }
};
const bool registered = register_variant<Family, Shape>("test_shape");

TEST(Family, ProblemKeyLeavesOutTheRankCountsOnly) {
    const json a{{"kind", "k"}, {"ranks", 4}, {"ranks_per_node", 2}, {"size", {8, 8, 8}}, {"precision", "double"}};
    json b = a;
    b["ranks"] = 8;
    b.erase("ranks_per_node");
    EXPECT_EQ(problem_key(a), problem_key(b));
    EXPECT_EQ(problem_key(a), R"({"kind":"k","precision":"double","size":[8,8,8]})");  // keys sorted
    b["precision"] = "single";
    EXPECT_NE(problem_key(a), problem_key(b));
}

TEST(Family, DefaultsReadTheProblemAxes) {
    const Family& f = family_named("test_shape");
    EXPECT_EQ(&f, &family_named("test_shape"));  // one instance per process
    const json p{{"kind", "test_shape"}, {"ranks", 2}, {"grid", {6, 4}}, {"kernel", "b"}, {"halo", {3}}};
    EXPECT_DOUBLE_EQ(f.work(p), 6 * 4 * 3);
    EXPECT_EQ(f.size_label(p), "6x4 3");
    EXPECT_EQ(f.problem_label(p), "       6x4          b          3");
    EXPECT_EQ(f.problem_header(), "      grid     kernel       halo");
    EXPECT_EQ(f.adapt_to_ranks({{"m", "y"}}, 3).size(), 1u);
    EXPECT_FALSE(f.phase_split(Point{}));
}

TEST(Family, DescribeListsTheAxes) {
    const json d = describe(family_named("test_shape"));
    EXPECT_EQ(d.at("name"), "test_shape");
    EXPECT_EQ(d.at("config_axes"), json::array({"m"}));
    ASSERT_EQ(d.at("problem_axes").size(), 3u);
    EXPECT_EQ(d.at("problem_axes")[0].at("role"), "size");
    EXPECT_EQ(d.at("problem_axes")[0].at("dims"), 2);
    EXPECT_EQ(d.at("problem_axes")[1].at("values"), json::array({"a", "b"}));
    EXPECT_EQ(d.at("problem_axes")[1].at("fallback"), "a");
}

TEST(Family, UnknownNamesAreRefusedWithTheRegisteredOnes) {
    try {
        family_named("fft2d");
        FAIL();
    } catch (const std::exception& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("fft2d"), std::string::npos) << m;
        EXPECT_NE(m.find("test_shape"), std::string::npos) << m;
    }
}

TEST(Checks, ToleranceAndNaN) {
    EXPECT_TRUE(make_check("m", 1e-13, 1e-12).passed);
    EXPECT_FALSE(make_check("m", 2e-12, 1e-12).passed);
    EXPECT_FALSE(make_check("m", std::numeric_limits<double>::quiet_NaN(), 1.0).passed);
    ValidationResult v{{make_check("first", 0.5, 1.0), make_check("second", 2.0, 1.0)}};
    EXPECT_FALSE(v.passed());
    EXPECT_EQ(v.primary().method, "first");
    const json j = v;
    EXPECT_EQ(j.at("method"), "first");
    EXPECT_EQ(j.at("passed"), false);
    EXPECT_EQ(j.at("checks").size(), 2u);
}

}  // namespace
}  // namespace fftune
