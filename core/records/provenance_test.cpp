#include "core/records/provenance.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/base/registry.hpp"

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

// A backend that reports GPUs and does nothing else (for node_devices).
class FakeGpuBackend final : public Backend {
public:
    explicit FakeGpuBackend(int count) : count_(count) {}
    std::string name() const override { return "fake_gpu"; }
    std::vector<std::pair<std::string, std::string>> versions() const override { return {}; }
    bool device_memory() const override { return true; }
    DeviceInfo device_info() const override { return {"Fake H200", count_}; }
    void* allocate(std::size_t) override { return nullptr; }
    void deallocate(void*) override {}
    void* allocate_host(std::size_t) override { return nullptr; }
    void deallocate_host(void*) override {}
    void copy_region(void*, const StridedRegion&, const void*, const StridedRegion&, std::size_t) override {}
    void copy_to_host(void*, const void*, std::size_t) override {}
    void copy_from_host(void*, const void*, std::size_t) override {}
    void synchronize() override {}
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor&) override { return nullptr; }
    std::unique_ptr<PhaseClock> make_clock() override { return nullptr; }

private:
    int count_;
};

TEST(Provenance, MachineClassCountsTheNodesGpus) {
    // The registered backends: a CPU-only build records 0 GPUs.
    const auto here = machine_info();
    ASSERT_TRUE(here.contains("gpu_count") && here.contains("gpu_model")) << here.dump();
    if (!Registry<Backend>::instance().contains("cuda")) {
        EXPECT_EQ(here.at("gpu_count"), 0);
        EXPECT_EQ(here.at("gpu_model"), "");
        EXPECT_TRUE(here.at("gpus").empty());
        EXPECT_EQ(node_devices().count, 0);
    }
    EXPECT_EQ(here.at("fingerprint"), machine_fingerprint(here));

    // node_devices asks every backend and takes the first that has GPUs.
    Registry<Backend> registry;
    registry.add("fftw", [] { return Registry<Backend>::instance().create("fftw"); });
    EXPECT_EQ(node_devices(registry).count, 0);
    registry.add("zz_gpu", [] { return std::make_unique<FakeGpuBackend>(4); });
    const DeviceInfo d = node_devices(registry);
    EXPECT_EQ(d.count, 4);
    EXPECT_EQ(d.model, "Fake H200");

    // 4 GPUs, 2 GPUs and none are three machine classes of the same host.
    const auto four = machine_info(DeviceInfo{"NVIDIA H200", 4});
    const auto two = machine_info(DeviceInfo{"NVIDIA H200", 2});
    const auto none = machine_info(DeviceInfo{});
    EXPECT_EQ(four.at("gpus").size(), 4u);
    EXPECT_EQ(four.at("gpus")[0], "NVIDIA H200");
    EXPECT_NE(four.at("fingerprint"), two.at("fingerprint"));
    EXPECT_NE(two.at("fingerprint"), none.at("fingerprint"));
    EXPECT_NE(four.at("fingerprint"), machine_info(DeviceInfo{"NVIDIA H100 80GB HBM3", 4}).at("fingerprint"));
}

TEST(Provenance, CpuFingerprintsOfOlderRecordsStillMatch) {
    // The machine object of the first committed CPU records (a 2-core VM, written before GPU fields existed).
    const nlohmann::json old = nlohmann::json::parse(
        R"({"arch": "x86_64", "cpu_count": 2, "cpu_model": "AMD EPYC", "gpus": [], "hostname": "vm",
            "memory_bytes": 25276502016, "os": "Linux 6.18.44-fc-v669"})");
    EXPECT_EQ(machine_fingerprint(old), "8bacac40fbe32e05");
    nlohmann::json now = old;
    now["gpu_count"] = 0;
    now["gpu_model"] = "";
    EXPECT_EQ(machine_fingerprint(now), "8bacac40fbe32e05");
}

TEST(Provenance, SanitizedFileNames) {
    EXPECT_EQ(sanitize_filename("quick run/../x"), "quick_run_.._x");
    EXPECT_EQ(sanitize_filename(".hidden"), "_hidden");
    EXPECT_EQ(sanitize_filename("a-b_c.1"), "a-b_c.1");
}

}  // namespace
}  // namespace fftune
