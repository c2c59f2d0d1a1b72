#include "core/host_scratch.hpp"

#include <cstdlib>
#include <new>

namespace fftune {

HostScratch::~HostScratch() { std::free(data_); }

void HostScratch::release() {
    std::free(data_);
    data_ = nullptr;
    capacity_ = 0;
}

void* HostScratch::bytes(std::size_t n) {
    if (n > capacity_ || !data_) {
        release();
        data_ = std::malloc(n > 0 ? n : 1);
        if (!data_) throw std::bad_alloc();
        capacity_ = n;
    }
    return data_;
}

namespace {
HostScratch arrays[4];  // one per ScratchRole
}  // namespace

HostScratch& host_scratch(ScratchRole role) { return arrays[static_cast<int>(role)]; }

void release_host_scratch() {
    for (auto& a : arrays) a.release();
}

}  // namespace fftune
