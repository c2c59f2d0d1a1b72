#include "core/host_scratch.hpp"

#include <cstdlib>
#include <new>

namespace fftune {

HostScratch::~HostScratch() { std::free(data_); }

void* HostScratch::bytes(std::size_t n) {
    if (n > capacity_ || !data_) {
        std::free(data_);
        data_ = nullptr;
        capacity_ = 0;
        data_ = std::malloc(n > 0 ? n : 1);
        if (!data_) throw std::bad_alloc();
        capacity_ = n;
    }
    return data_;
}

HostScratch& host_scratch(ScratchRole role) {
    static HostScratch arrays[4];
    return arrays[static_cast<int>(role)];
}

}  // namespace fftune
