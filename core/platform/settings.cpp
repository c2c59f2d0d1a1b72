#include "core/platform/settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace fftune {
namespace {

const char* value_of(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

[[noreturn]] void refuse(const char* name, const char* value, const char* allowed) {
    throw std::invalid_argument(fmt::format("{}='{}' is not allowed (allowed: {}, or unset)", name, value, allowed));
}

}  // namespace

std::optional<int> host_threads_setting() {
    constexpr const char* name = "FFTUNE_HOST_THREADS";
    const char* v = value_of(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < 1 || x > 4096) refuse(name, v, "a whole number 1..4096");
    return static_cast<int>(x);
}

double nccl_timeout_s() {
    constexpr const char* name = "FFTUNE_NCCL_TIMEOUT_S";
    const char* v = value_of(name);
    if (!v) return 300.0;
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !std::isfinite(x) || x <= 0) refuse(name, v, "seconds, a number > 0");
    return x;
}

namespace {
std::optional<std::size_t> mib_setting(const char* name) {
    const char* v = value_of(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < 0 || x > (1ll << 24))
        refuse(name, v, "a whole number of MiB 0..16777216");
    return static_cast<std::size_t>(x);
}
}  // namespace

std::optional<std::size_t> device_pool_mib_setting() { return mib_setting("FFTUNE_DEVICE_POOL_MIB"); }
std::optional<std::size_t> host_pool_mib_setting() { return mib_setting("FFTUNE_HOST_POOL_MIB"); }

void check_settings() {
    (void)host_threads_setting();
    (void)nccl_timeout_s();
    (void)device_pool_mib_setting();
    (void)host_pool_mib_setting();
}

}  // namespace fftune
