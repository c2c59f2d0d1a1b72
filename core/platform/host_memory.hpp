// This node's host memory as a backend's device memory is described
// (DeviceMemory: device "host", free = what the kernel says is available
// without swapping, MemAvailable), so that plans on host backends are checked
// before they allocate, as device plans are (require_device_memory).
#pragma once

#include <optional>
#include <string>

#include "core/platform/backend.hpp"

namespace fftune {

// From the text of /proc/meminfo; nothing without MemTotal and MemAvailable.
std::optional<DeviceMemory> parse_meminfo(const std::string& text);
// From /proc/meminfo; nothing where it cannot be read (not Linux).
std::optional<DeviceMemory> host_memory_info();

}  // namespace fftune
