#include "core/platform/host_scratch.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "core/platform/backend.hpp"
#include "core/platform/parallel.hpp"

namespace fftune {

HostScratch::~HostScratch() {
    if (!lent_) free_array();  // a Buffer still holding it (at exit) keeps it
}

void HostScratch::release() {
    if (lent_) throw std::logic_error("host scratch: release() while the array is lent to a Buffer");
    free_array();
}

Buffer HostScratch::lend(std::size_t n, Backend& pin_for) {
    if (lent_) throw std::logic_error("host scratch: lent twice at once (two arrays of one role)");
    void* p = bytes(n, &pin_for);
    lent_ = true;
    return Buffer(p, n, [this] { lent_ = false; });
}

void HostScratch::free_array() {
    if (unpin_) unpin_(data_);
    unpin_ = nullptr;
    std::free(data_);
    data_ = nullptr;
    capacity_ = 0;
    pin_tried_ = false;
}

void* HostScratch::bytes(std::size_t n, Backend* pin_for) {
    if (lent_) throw std::logic_error("host scratch: get() while the array is lent to a Buffer");
    if (n > capacity_ || !data_) {
        free_array();
        data_ = std::malloc(n > 0 ? n : 1);
        if (!data_) throw std::bad_alloc();
        capacity_ = n;
    }
    if (pin_for && pin_for->device_memory() && !pin_tried_ && capacity_ > 0) {
        pin_tried_ = true;
        constexpr std::int64_t page = 4096;
        auto* c = static_cast<volatile char*>(data_);
        parallel_for(0, (static_cast<std::int64_t>(capacity_) + page - 1) / page, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) c[i * page] = 0;
        }, host_threads(), std::int64_t{1} << 10);
        unpin_ = pin_for->pin_host(data_, capacity_);
    }
    return data_;
}

namespace {
HostScratch arrays[5];  // one per ScratchRole
}  // namespace

HostScratch& host_scratch(ScratchRole role) { return arrays[static_cast<int>(role)]; }

void release_host_scratch() {
    for (auto& a : arrays) a.release();
}

}  // namespace fftune
