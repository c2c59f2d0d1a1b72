// Peer2Peer-Sync (thesis 4.5.1): pack every scattered outgoing block, then
// MPI_Irecv/MPI_Isend per peer and wait for all, then unpack scattered incoming
// blocks. Contiguous blocks are sent from / received into the arrays directly.
#include <vector>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

class P2pSync final : public Transport {
public:
    bool separate_pack_phases() const override { return true; }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());
        {
            PhaseScope scope(timer, ph.pack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_pack(ctx, p)) pack_peer(ctx, p, src);
            ctx.backend->synchronize();  // MPI reads what the backend packed
        }
        {
            PhaseScope scope(timer, ph.exchange);
            std::vector<MPI_Request> reqs;
            reqs.reserve(2 * n);
            for (int p = 0; p < n; ++p) {
                const PeerBlock& b = plan.peers[p];
                if (p == plan.self || b.recv_count == 0) continue;
                reqs.emplace_back();
                FFTUNE_MPI_CHECK(MPI_Irecv(recv_pointer(ctx, p, dst),
                                           mpi_count(b.recv_count, "recv count"), ctx.element, p,
                                           plan.phase, ctx.comm, &reqs.back()));
            }
            for (int p = 0; p < n; ++p) {
                const PeerBlock& b = plan.peers[p];
                if (p == plan.self || b.send_count == 0) continue;
                reqs.emplace_back();
                FFTUNE_MPI_CHECK(MPI_Isend(send_pointer(ctx, p, src),
                                           mpi_count(b.send_count, "send count"), ctx.element, p,
                                           plan.phase, ctx.comm, &reqs.back()));
            }
            copy_self(ctx, src, dst);
            FFTUNE_MPI_CHECK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                                         MPI_STATUSES_IGNORE));
        }
        {
            PhaseScope scope(timer, ph.unpack);
            for (int p = 0; p < n; ++p)
                if (p != plan.self && must_unpack(ctx, p)) unpack_peer(ctx, p, dst);
            ctx.backend->synchronize();  // the receive buffers are reused next time
        }
    }
};

const bool registered = register_variant<Transport, P2pSync>("p2p_sync");

}  // namespace
}  // namespace fftune
