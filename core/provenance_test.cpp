#include "core/provenance.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/registry.hpp"

namespace fftune {
namespace {

TEST(Provenance, RecordsSoftwareAndMachine) {
    auto backend = Registry<Backend>::instance().create("fftw");
    const auto p = provenance_info({"fftune", "run", "x.json"}, backend.get());
    for (const char* key : {"fftune_version", "git_sha", "compiler", "mpi_library", "mpi_standard", "mpi_gpu_aware", "timestamp", "command_line"})
        EXPECT_TRUE(p.contains(key)) << key << " missing in " << p.dump();
    const std::string mpi = p.at("mpi_library").get<std::string>();
    EXPECT_FALSE(mpi.empty());
    EXPECT_EQ(mpi.find('\0'), std::string::npos);
    EXPECT_NE(mpi.back(), '\n');
    EXPECT_NE(p.dump().find("fftw"), std::string::npos);
    const auto m = machine_info();
    EXPECT_TRUE(m.contains("fingerprint"));
    EXPECT_EQ(m.at("fingerprint"), machine_info().at("fingerprint"));
    EXPECT_EQ(utc_timestamp().back(), 'Z');
}

TEST(Provenance, SanitizedFileNames) {
    EXPECT_EQ(sanitize_filename("quick run/../x"), "quick_run_.._x");
    EXPECT_EQ(sanitize_filename(".hidden"), "_hidden");
    EXPECT_EQ(sanitize_filename("a-b_c.1"), "a-b_c.1");
}

}  // namespace
}  // namespace fftune
