// NCCL pairwise exchange, pipelined with packing: in round k = 1..P-1 each rank
// sends the block for (self + k) and receives the one from (self - k) in one
// NCCL group on the main queue. Blocks are packed on side queue 1 and unpacked
// on side queue 2 (CUDA streams), linked by events: round k's transfer waits
// only for its own pack, so pack k+1 runs during transfer k, and unpack k
// during transfer k+1. The self block is copied on queue 2 at the start.
// With a single queue the same schedule runs in order. Timed as exchange.k.
#include "core/base/registry.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

class NcclP2p final : public nccl::TransportBase {
public:
    bool separate_pack_phases() const override { return false; }
    bool uses_staging_buffers() const override { return true; }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        PhaseScope scope(timer, ph.exchange);
        const ReshapePlan& plan = *ctx.plan;
        Backend& backend = *ctx.backend;
        const int n = static_cast<int>(plan.peers.size());
        const cudaStream_t s = stream(ctx);
        const int pack_q = side_queue(backend, 0), unpack_q = side_queue(backend, 1);
        fork_queues(backend);
        copy_self(ctx, src, dst, unpack_q);
        for (int k = 1; k < n; ++k) {
            const int to = (plan.self + k) % n, from = (plan.self - k + n) % n;
            if (plan.peers[to].send_count > 0 && must_pack(ctx, to)) {
                pack_peer(ctx, to, src, pack_q);
                backend.queue_wait(0, pack_q);  // this round's transfer after its pack only
            }
            nccl::group([&] { post(ctx, to, from, src, dst, s); });
            if (plan.peers[from].recv_count > 0 && must_unpack(ctx, from)) {
                backend.queue_wait(unpack_q, 0);  // after this round's transfer
                unpack_peer(ctx, from, dst, unpack_q);
            }
        }
        join_queues(backend);
        wait(s, "nccl_p2p");
    }
};

const bool registered = register_variant<Transport, NcclP2p>("nccl_p2p");

}  // namespace
}  // namespace fftune
