// Host arrays reused from one point of a sweep to the next. At 1024^3 each
// test array is ~8 GB; fresh ones cost a zeroed page per 4 KiB on every point
// (most of a point's set-up time before this existed). Contents are undefined
// on get(); an array grows and never shrinks until the process ends.
#pragma once

#include <cstddef>
#include <functional>

namespace fftune {

class Backend;

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
    std::size_t capacity() const { return capacity_; }
    bool pinned() const { return static_cast<bool>(unpin_); }
    void release();  // unpins and frees the array; the next get() allocates again

private:
    void* bytes(std::size_t n, Backend* pin_for);
    void* data_ = nullptr;
    std::size_t capacity_ = 0;
    bool pin_tried_ = false;  // once per allocation: a refusal is not retried every point
    std::function<void(void*)> unpin_;
};

// Process-wide arrays by role; each role has one user at a time (the runner
// and validation run one point after another on the calling thread).
enum class ScratchRole { test_input, spectrum, laplacian_spectrum, result };
HostScratch& host_scratch(ScratchRole role);
// Unpins and frees every role's array (an application done validating; a job
// keeps them from one point to the next and releases them when it ends).
void release_host_scratch();

}  // namespace fftune
