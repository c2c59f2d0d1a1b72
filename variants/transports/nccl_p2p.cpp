// NCCL pairwise exchange: in round k = 1..P-1 each rank packs the block for
// (self + k), sends it and receives from (self - k) in one NCCL group, then
// unpacks. Rounds are queued back to back on the backend's stream, so each
// round's pack follows the previous round's transfer without a host round trip;
// pack and transfer are ordered on one stream, not overlapped. Timed as exchange.k.
#include "core/registry.hpp"
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
        const int n = static_cast<int>(plan.peers.size());
        const cudaStream_t s = stream(ctx);
        copy_self(ctx, src, dst);
        for (int k = 1; k < n; ++k) {
            const int to = (plan.self + k) % n, from = (plan.self - k + n) % n;
            if (plan.peers[to].send_count > 0 && must_pack(ctx, to)) pack_peer(ctx, to, src);
            group([&] { post(ctx, to, from, src, dst, s); });
            if (plan.peers[from].recv_count > 0 && must_unpack(ctx, from)) unpack_peer(ctx, from, dst);
        }
        wait(s, "nccl_p2p");
    }
};

const bool registered = register_variant<Transport, NcclP2p>("nccl_p2p");

}  // namespace
}  // namespace fftune
