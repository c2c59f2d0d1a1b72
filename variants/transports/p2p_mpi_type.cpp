// Peer2Peer-MPI_Type (thesis 4.5.1): MPI_Irecv/MPI_Isend of subarray datatypes
// straight between the arrays, self block included; no pack or unpack phase.
#include <vector>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "variants/transports/subarray_types.hpp"

namespace fftune {
namespace {

class P2pMpiType final : public Transport {
public:
    bool separate_pack_phases() const override { return false; }
    bool uses_whole_arrays() const override { return true; }
    void setup(const ReshapeContext& ctx) override { types_ = make_subarray_types(ctx); }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        PhaseScope scope(timer, ph.exchange);
        const ReshapePlan& plan = *ctx.plan;
        ctx.backend->synchronize();  // MPI reads the source array
        const void* in = staged_source(ctx, src);
        void* out = staged_destination(ctx, dst);
        const int n = static_cast<int>(plan.peers.size());
        std::vector<MPI_Request> reqs;
        reqs.reserve(2 * n);
        for (int p = 0; p < n; ++p) {
            if (plan.peers[p].recv_count == 0) continue;
            reqs.emplace_back();
            FFTUNE_MPI_CHECK(MPI_Irecv(out, 1, types_.recv[p].get(), p, plan.phase, ctx.comm,
                                       &reqs.back()));
        }
        for (int p = 0; p < n; ++p) {
            if (plan.peers[p].send_count == 0) continue;
            reqs.emplace_back();
            FFTUNE_MPI_CHECK(MPI_Isend(in, 1, types_.send[p].get(), p, plan.phase, ctx.comm,
                                       &reqs.back()));
        }
        FFTUNE_MPI_CHECK(
            MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
        finish_staged_destination(ctx, dst);
    }

private:
    SubarrayTypes types_;
};

const bool registered = register_variant<Transport, P2pMpiType>("p2p_mpi_type");

}  // namespace
}  // namespace fftune
