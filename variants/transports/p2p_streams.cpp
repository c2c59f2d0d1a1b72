// Peer2Peer-Streams (thesis 4.5.1) on the CPU: a packing thread packs the
// outgoing blocks one peer after another while this thread starts each peer's
// MPI_Isend as soon as its block is ready, and unpacks each incoming block as
// soon as it arrives (MPI_Testsome). Pack, transfer and unpack overlap, so the
// whole redistribution is timed as one phase, exchange.k.
// Only this thread calls MPI; the packing thread only copies memory.
#include <atomic>
#include <thread>
#include <vector>

#include "core/registry.hpp"
#include "core/transport.hpp"

namespace fftune {
namespace {

class P2pStreams final : public Transport {
public:
    bool separate_pack_phases() const override { return false; }
    bool uses_staging_buffers() const override { return true; }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        PhaseScope scope(timer, ph.exchange);
        const ReshapePlan& plan = *ctx.plan;
        const int n = static_cast<int>(plan.peers.size());

        // Peers in the order the packer handles them: self + 1, self + 2, ...
        std::vector<int> order;
        for (int k = 1; k < n; ++k) order.push_back((plan.self + k) % n);

        std::vector<MPI_Request> recv_reqs;
        std::vector<int> recv_peer;
        for (int p : order) {
            const PeerBlock& b = plan.peers[p];
            if (b.recv_count == 0) continue;
            recv_reqs.emplace_back();
            recv_peer.push_back(p);
            FFTUNE_MPI_CHECK(MPI_Irecv(recv_pointer(ctx, p, dst), mpi_count(b.recv_count, "recv count"),
                                       ctx.element, p, plan.phase, ctx.comm, &recv_reqs.back()));
        }

        std::atomic<int> packed{0};  // number of entries of `order` ready to send
        std::jthread packer([&] {
            for (std::size_t k = 0; k < order.size(); ++k) {
                const int p = order[k];
                if (must_pack(ctx, p)) {
                    pack_peer(ctx, p, src);
                    ctx.backend->synchronize();  // this block is ready before its send starts
                }
                packed.store(static_cast<int>(k + 1), std::memory_order_release);
            }
            copy_self(ctx, src, dst);
        });

        std::vector<MPI_Request> send_reqs;
        std::size_t sent = 0;
        int open_recvs = static_cast<int>(recv_reqs.size());
        std::vector<int> done(recv_reqs.size());
        while (sent < order.size() || open_recvs > 0) {
            const auto ready = static_cast<std::size_t>(packed.load(std::memory_order_acquire));
            for (; sent < ready; ++sent) {
                const int p = order[sent];
                const PeerBlock& b = plan.peers[p];
                if (b.send_count == 0) continue;
                send_reqs.emplace_back();
                FFTUNE_MPI_CHECK(MPI_Isend(send_pointer(ctx, p, src),
                                           mpi_count(b.send_count, "send count"), ctx.element, p,
                                           plan.phase, ctx.comm, &send_reqs.back()));
            }
            if (open_recvs > 0) {
                int outcount = 0;
                FFTUNE_MPI_CHECK(MPI_Testsome(static_cast<int>(recv_reqs.size()), recv_reqs.data(),
                                              &outcount, done.data(), MPI_STATUSES_IGNORE));
                if (outcount == MPI_UNDEFINED) outcount = 0;
                for (int i = 0; i < outcount; ++i) {
                    const int p = recv_peer[done[i]];
                    if (must_unpack(ctx, p)) unpack_peer(ctx, p, dst);
                }
                open_recvs -= outcount;
                if (outcount == 0 && sent == ready) std::this_thread::yield();
            } else if (sent == ready) {
                std::this_thread::yield();
            }
        }
        packer.join();
        FFTUNE_MPI_CHECK(MPI_Waitall(static_cast<int>(send_reqs.size()), send_reqs.data(),
                                     MPI_STATUSES_IGNORE));
        ctx.backend->synchronize();  // unpacks done before the buffers are reused
    }
};

const bool registered = register_variant<Transport, P2pStreams>("p2p_streams");

}  // namespace
}  // namespace fftune
