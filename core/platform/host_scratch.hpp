// Host arrays reused from one point of a sweep to the next. At 1024^3 each
// test array is ~8 GB; fresh ones cost a zeroed page per 4 KiB on every point
// (most of a point's set-up time before this existed), and pinning 64 GiB
// afresh (cudaMallocHost) ~26 s. Contents are undefined on get() and lend();
// an array grows and never shrinks until the process ends.
#pragma once

#include <cstddef>
#include <functional>

#include "core/platform/backend.hpp"

namespace fftune {

class HostScratch {
public:
    HostScratch() = default;
    ~HostScratch();
    HostScratch(const HostScratch&) = delete;
    HostScratch& operator=(const HostScratch&) = delete;

    // Room for `count` objects of T (malloc'd: suitably aligned, implicit-lifetime types).
    // With a device backend, the array is page-locked by it once per allocation
    // (Backend::pin_host), so that the copies to and from the device run at
    // full rate; its pages are first touched in parallel, not by the driver.
    template <class T>
    T* get(std::size_t count, Backend* pin_for = nullptr) {
        return static_cast<T*>(bytes(count * sizeof(T), pin_for));
    }
    // The array as a Buffer of `bytes` (pinned for a device backend, as get()),
    // for one holder at a time: until that Buffer ends, lend(), get() and
    // release() throw std::logic_error instead of handing the memory out twice.
    Buffer lend(std::size_t bytes, Backend& pin_for);
    bool lent() const { return lent_; }
    std::size_t capacity() const { return capacity_; }
    bool pinned() const { return static_cast<bool>(unpin_); }
    void release();  // unpins and frees the array; the next get() allocates again

private:
    void* bytes(std::size_t n, Backend* pin_for);
    void free_array();
    bool lent_ = false;
    void* data_ = nullptr;
    std::size_t capacity_ = 0;
    bool pin_tried_ = false;  // once per allocation: a refusal is not retried every point
    std::function<void(void*)> unpin_;
};

// Process-wide arrays by role; each role has one user at a time (the runner
// and validation run one point after another on the calling thread):
//   test_input, spectrum   host copies of a plan's real and complex arrays
//                          (the test input, the spectrum, results read back)
//   plan_input, plan_output, multi_device_staging
//                          lent to plans whose arrays live in host memory
//                          (Plan::allocate_input, the cufftXt padded copy)
enum class ScratchRole { test_input, spectrum, plan_input, plan_output, multi_device_staging };
HostScratch& host_scratch(ScratchRole role);
// Unpins and frees every role's array (an application done validating; a job
// keeps them from one point to the next and releases them when it ends).
void release_host_scratch();

}  // namespace fftune
