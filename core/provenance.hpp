// Machine fingerprint and software provenance attached to every record.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/backend.hpp"

namespace fftune {

// Host, CPU model and count, memory, OS; GPU fields are added by GPU backends.
// "fingerprint" hashes the hardware fields (not the host name).
nlohmann::json machine_info();
// fftune version and git sha, compiler, MPI library, backend library versions,
// command line, UTC timestamp.
nlohmann::json provenance_info(const std::vector<std::string>& argv, Backend* backend);

std::string fftune_version();
std::string utc_timestamp();
// File-name-safe form of a user-supplied name: [A-Za-z0-9._-] only, no leading dot.
std::string sanitize_filename(const std::string& name);

}  // namespace fftune
