// NCCL's native all-to-all (ncclAlltoAll, NCCL 2.28+): one collective with equal
// counts per peer. Every block is packed into a slot as large as the largest
// block of the phase (uneven boxes are padded), and the self slot travels too,
// unused (copy_self moves the self block). On 4 H200s the native collective
// moved 256 MiB per rank 1.7x faster than grouped send/recv (DESIGN.md 7); it
// pays for that with the padding and with packing and unpacking blocks that
// nccl_a2a sends and receives in place.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/registry.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

class NcclAlltoall final : public nccl::TransportBase {
public:
    bool separate_pack_phases() const override { return true; }
    std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const override {
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0)
        (void)backend;
        (void)gpu_aware;
        return fmt::format("ncclAlltoAll needs NCCL 2.28 or later; this build has NCCL {}.{}", NCCL_MAJOR, NCCL_MINOR);
#else
        return nccl::not_applicable(backend, gpu_aware);
#endif
    }
    // n slots of the largest block, self slot included.
    index_t send_buffer_elems(const ReshapePlan& plan) const override {
        return slot_elems(plan) * static_cast<index_t>(plan.peers.size());
    }
    index_t recv_buffer_elems(const ReshapePlan& plan) const override { return send_buffer_elems(plan); }
    void setup(const ReshapeContext& ctx) override {
        nccl::TransportBase::setup(ctx);
        slot_bytes_ = static_cast<std::size_t>(slot_elems(*ctx.plan)) * ctx.plan->elem_bytes;  // O(ranks^2): once
    }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        const std::size_t slot = slot_bytes_;
        auto* send = static_cast<char*>(ctx.send_buffer);
        auto* recv = static_cast<char*>(ctx.recv_buffer);
        const cudaStream_t s = stream(ctx);
        {
            PhaseScope scope(timer, ph.pack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self) pack_block(ctx, p, src, send + p * slot);
        }
        {
            PhaseScope scope(timer, ph.exchange);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
            if (slot > 0) nccl::check(ncclAlltoAll(send, recv, slot, ncclUint8, comm(), s), "ncclAlltoAll");
#endif
            copy_self(ctx, src, dst);
        }
        {
            PhaseScope scope(timer, ph.unpack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self) unpack_block(ctx, p, dst, recv + p * slot);
        }
        wait(s, "nccl_alltoall");
    }

private:
    std::size_t slot_bytes_ = 0;
    // The largest block any rank of the phase sends any other (the same on every rank).
    static index_t slot_elems(const ReshapePlan& plan) {
        const int n = static_cast<int>(plan.peers.size());
        index_t most = 0;
        for (int from = 0; from < n; ++from)
            for (int to = 0; to < n; ++to)
                if (from != to) most = std::max(most, plan.block(from, to).count());
        return most;
    }
};

const bool registered = register_variant<Transport, NcclAlltoall>("nccl_alltoall");

}  // namespace
}  // namespace fftune
