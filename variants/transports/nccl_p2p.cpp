// NCCL pairwise exchange: in round k = 1..P-1 each rank packs the block for
// (self + k), sends it and receives from (self - k) in one NCCL group, then
// unpacks. Rounds are queued back to back on the backend's stream, so each
// round's pack follows the previous round's transfer without a host round trip;
// pack and transfer are ordered on one stream, not overlapped. Timed as exchange.k.
#include "core/registry.hpp"
#include "core/transport.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

class NcclP2p final : public Transport {
public:
    bool separate_pack_phases() const override { return false; }
    bool uses_staging_buffers() const override { return true; }
    bool uses_mpi() const override { return false; }
    std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const override {
        return nccl::not_applicable(backend, gpu_aware);
    }
    void setup(const ReshapeContext& ctx) override { comm_ = nccl::shared_comm(ctx.comm); }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        PhaseScope scope(timer, ph.exchange);
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        const auto stream = static_cast<cudaStream_t>(ctx.backend->native_stream());
        const std::size_t e = plan.elem_bytes;
        copy_self(ctx, src, dst);
        for (int k = 1; k < n; ++k) {
            const int to = (plan.self + k) % n, from = (plan.self - k + n) % n;
            const PeerBlock &s = plan.peers[to], &r = plan.peers[from];
            if (s.send_count > 0 && must_pack(ctx, to)) pack_peer(ctx, to, src);
            nccl::check(ncclGroupStart(), "ncclGroupStart");
            if (s.send_count > 0)
                nccl::check(ncclSend(send_pointer(ctx, to, src), s.send_count * e, ncclUint8, to, comm_->get(), stream), "ncclSend");
            if (r.recv_count > 0)
                nccl::check(ncclRecv(recv_pointer(ctx, from, dst), r.recv_count * e, ncclUint8, from, comm_->get(), stream), "ncclRecv");
            nccl::check(ncclGroupEnd(), "ncclGroupEnd");
            if (r.recv_count > 0 && must_unpack(ctx, from)) unpack_peer(ctx, from, dst);
        }
        nccl::wait(*comm_, stream, "nccl_p2p");
    }

private:
    std::shared_ptr<nccl::Comm> comm_;
};

const bool registered = register_variant<Transport, NcclP2p>("nccl_p2p");

}  // namespace
}  // namespace fftune
