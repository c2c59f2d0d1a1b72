// The sweep summary's skip tally: reasons that differ only in numbers or in
// the rank that said them count as one; the most frequent come first.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/run/runner.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;

json skipped(const std::string& reason) {
    return {{"status", "skipped"}, {"reason", reason}, {"key", "k"},
            {"problem", {{"kind", "no_such_family"}, {"ranks", 2}, {"size", {8, 8, 8}}}}};
}

TEST(Summary, SkipReasonsDifferingInNumbersAreOneKind) {
    EXPECT_EQ(skip_reason_kind("rank 0: does not fit in device memory: 1 rank(s) need 80.05 GiB"),
              skip_reason_kind("rank 3: does not fit in device memory: 2 rank(s) need 7.5 GiB"));
    EXPECT_EQ(skip_reason_kind("reference_3d runs on one process, the job has 4"),
              "reference_3d runs on one process, the job has N");
    EXPECT_NE(skip_reason_kind("slab_2d1d splits x over P=4 ranks but Nx=3 < P"),
              skip_reason_kind("pencil splits x over P1=4 but Nx=3 < P1"));
    EXPECT_LE(skip_reason_kind(std::string(300, 'x')).size(), 100u);
}

TEST(Summary, SkippedPointsAreTalliedMostFrequentFirst) {
    std::vector<json> records;
    for (int r : {2, 3, 4}) records.push_back(skipped(fmt::format("reference_3d runs on one process, the job has {}", r)));
    records.push_back(skipped("rank 1: does not fit in device memory: need 80.05 GiB"));
    EXPECT_EQ(skip_tally(records),
              "\nSkipped, by reason (numbers as N):\n"
              "      3  reference_3d runs on one process, the job has N\n"
              "      1  does not fit in device memory: need N GiB\n");
    const std::string summary = summarize_records(records);
    EXPECT_NE(summary.find("4 skipped"), std::string::npos) << summary;
    EXPECT_NE(summary.find("      3  reference_3d runs on one process"), std::string::npos) << summary;
    EXPECT_EQ(skip_tally({json{{"status", "ok"}}}), "");
}

TEST(Summary, ManyReasonsShowTheFirstEightAndCountTheRest) {
    std::vector<json> records;
    for (char c = 'a'; c <= 'j'; ++c) records.push_back(skipped(std::string("reason ") + c));
    const std::string tally = skip_tally(records);
    EXPECT_NE(tally.find("      2  (2 more reasons; every record keeps its own)"), std::string::npos) << tally;
}

}  // namespace
}  // namespace fftune
