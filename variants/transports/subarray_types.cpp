#include "variants/transports/subarray_types.hpp"

namespace fftune {
namespace {

// Block `sub` of `layout` as MPI_Type_create_subarray (dimensions in memory order).
Datatype subarray(const Layout& layout, const Box3& sub, MPI_Datatype element) {
    int sizes[3], subsizes[3], starts[3];
    for (int k = 0; k < 3; ++k) {
        const int a = layout.order[k];
        sizes[k] = mpi_count(layout.box.extent(a), "array extent");
        subsizes[k] = mpi_count(sub.extent(a), "block extent");
        starts[k] = mpi_count(sub.lo[a] - layout.box.lo[a], "block start");
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    FFTUNE_MPI_CHECK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, element, &t));
    FFTUNE_MPI_CHECK(MPI_Type_commit(&t));
    return Datatype(t);
}

}  // namespace

SubarrayTypes make_subarray_types(const ReshapeContext& ctx) {
    const ReshapePlan& plan = *ctx.plan;
    SubarrayTypes types;
    const std::size_t n = plan.peers.size();
    types.send.resize(n);
    types.recv.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
        const Box3 out = plan.block(plan.self, static_cast<int>(p));
        const Box3 in = plan.block(static_cast<int>(p), plan.self);
        if (!out.empty()) types.send[p] = subarray(plan.before, out, ctx.element);
        if (!in.empty()) types.recv[p] = subarray(plan.after, in, ctx.element);
    }
    return types;
}

}  // namespace fftune
