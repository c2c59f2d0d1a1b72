// Test helper: fftw behind a pretend device of fixed capacity. It counts the
// bytes live in allocate() (free = capacity - live, as cudaMemGetInfo would
// report; beyond the capacity allocate() fails), and its FFT plans ask for a work area of their own size, as cuFFT's
// do, refusing to execute without one. Tests check a Plan's footprint
// accounting against what it really allocated, and its fit check.
// Register it in the test: register_variant<Backend, MeteredBackend>("fftw_metered").
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "core/testing/forwarding_backend.hpp"

namespace fftune::testing {

struct Meter {
    std::size_t capacity = std::size_t(1) << 40;
    std::size_t live = 0, peak = 0;
    std::map<void*, std::size_t> sizes;
    std::set<void*> areas;  // work areas handed to FFT plans
    std::size_t largest_request = 0;
    static Meter& instance() {
        static Meter m;
        return m;
    }
};

class MeteredFft final : public FftPlan {
public:
    MeteredFft(std::unique_ptr<FftPlan> inner, std::size_t work) : inner_(std::move(inner)), work_(work) {}
    std::size_t work_bytes() const override { return work_; }
    void set_work_area(void* area) override {
        area_ = area;
        Meter::instance().areas.insert(area);
    }
    void execute(void* in, void* out) override {
        if (!area_) throw std::logic_error("metered FFT executed without a work area");
        auto& m = Meter::instance();
        if (m.sizes.count(area_) == 0 || m.sizes[area_] < work_) throw std::logic_error("work area too small");
        inner_->execute(in, out);
    }

private:
    std::unique_ptr<FftPlan> inner_;
    std::size_t work_;
    void* area_ = nullptr;
};

class MeteredBackend final : public ForwardingBackend {
public:
    std::string name() const override { return "fftw_metered"; }
    std::optional<DeviceMemory> device_memory_info() const override {
        const auto& m = Meter::instance();
        return DeviceMemory{"metered-device", m.capacity > m.live ? m.capacity - m.live : 0, m.capacity};
    }
    // Beyond the capacity it fails as cudaMalloc would.
    void* allocate(std::size_t b) override {
        auto& m = Meter::instance();
        if (m.live + b > m.capacity) throw std::runtime_error("metered device: out of memory");
        void* p = ForwardingBackend::allocate(b);
        m.sizes[p] = b;
        m.live += b;
        m.peak = std::max(m.peak, m.live);
        return p;
    }
    void deallocate(void* p) override {
        auto& m = Meter::instance();
        m.live -= m.sizes.at(p);
        m.sizes.erase(p);
        m.areas.erase(p);
        ForwardingBackend::deallocate(p);
    }
    // A work area of 1 KiB per transformed point and batch (differs per stage).
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        std::size_t points = 1;
        for (const auto& d : desc.dims) points *= static_cast<std::size_t>(d.n);
        for (const auto& b : desc.batch) points *= static_cast<std::size_t>(b.n);
        const std::size_t work = 1024 * points;
        Meter::instance().largest_request = std::max(Meter::instance().largest_request, work);
        return std::make_unique<MeteredFft>(ForwardingBackend::make_fft(desc), work);
    }
};

}  // namespace fftune::testing
