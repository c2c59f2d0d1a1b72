// Machine fingerprint and software provenance attached to every record.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/platform/backend.hpp"
#include "core/base/registry.hpp"

namespace fftune {

// Host, CPU model and count, memory, OS, and the node's GPUs (gpu_model,
// gpu_count, gpus: one model name per device) as node_devices() finds them.
// "fingerprint" hashes the hardware fields (not the host name).
nlohmann::json machine_info();
nlohmann::json machine_info(const DeviceInfo& devices);
// FNV-1a of cpu_model|cpu_count|arch, plus |<gpu_count>x<gpu_model> when the
// node has GPUs: the machine class (4xH200 and 2xH200 differ). Without GPUs the
// hash is the one records had before GPU fields existed, so CPU databases keep matching.
std::string machine_fingerprint(const nlohmann::json& machine);
// GPUs of this node: the first backend of `registry` that reports any (the
// cuda backend where built and a device is visible); none on CPU-only builds.
// Asks each backend through Backend::device_info(), so the core needs no CUDA.
DeviceInfo node_devices(const Registry<Backend>& registry = Registry<Backend>::instance());
// fftune version and git sha, compiler, MPI library, backend library versions,
// command line, UTC timestamp.
nlohmann::json provenance_info(const std::vector<std::string>& argv, Backend* backend);

std::string fftune_version();
std::string utc_timestamp();
// File-name-safe form of a user-supplied name: [A-Za-z0-9._-] only, no leading dot.
std::string sanitize_filename(const std::string& name);

}  // namespace fftune
