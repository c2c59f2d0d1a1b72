// Test helper: a backend that forwards every call to a registered one (fftw by
// default). Test backends derive from it and override only what they change
// (a transposed FFT stage, device-memory claims, a multi-device stand-in).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/platform/backend.hpp"
#include "core/base/registry.hpp"

namespace fftune::testing {

class ForwardingBackend : public Backend {
public:
    explicit ForwardingBackend(const std::string& inner = "fftw") : inner_(Registry<Backend>::instance().create(inner)) {}
    std::vector<std::pair<std::string, std::string>> versions() const override { return inner_->versions(); }
    bool device_memory() const override { return inner_->device_memory(); }
    void* allocate(std::size_t b) override { return inner_->allocate(b); }
    void deallocate(void* p) override { inner_->deallocate(p); }
    void* allocate_host(std::size_t b) override { return inner_->allocate_host(b); }
    void deallocate_host(void* p) override { inner_->deallocate_host(p); }
    void copy_region(void* d, const StridedRegion& dr, const void* s, const StridedRegion& sr, std::size_t e) override {
        inner_->copy_region(d, dr, s, sr, e);
    }
    void copy_to_host(void* d, const void* s, std::size_t b) override { inner_->copy_to_host(d, s, b); }
    void copy_from_host(void* d, const void* s, std::size_t b) override { inner_->copy_from_host(d, s, b); }
    void synchronize() override { inner_->synchronize(); }
    void multiply_real(void* d, const void* f, index_t n, Precision p) override { inner_->multiply_real(d, f, n, p); }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override { return inner_->make_fft(desc); }
    std::optional<std::string> store_aside_unavailable() const override { return inner_->store_aside_unavailable(); }
    std::unique_ptr<PhaseClock> make_clock() override { return inner_->make_clock(); }

protected:
    Backend& inner() { return *inner_; }

private:
    std::unique_ptr<Backend> inner_;
};

// An FFT plan that calls `before` ahead of each execution of `inner` (a test
// backend's make_fft injects failures or hangs with it).
struct HookedFft final : FftPlan {
    HookedFft(std::unique_ptr<FftPlan> inner, std::function<void()> before)
        : inner(std::move(inner)), before(std::move(before)) {}
    void execute(void* in, void* out) override {
        before();
        inner->execute(in, out);
    }
    std::size_t work_bytes() const override { return inner->work_bytes(); }
    void set_work_area(void* area) override { inner->set_work_area(area); }
    std::unique_ptr<FftPlan> inner;
    std::function<void()> before;
};

}  // namespace fftune::testing
