// All2All-MPI_Type (thesis 4.5.2): one MPI_Alltoallw with a subarray datatype
// per peer on each side; no pack or unpack phase.
#include <vector>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "variants/transports/subarray_types.hpp"

namespace fftune {
namespace {

class A2aMpiType final : public Transport {
public:
    bool separate_pack_phases() const override { return false; }
    bool uses_whole_arrays() const override { return true; }

    void setup(const ReshapeContext& ctx) override {
        types_ = make_subarray_types(ctx);
        const std::size_t n = ctx.plan->peers.size();
        scounts_.assign(n, 0), rcounts_.assign(n, 0), displs_.assign(n, 0);
        stypes_.assign(n, ctx.element), rtypes_.assign(n, ctx.element);
        for (std::size_t p = 0; p < n; ++p) {
            if (types_.send[p].get() != MPI_DATATYPE_NULL) scounts_[p] = 1, stypes_[p] = types_.send[p].get();
            if (types_.recv[p].get() != MPI_DATATYPE_NULL) rcounts_[p] = 1, rtypes_[p] = types_.recv[p].get();
        }
    }

    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& ph) override {
        PhaseScope scope(timer, ph.exchange);
        ctx.backend->synchronize();  // MPI reads the source array
        const void* in = staged_source(ctx, src);
        void* out = staged_destination(ctx, dst);
        FFTUNE_MPI_CHECK(MPI_Alltoallw(in, scounts_.data(), displs_.data(), stypes_.data(), out,
                                       rcounts_.data(), displs_.data(), rtypes_.data(), ctx.comm));
        finish_staged_destination(ctx, dst);
    }

private:
    SubarrayTypes types_;
    std::vector<int> scounts_, rcounts_, displs_;  // subarray types carry the offsets: displs 0
    std::vector<MPI_Datatype> stypes_, rtypes_;
};

const bool registered = register_variant<Transport, A2aMpiType>("a2a_mpi_type");

}  // namespace
}  // namespace fftune
