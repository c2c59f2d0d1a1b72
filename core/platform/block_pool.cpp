#include "core/platform/block_pool.hpp"

#include <algorithm>

namespace fftune {

void BlockPool::set_cap(int device, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    cap_[device] = bytes;
}

bool BlockPool::has_cap(int device) const {
    std::lock_guard lock(mutex_);
    return cap_.count(device) > 0;
}

void* BlockPool::take(int device, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    // The newest first: the block most recently given back is likeliest the same role's.
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it)
        if (it->device == device && it->bytes == bytes) {
            const Block b = *it;
            idle_.erase(std::next(it).base());
            in_use_[b.ptr] = b;
            return b.ptr;
        }
    return nullptr;
}

void BlockPool::adopt(void* ptr, int device, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    in_use_[ptr] = Block{ptr, bytes, device};
}

int BlockPool::device_of(void* ptr) const {
    std::lock_guard lock(mutex_);
    const auto found = in_use_.find(ptr);
    return found == in_use_.end() ? -1 : found->second.device;
}

std::vector<BlockPool::Block> BlockPool::give(void* ptr, bool keep) {
    std::lock_guard lock(mutex_);
    const auto found = in_use_.find(ptr);
    if (found == in_use_.end()) return {Block{ptr, 0, -1}};
    const Block b = found->second;
    in_use_.erase(found);
    const auto cap = cap_.find(b.device);
    if (!keep || cap == cap_.end() || b.bytes > cap->second) return {b};
    std::size_t idle = 0;
    for (const Block& i : idle_)
        if (i.device == b.device) idle += i.bytes;
    std::vector<Block> out;
    for (auto it = idle_.begin(); idle + b.bytes > cap->second && it != idle_.end();) {
        if (it->device != b.device) {
            ++it;
            continue;
        }
        idle -= it->bytes;
        out.push_back(*it);
        it = idle_.erase(it);
    }
    idle_.push_back(b);
    return out;
}

std::vector<BlockPool::Block> BlockPool::clear(int device) {
    std::lock_guard lock(mutex_);
    std::vector<Block> out;
    const auto keep = std::stable_partition(idle_.begin(), idle_.end(),
                                            [&](const Block& b) { return device != -1 && b.device != device; });
    out.assign(keep, idle_.end());
    idle_.erase(keep, idle_.end());
    return out;
}

std::size_t BlockPool::idle_bytes(int device) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const Block& b : idle_)
        if (b.device == device) n += b.bytes;
    return n;
}

std::size_t BlockPool::in_use() const {
    std::lock_guard lock(mutex_);
    return in_use_.size();
}

}  // namespace fftune
