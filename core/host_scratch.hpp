// Host arrays reused from one point of a sweep to the next. At 1024^3 each
// test array is ~8 GB; fresh ones cost a zeroed page per 4 KiB on every point
// (most of a point's set-up time before this existed). Contents are undefined
// on get(); an array grows and never shrinks until the process ends.
#pragma once

#include <cstddef>

namespace fftune {

class HostScratch {
public:
    HostScratch() = default;
    ~HostScratch();
    HostScratch(const HostScratch&) = delete;
    HostScratch& operator=(const HostScratch&) = delete;

    // Room for `count` objects of T (malloc'd: suitably aligned, implicit-lifetime types).
    template <class T>
    T* get(std::size_t count) {
        return static_cast<T*>(bytes(count * sizeof(T)));
    }
    std::size_t capacity() const { return capacity_; }
    void release();  // frees the array; the next get() allocates again

private:
    void* bytes(std::size_t n);
    void* data_ = nullptr;
    std::size_t capacity_ = 0;
};

// Process-wide arrays by role; each role has one user at a time (the runner
// and validation run one point after another on the calling thread).
enum class ScratchRole { test_input, spectrum, laplacian_spectrum, result };
HostScratch& host_scratch(ScratchRole role);
// Frees every role's array (an application done validating; a sweep keeps them).
void release_host_scratch();

}  // namespace fftune
