// NCCL all-to-all: pack on the GPU, one grouped ncclSend/ncclRecv per peer on the
// phase communicator (per-peer byte counts, so uneven boxes work), unpack. All
// on the backend's stream: no host round trip between pack, transfer and unpack.
#include "core/base/registry.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

class NcclA2a final : public nccl::TransportBase {
public:
    bool separate_pack_phases() const override { return true; }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        const cudaStream_t s = stream(ctx);
        {
            PhaseScope scope(timer, ph.pack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_pack(ctx, p)) pack_peer(ctx, p, src);
        }
        {
            PhaseScope scope(timer, ph.exchange);
            nccl::group([&] {
                for (int p = 0; p < n; ++p)
                    if (p != plan.self) post(ctx, p, p, src, dst, s);
            });
            copy_self(ctx, src, dst);
        }
        {
            PhaseScope scope(timer, ph.unpack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_unpack(ctx, p)) unpack_peer(ctx, p, dst);
        }
        wait(s, "nccl_a2a");
    }
};

const bool registered = register_variant<Transport, NcclA2a>("nccl_a2a");

}  // namespace
}  // namespace fftune
