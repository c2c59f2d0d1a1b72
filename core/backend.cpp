#include "core/backend.hpp"

namespace fftune {

Buffer::Buffer(Backend& backend, std::size_t bytes, bool host)
    : backend_(&backend), bytes_(bytes), host_(host) {
    // Allocate at least one byte so that empty boxes still get a valid pointer.
    const std::size_t n = bytes == 0 ? 1 : bytes;
    ptr_ = host ? backend.allocate_host(n) : backend.allocate(n);
}

Buffer::~Buffer() {
    if (!ptr_) return;
    if (host_)
        backend_->deallocate_host(ptr_);
    else
        backend_->deallocate(ptr_);
}

}  // namespace fftune
