#include "core/records/provenance.hpp"

#include "core/platform/mpi_util.hpp"

#include <mpi.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#ifndef FFTUNE_VERSION
#define FFTUNE_VERSION "0.0.0"
#endif
#ifndef FFTUNE_GIT_SHA
#define FFTUNE_GIT_SHA "unknown"
#endif

namespace fftune {

std::string fftune_version() { return FFTUNE_VERSION; }

std::string utc_timestamp() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string sanitize_filename(const std::string& name) {
    std::string out;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '_' || c == '-';
        out += ok ? c : '_';
    }
    while (!out.empty() && out.front() == '.') out.front() = '_';
    if (out.empty()) out = "unnamed";
    return out.substr(0, 128);
}

namespace {
std::string read_cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto pos = line.find(':');
            if (pos != std::string::npos) return line.substr(line.find_first_not_of(' ', pos + 1));
        }
    return "unknown";
}
long long read_mem_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    long long kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
        if (key == "MemTotal:") return kb * 1024;
    return 0;
}
}  // namespace

DeviceInfo node_devices(const Registry<Backend>& registry) {
    for (const auto& name : registry.names()) {
        try {
            if (const DeviceInfo d = registry.create(name)->device_info(); d.count > 0) return d;
        } catch (const std::exception&) {
            // a backend that cannot even start here has no devices to report
        }
    }
    return {};
}

std::string machine_fingerprint(const nlohmann::json& m) {
    std::string hw = fmt::format("{}|{}|{}", m.value("cpu_model", ""), m.value("cpu_count", 0u), m.value("arch", ""));
    if (const int gpus = m.value("gpu_count", 0); gpus > 0) hw += fmt::format("|{}x{}", gpus, m.value("gpu_model", ""));
    // FNV-1a 64: stable across builds and standard libraries, unlike std::hash.
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : hw) h = (h ^ c) * 1099511628211ull;
    return fmt::format("{:016x}", h);
}

nlohmann::json machine_info(const DeviceInfo& devices) {
    utsname u{};
    uname(&u);
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    nlohmann::json m{{"hostname", host},
                     {"cpu_model", read_cpu_model()},
                     {"cpu_count", std::thread::hardware_concurrency()},
                     {"memory_bytes", read_mem_bytes()},
                     {"os", fmt::format("{} {}", u.sysname, u.release)},
                     {"arch", u.machine},
                     {"gpu_model", devices.model},
                     {"gpu_count", devices.count},
                     {"gpus", std::vector<std::string>(static_cast<std::size_t>(std::max(0, devices.count)), devices.model)}};
    m["fingerprint"] = machine_fingerprint(m);
    return m;
}

nlohmann::json machine_info() {
    static const DeviceInfo devices = node_devices();  // hardware does not change while we run
    return machine_info(devices);
}

nlohmann::json provenance_info(const std::vector<std::string>& argv, Backend* backend) {
    char mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(mpi_lib, &len);
    // Some MPIs count the terminating NUL in len or append newlines: keep the first line.
    std::string mpi(mpi_lib, static_cast<std::size_t>(std::max(0, len)));
    if (auto end = mpi.find_first_of(std::string("\n\r\0", 3)); end != std::string::npos) mpi.resize(end);
    while (!mpi.empty() && (mpi.back() == ' ' || mpi.back() == ',')) mpi.pop_back();
    int version = 0, subversion = 0, thread_level = 0;
    MPI_Get_version(&version, &subversion);
    MPI_Query_thread(&thread_level);
    nlohmann::json libs = nlohmann::json::object();
    if (backend)
        for (const auto& [k, v] : backend->versions()) libs[k] = v;
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    return {{"fftune_version", fftune_version()},
            {"git_sha", FFTUNE_GIT_SHA},
            {"compiler", fmt::format("{} {}",
#if defined(__clang__)
                                     "clang",
#else
                                     "gcc",
#endif
                                     __VERSION__)},
            {"mpi_library", mpi},
            {"mpi_standard", fmt::format("{}.{}", version, subversion)},
            {"mpi_thread_multiple", thread_level == MPI_THREAD_MULTIPLE},
            {"mpi_gpu_aware", mpi_gpu_aware()},
            {"fft_libraries", libs},
            {"command_line", cmd},
            {"timestamp", utc_timestamp()}};
}

}  // namespace fftune
