#include "core/platform/host_memory.hpp"

#include <fstream>
#include <sstream>

namespace fftune {

std::optional<DeviceMemory> parse_meminfo(const std::string& text) {
    std::istringstream in(text);
    std::string key, unit;
    unsigned long long value = 0;
    std::optional<unsigned long long> total, available;
    while (in >> key >> value) {
        std::getline(in, unit);  // " kB"
        if (key == "MemTotal:") total = value * 1024;
        if (key == "MemAvailable:") available = value * 1024;
    }
    if (!total || !available) return std::nullopt;
    return DeviceMemory{"host", *available, *total};
}

std::optional<DeviceMemory> host_memory_info() {
    std::ifstream f("/proc/meminfo");
    if (!f) return std::nullopt;
    std::stringstream text;
    text << f.rdbuf();
    return parse_meminfo(text.str());
}

}  // namespace fftune
