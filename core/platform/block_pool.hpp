// Blocks of device memory a process has freed, kept by exact size for its
// next allocation of that size. A sweep's points allocate the same arrays
// again and again (both directions, every transport of one size, the
// validation's planes), and on an H200 each cudaMalloc and cudaFree of
// them cost 0.1-0.9 ms at 256^3, a sixth of such a point's wall time
// (results/h200x2-2026-11-28-check-scratch). Bookkeeping only: the caller
// allocates, frees and makes a block idle on its device before giving it
// back. Each device keeps at most its cap of idle bytes, the newest blocks.
// Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace fftune {

class BlockPool {
public:
    struct Block {
        void* ptr = nullptr;
        std::size_t bytes = 0;
        int device = -1;
        bool operator==(const Block&) const = default;
    };

    // A device's idle bytes kept at most (0: none, every block given back is
    // handed to the caller to free). Devices without a cap set keep none.
    void set_cap(int device, std::size_t bytes);
    bool has_cap(int device) const;

    // An idle block of exactly `bytes` on `device`, now in use; nullptr if none.
    void* take(int device, std::size_t bytes);
    // A block the caller just allocated, now in use.
    void adopt(void* ptr, int device, std::size_t bytes);
    // The device of a block in use; -1 if the pool does not know it.
    int device_of(void* ptr) const;
    // A block in use, now idle: kept if `keep` and it fits under its device's
    // cap. Returns what the caller must free now: the block itself (not kept,
    // over the cap, or not known to the pool: bytes 0, device -1), or the
    // oldest idle blocks of its device that made room for it.
    std::vector<Block> give(void* ptr, bool keep = true);
    // Every idle block (of `device`; of all devices when -1), for the caller to free.
    std::vector<Block> clear(int device = -1);

    std::size_t idle_bytes(int device) const;
    std::size_t in_use() const;

private:
    mutable std::mutex mutex_;
    std::map<int, std::size_t> cap_;
    std::unordered_map<void*, Block> in_use_;
    std::vector<Block> idle_;  // oldest first
};

}  // namespace fftune
