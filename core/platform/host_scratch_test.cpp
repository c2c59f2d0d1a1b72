#include "core/platform/host_scratch.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/testing/forwarding_backend.hpp"

namespace fftune {
namespace {

TEST(HostScratch, GrowsOnlyWhenAskedForMoreAndKeepsItsMemory) {
    HostScratch s;
    double* a = s.get<double>(1000);
    for (int i = 0; i < 1000; ++i) a[i] = i;  // writable over the whole range
    EXPECT_EQ(s.capacity(), 1000 * sizeof(double));
    EXPECT_EQ(s.get<double>(10), a) << "a smaller request reuses the array";
    EXPECT_EQ(s.capacity(), 1000 * sizeof(double));
    auto* c = s.get<std::complex<double>>(4000);
    EXPECT_EQ(s.capacity(), 4000 * sizeof(std::complex<double>));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % alignof(std::complex<double>), 0u);
    c[3999] = {1, 2};
    EXPECT_EQ(c[3999].imag(), 2);
}

TEST(HostScratch, RolesAreDistinctProcessWideArrays) {
    auto* a = host_scratch(ScratchRole::test_input).get<float>(16);
    auto* b = host_scratch(ScratchRole::spectrum).get<float>(16);
    EXPECT_NE(a, b);
    EXPECT_EQ(host_scratch(ScratchRole::test_input).get<float>(16), a);
    release_host_scratch();
    EXPECT_EQ(host_scratch(ScratchRole::test_input).capacity(), 0u);
    EXPECT_EQ(host_scratch(ScratchRole::spectrum).capacity(), 0u);
}

// Records pin and unpin calls, as the cuda backend's page-locking would happen.
struct PinLog {
    std::vector<std::pair<void*, std::size_t>> pinned;
    std::vector<void*> unpinned;
};
PinLog pin_log;

class PinningBackend final : public testing::ForwardingBackend {
public:
    explicit PinningBackend(bool device, bool refuse = false) : device_(device), refuse_(refuse) {}
    std::string name() const override { return "pinning"; }
    bool device_memory() const override { return device_; }
    std::function<void(void*)> pin_host(void* p, std::size_t bytes) override {
        pin_log.pinned.push_back({p, bytes});
        if (refuse_) return {};
        return [](void* q) { pin_log.unpinned.push_back(q); };  // needs no backend object
    }

private:
    bool device_, refuse_;
};

TEST(HostScratch, ADeviceBackendPinsEachAllocationOnceAndItIsUnpinnedBeforeItIsFreed) {
    pin_log = {};
    HostScratch s;
    {
        PinningBackend host_only(false);
        s.get<double>(100, &host_only);
        EXPECT_TRUE(pin_log.pinned.empty()) << "host backends do not pin";
    }
    void* a = nullptr;
    {
        PinningBackend device(true);
        a = s.get<double>(1000, &device);
        ASSERT_EQ(pin_log.pinned.size(), 1u);
        EXPECT_EQ(pin_log.pinned[0].first, a);
        EXPECT_EQ(pin_log.pinned[0].second, 1000 * sizeof(double));
        EXPECT_TRUE(s.pinned());
        EXPECT_EQ(s.get<double>(500, &device), a);
        EXPECT_EQ(pin_log.pinned.size(), 1u) << "the same allocation is pinned once";
    }  // the backend is gone; the array stays pinned until it is released
    PinningBackend device(true);
    void* b = s.get<double>(4000, &device);  // grows: unpin the old array, pin the new
    ASSERT_EQ(pin_log.unpinned.size(), 1u);
    EXPECT_EQ(pin_log.unpinned[0], a);
    ASSERT_EQ(pin_log.pinned.size(), 2u);
    EXPECT_EQ(pin_log.pinned[1].first, b);
    s.release();
    ASSERT_EQ(pin_log.unpinned.size(), 2u);
    EXPECT_EQ(pin_log.unpinned[1], b);
    EXPECT_FALSE(s.pinned());
}

TEST(HostScratch, ARefusedPinIsNotRetriedForTheSameAllocation) {
    pin_log = {};
    HostScratch s;
    PinningBackend refusing(true, /*refuse=*/true);
    s.get<float>(64, &refusing);
    s.get<float>(64, &refusing);
    EXPECT_EQ(pin_log.pinned.size(), 1u);
    EXPECT_FALSE(s.pinned());
    s.release();
    EXPECT_TRUE(pin_log.unpinned.empty());
}

TEST(HostScratch, LendsItsArrayToOneBufferAtATime) {
    pin_log = {};
    HostScratch s;
    PinningBackend device(true);
    void* first = nullptr;
    {
        Buffer a = s.lend(1000, device);
        first = a.data();
        EXPECT_EQ(a.bytes(), 1000u);
        EXPECT_TRUE(s.lent());
        ASSERT_EQ(pin_log.pinned.size(), 1u) << "lent memory is pinned like get()'s";
        EXPECT_THROW(s.lend(10, device), std::logic_error) << "the same memory must not go to two buffers";
        EXPECT_THROW(s.get<char>(10), std::logic_error);
        EXPECT_THROW(s.release(), std::logic_error);
        Buffer moved = std::move(a);
        EXPECT_EQ(moved.data(), first);
        EXPECT_TRUE(s.lent()) << "moving the buffer keeps the loan";
    }
    EXPECT_FALSE(s.lent()) << "given back when the buffer ends";
    EXPECT_TRUE(pin_log.unpinned.empty()) << "and kept, pinned, for the next loan";
    Buffer again = s.lend(500, device);
    EXPECT_EQ(again.data(), first);
    EXPECT_EQ(pin_log.pinned.size(), 1u);
    again = Buffer();
    EXPECT_FALSE(s.lent());
    s.release();
    EXPECT_EQ(pin_log.unpinned.size(), 1u);
}

}  // namespace
}  // namespace fftune
