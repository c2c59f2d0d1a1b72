// All2All-Sync (thesis 4.5.2): pack, one MPI_Alltoallv over the phase
// communicator (per-peer counts, so uneven boxes work), unpack. When every
// block of a side is contiguous in its array, that side skips its copy and
// the collective reads/writes the array directly. The self block never goes
// through MPI: copy_self moves it inside the backend (on a GPU with host
// staging it would otherwise cross to the host and back).
#include <vector>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

class A2aSync final : public Transport {
public:
    bool separate_pack_phases() const override { return true; }

    void setup(const ReshapeContext& ctx) override {
        const ReshapePlan& plan = *ctx.plan;
        direct_send_ = direct_recv_ = !ctx.host_staged();
        for (const PeerBlock& b : plan.peers) {
            direct_send_ = direct_send_ && (b.send_count == 0 || b.send_src.contiguous());
            direct_recv_ = direct_recv_ && (b.recv_count == 0 || b.recv_dst.contiguous());
        }
        const std::size_t n = plan.peers.size();
        scounts_.resize(n), sdispls_.resize(n), rcounts_.resize(n), rdispls_.resize(n);
        for (std::size_t p = 0; p < n; ++p) {
            const PeerBlock& b = plan.peers[p];
            const bool self = static_cast<int>(p) == plan.self;
            scounts_[p] = self ? 0 : mpi_count(b.send_count, "send count");
            rcounts_[p] = self ? 0 : mpi_count(b.recv_count, "recv count");
            sdispls_[p] = mpi_count(direct_send_ ? b.send_src.offset : b.send_displ, "send displacement");
            rdispls_[p] = mpi_count(direct_recv_ ? b.recv_dst.offset : b.recv_displ, "recv displacement");
        }
    }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        const int n = static_cast<int>(ctx.plan->peers.size());
        {
            PhaseScope scope(timer, ph.pack);
            if (!direct_send_)
                for (int p = 0; p < n; ++p)
                    if (p != ctx.plan->self) pack_peer(ctx, p, src);
            ctx.backend->synchronize();  // MPI reads what the backend packed
        }
        {
            PhaseScope scope(timer, ph.exchange);
            const void* sbuf = direct_send_ ? src : (ctx.host_send ? ctx.host_send : ctx.send_buffer);
            void* rbuf = direct_recv_ ? dst : (ctx.host_recv ? ctx.host_recv : ctx.recv_buffer);
            FFTUNE_MPI_CHECK(MPI_Alltoallv(sbuf, scounts_.data(),
                                           sdispls_.data(), ctx.element,
                                           rbuf, rcounts_.data(),
                                           rdispls_.data(), ctx.element, ctx.comm));
            copy_self(ctx, src, dst);
        }
        {
            PhaseScope scope(timer, ph.unpack);
            if (!direct_recv_)
                for (int p = 0; p < n; ++p)
                    if (p != ctx.plan->self) unpack_peer(ctx, p, dst);
            ctx.backend->synchronize();  // the receive buffer is reused next time
        }
    }

private:
    bool direct_send_ = false, direct_recv_ = false;
    std::vector<int> scounts_, sdispls_, rcounts_, rdispls_;
};

const bool registered = register_variant<Transport, A2aSync>("a2a_sync");

}  // namespace
}  // namespace fftune
