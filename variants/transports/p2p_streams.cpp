// Peer2Peer-Streams (thesis 4.5.1): each peer's block is packed on a queue of
// its own (CUDA streams, round robin), and the backend reports it packed
// (cudaLaunchHostFunc; at once on host backends) by setting a flag that this
// thread, the only one calling MPI, polls: it starts that peer's MPI_Isend as
// soon as the flag is up, in whatever order the packs finish, and unpacks each
// incoming block on a queue as soon as it arrives (MPI_Testsome). A packing
// thread submits the packs, so on host backends, whose copies run at once,
// packing overlaps the transfers too. Pack, transfer and unpack overlap, so the
// whole redistribution is timed as one phase, exchange.k.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"

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
        Backend& backend = *ctx.backend;
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

        fork_queues(backend);  // packs read the source the main queue produced
        // ready[k]: order[k]'s block is packed (set by the backend's callback).
        const auto ready = std::make_unique<std::atomic<bool>[]>(order.size());
        std::jthread packer([&] {
            for (std::size_t k = 0; k < order.size(); ++k) {
                const int p = order[k];
                std::atomic<bool>* flag = &ready[k];
                auto raise = [flag] { flag->store(true, std::memory_order_release); };
                if (plan.peers[p].send_count == 0) {
                    raise();
                } else if (must_pack(ctx, p)) {
                    const int q = side_queue(backend, k);
                    pack_peer(ctx, p, src, q);
                    backend.when_done(q, raise);
                } else {
                    backend.when_done(0, raise);  // MPI reads the source itself: once the main queue wrote it
                }
            }
            copy_self(ctx, src, dst, side_queue(backend, order.size()));
        });

        std::vector<MPI_Request> send_reqs;
        std::vector<bool> sent(order.size(), false);
        std::size_t sent_count = 0;
        std::size_t unpacks = 0;
        int open_recvs = static_cast<int>(recv_reqs.size());
        std::vector<int> done(recv_reqs.size());
        while (sent_count < order.size() || open_recvs > 0) {
            bool progress = false;
            for (std::size_t k = 0; k < order.size(); ++k) {
                if (sent[k] || !ready[k].load(std::memory_order_acquire)) continue;
                sent[k] = true;
                ++sent_count;
                progress = true;
                const int p = order[k];
                const PeerBlock& b = plan.peers[p];
                if (b.send_count == 0) continue;
                send_reqs.emplace_back();
                FFTUNE_MPI_CHECK(MPI_Isend(send_pointer(ctx, p, src), mpi_count(b.send_count, "send count"),
                                           ctx.element, p, plan.phase, ctx.comm, &send_reqs.back()));
            }
            if (open_recvs > 0) {
                int outcount = 0;
                FFTUNE_MPI_CHECK(MPI_Testsome(static_cast<int>(recv_reqs.size()), recv_reqs.data(), &outcount,
                                              done.data(), MPI_STATUSES_IGNORE));
                if (outcount == MPI_UNDEFINED) outcount = 0;
                for (int i = 0; i < outcount; ++i) {
                    const int p = recv_peer[done[i]];
                    if (must_unpack(ctx, p)) unpack_peer(ctx, p, dst, side_queue(backend, unpacks++));
                }
                open_recvs -= outcount;
                progress = progress || outcount > 0;
            }
            if (!progress) std::this_thread::yield();
        }
        packer.join();
        FFTUNE_MPI_CHECK(MPI_Waitall(static_cast<int>(send_reqs.size()), send_reqs.data(), MPI_STATUSES_IGNORE));
        join_queues(backend);
        backend.synchronize();  // unpacks (and the callbacks) done before the buffers are reused
    }
};

const bool registered = register_variant<Transport, P2pStreams>("p2p_streams");

}  // namespace
}  // namespace fftune
