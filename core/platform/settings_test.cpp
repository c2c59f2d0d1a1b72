// Settings from the environment: defaults when unset or empty, the value when
// it parses whole and lies in range, and an error naming the variable
// otherwise (check_settings() included).
#include "core/platform/settings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace fftune {
namespace {

// Sets `name` for one scope, then restores what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        had_ = std::getenv(name) != nullptr;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

std::string error_of(void (*f)()) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(Settings, HostThreads) {
    {
        ScopedEnv e("FFTUNE_HOST_THREADS", nullptr);
        EXPECT_FALSE(host_threads_setting());
    }
    {
        ScopedEnv e("FFTUNE_HOST_THREADS", "");
        EXPECT_FALSE(host_threads_setting());
    }
    {
        ScopedEnv e("FFTUNE_HOST_THREADS", "12");
        EXPECT_EQ(host_threads_setting(), 12);
    }
    for (const char* bad : {"0", "-3", "4097", "8x", "x8", "2.5", " ", "99999999999999999999"}) {
        ScopedEnv e("FFTUNE_HOST_THREADS", bad);
        EXPECT_THROW(host_threads_setting(), std::invalid_argument) << bad;
    }
}

TEST(Settings, NcclTimeout) {
    {
        ScopedEnv e("FFTUNE_NCCL_TIMEOUT_S", nullptr);
        EXPECT_EQ(nccl_timeout_s(), 300.0);
    }
    {
        ScopedEnv e("FFTUNE_NCCL_TIMEOUT_S", "2.5");
        EXPECT_EQ(nccl_timeout_s(), 2.5);
    }
    // Used to become 0 through atof: every transfer then timed out at once.
    for (const char* bad : {"abc", "0", "-1", "5s", "nan", "inf", "1e999"}) {
        ScopedEnv e("FFTUNE_NCCL_TIMEOUT_S", bad);
        EXPECT_THROW(nccl_timeout_s(), std::invalid_argument) << bad;
    }
}

// The device and host pools' caps: MiB 0..2^24, unset for the default.
TEST(Settings, PoolMib) {
    using Reader = std::optional<std::size_t> (*)();
    for (const auto& [name, read] : {std::pair<const char*, Reader>{"FFTUNE_DEVICE_POOL_MIB", device_pool_mib_setting},
                                     {"FFTUNE_HOST_POOL_MIB", host_pool_mib_setting}}) {
        {
            ScopedEnv e(name, nullptr);
            EXPECT_FALSE(read()) << name;
        }
        for (const auto& [text, mib] : {std::pair{"0", 0ull}, {"4096", 4096ull}, {"16777216", 16777216ull}}) {
            ScopedEnv e(name, text);
            EXPECT_EQ(read(), mib) << name << "=" << text;
        }
        for (const char* bad : {"-1", "16777217", "1.5", "4G", "off"}) {
            ScopedEnv e(name, bad);
            EXPECT_THROW(read(), std::invalid_argument) << name << "=" << bad;
            EXPECT_NE(error_of(check_settings).find(name), std::string::npos) << name << "=" << bad;
        }
    }
}

TEST(Settings, CheckNamesTheVariableItsValueAndWhatIsAllowed) {
    ScopedEnv ok("FFTUNE_HOST_THREADS", "4");
    {
        ScopedEnv e("FFTUNE_NCCL_TIMEOUT_S", "soon");
        const std::string m = error_of(check_settings);
        EXPECT_NE(m.find("FFTUNE_NCCL_TIMEOUT_S"), std::string::npos) << m;
        EXPECT_NE(m.find("'soon'"), std::string::npos) << m;
        EXPECT_NE(m.find("allowed: seconds, a number > 0"), std::string::npos) << m;
    }
    EXPECT_EQ(error_of(check_settings), "");
}

}  // namespace
}  // namespace fftune
