// NCCL all-to-all: pack on the GPU, one grouped ncclSend/ncclRecv per peer on the
// phase communicator (per-peer byte counts, so uneven boxes work), unpack. All
// on the backend's stream: no host round trip between pack, transfer and unpack.
#include "core/registry.hpp"
#include "core/transport.hpp"
#include "variants/transports/nccl_common.hpp"

namespace fftune {
namespace {

class NcclA2a final : public Transport {
public:
    bool separate_pack_phases() const override { return true; }
    bool uses_mpi() const override { return false; }
    std::optional<std::string> not_applicable(const Backend& backend, bool gpu_aware) const override {
        return nccl::not_applicable(backend, gpu_aware);
    }
    void setup(const ReshapeContext& ctx) override { comm_ = nccl::shared_comm(ctx.comm); }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        const auto stream = static_cast<cudaStream_t>(ctx.backend->native_stream());
        const std::size_t e = plan.elem_bytes;
        {
            PhaseScope scope(timer, ph.pack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_pack(ctx, p)) pack_peer(ctx, p, src);
        }
        {
            PhaseScope scope(timer, ph.exchange);
            nccl::check(ncclGroupStart(), "ncclGroupStart");
            for (int p = 0; p < n; ++p) {
                const PeerBlock& b = plan.peers[p];
                if (p == plan.self) continue;
                if (b.send_count > 0)
                    nccl::check(ncclSend(send_pointer(ctx, p, src), b.send_count * e, ncclUint8, p, comm_->get(), stream),
                                "ncclSend");
                if (b.recv_count > 0)
                    nccl::check(ncclRecv(recv_pointer(ctx, p, dst), b.recv_count * e, ncclUint8, p, comm_->get(), stream),
                                "ncclRecv");
            }
            nccl::check(ncclGroupEnd(), "ncclGroupEnd");
            copy_self(ctx, src, dst);
        }
        {
            PhaseScope scope(timer, ph.unpack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_unpack(ctx, p)) unpack_peer(ctx, p, dst);
        }
        nccl::wait(*comm_, stream, "nccl_a2a");
    }

private:
    std::shared_ptr<nccl::Comm> comm_;
};

const bool registered = register_variant<Transport, NcclA2a>("nccl_a2a");

}  // namespace
}  // namespace fftune
