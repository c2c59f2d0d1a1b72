// Pack plans checked without MPI: P virtual ranks pack, "exchange" by copying
// packed blocks, unpack, and must end with every element at its global index.
#include "core/engine/reshape.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"

namespace fftune {
namespace {

// Unique value per global index, so any misplaced element is detected.
double tag(const std::array<index_t, 3>& g) { return double(g[0]) * 1e6 + double(g[1]) * 1e3 + double(g[2]); }

std::vector<double> fill(const Layout& l) {
    std::vector<double> v(l.box.count());
    for (index_t x = l.box.lo[0]; x < l.box.hi[0]; ++x)
        for (index_t y = l.box.lo[1]; y < l.box.hi[1]; ++y)
            for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z) v[l.offset_of({x, y, z})] = tag({x, y, z});
    return v;
}

// Axis `a` of n split over p ranks (the decompositions' own grid_box), in memory order `order`.
std::vector<Layout> split(const std::array<index_t, 3>& n, int a, int p, AxisOrder order) {
    std::vector<Layout> out;
    for (int i = 0; i < p; ++i) out.push_back({grid_box(n, a, p, i, (a + 1) % 3, 1, 0), order});
    return out;
}

// The reshape, run as `slices` slices along `axis` of every rank's before boxes
// (or after boxes: slice_after), must deliver every element exactly once.
void check_reshape(const std::vector<Layout>& before, const std::vector<Layout>& after, int slices = 1,
                   int axis = axis_x, bool slice_after = false) {
    auto backend = Registry<Backend>::instance().create("fftw");
    const int p = static_cast<int>(before.size());
    std::vector<std::vector<double>> src(p), dst(p), pulled(p), slotted(p);
    for (int r = 0; r < p; ++r) {
        src[r] = fill(before[r]);
        dst[r].assign(after[r].box.count(), -1);
        pulled[r].assign(after[r].box.count(), -1);
        slotted[r].assign(after[r].box.count(), -1);
    }
    index_t moved = 0;
    for (int c = 0; c < slices; ++c) {
        std::vector<Box3> moving;
        for (int r = 0; r < p; ++r) moving.push_back(slice_of((slice_after ? after : before)[r].box, axis, slices, c));
        if (slices == 1) moving.clear();
        std::vector<ReshapePlan> plans;
        for (int r = 0; r < p; ++r)
            plans.push_back(slice_after ? make_reshape_plan(0, r, before, after, sizeof(double), {}, moving)
                                        : make_reshape_plan(0, r, before, after, sizeof(double), moving));
        // Pairwise consistency: what r sends to q is what q receives from r.
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q) ASSERT_EQ(plans[r].peers[q].send_count, plans[q].peers[r].recv_count);
        // The packed buffers hold every block but the self block.
        for (int r = 0; r < p; ++r) {
            index_t sends = 0, recvs = 0;
            for (int q = 0; q < p; ++q) {
                if (q != r) sends += plans[r].peers[q].send_count, recvs += plans[r].peers[q].recv_count;
                moved += plans[r].peers[q].send_count;
            }
            EXPECT_EQ(plans[r].send_total, sends);
            EXPECT_EQ(plans[r].recv_total, recvs);
        }
        std::vector<std::vector<double>> send(p), recv(p);
        for (int r = 0; r < p; ++r) {
            send[r].assign(plans[r].send_total, -1);
            recv[r].assign(plans[r].recv_total, -1);
        }
        auto ctx = [&](int r) {
            ReshapeContext x;
            x.plan = &plans[r];
            x.backend = backend.get();
            x.send_buffer = send[r].data();
            x.recv_buffer = recv[r].data();
            return x;
        };
        // Peers' blocks through the packed buffers, the self block copied directly.
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q)
                if (q != r) pack_peer(ctx(r), q, src[r].data());
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q) {
                if (q == r) continue;
                const auto& b = plans[r].peers[q];
                ASSERT_LE(b.send_displ + b.send_count, plans[r].send_total);
                ASSERT_LE(plans[q].peers[r].recv_displ + b.send_count, plans[q].recv_total);
                std::copy_n(send[r].begin() + b.send_displ, b.send_count, recv[q].begin() + plans[q].peers[r].recv_displ);
            }
        for (int q = 0; q < p; ++q) {
            for (int r = 0; r < p; ++r)
                if (r != q) unpack_peer(ctx(q), r, dst[q].data());
            copy_self(ctx(q), src[q].data(), dst[q].data());
        }
        // Pull (cuda_ipc): each rank unpacks straight from the senders' packed buffers.
        for (int q = 0; q < p; ++q) {
            for (int r = 0; r < p; ++r)
                if (r != q) unpack_block(ctx(q), r, pulled[q].data(), send[r].data() + plans[r].peers[q].send_displ);
            copy_self(ctx(q), src[q].data(), pulled[q].data());
        }
        // Equal slots (nccl_alltoall): block r -> q in slot q of r's buffer, as large as the largest block.
        index_t slot = 0;
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q)
                if (q != r) slot = std::max(slot, plans[0].block(r, q).count());
        std::vector<std::vector<double>> slots(p, std::vector<double>(slot * p, -1));
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q)
                if (q != r) pack_block(ctx(r), q, src[r].data(), slots[r].data() + q * slot);
        for (int q = 0; q < p; ++q) {
            for (int r = 0; r < p; ++r)
                if (r != q) unpack_block(ctx(q), r, slotted[q].data(), slots[r].data() + q * slot);
            copy_self(ctx(q), src[q].data(), slotted[q].data());
        }
    }
    index_t total = 0;
    for (int q = 0; q < p; ++q) total += after[q].box.count();
    EXPECT_EQ(moved, total) << "slices move every element once";
    for (int q = 0; q < p; ++q) {
        EXPECT_EQ(dst[q], fill(after[q])) << "rank " << q << " box " << after[q].box.str();
        EXPECT_EQ(pulled[q], fill(after[q])) << "pulled by rank " << q;
        EXPECT_EQ(slotted[q], fill(after[q])) << "through equal slots, rank " << q;
    }
}

class ReshapeOrders : public ::testing::TestWithParam<AxisOrder> {};

TEST_P(ReshapeOrders, SlabToSlabUnevenWithEmptyRanks) {
    // 5 ranks over an axis of 3 leave two ranks empty before the reshape.
    check_reshape(split({3, 7, 4}, 0, 5, GetParam()), split({3, 7, 4}, 1, 5, GetParam()));
    check_reshape(split({9, 10, 11}, 1, 3, GetParam()), split({9, 10, 11}, 2, 3, GetParam()));
    check_reshape(split({6, 5, 4}, 2, 1, GetParam()), split({6, 5, 4}, 0, 1, GetParam()));
}

INSTANTIATE_TEST_SUITE_P(AllOrders, ReshapeOrders, ::testing::Values(order_xyz, order_zxy, order_yzx),
                         [](const auto& info) { return order_name(info.param); });

TEST_P(ReshapeOrders, SliceBySliceDeliversEverything) {
    // Slices of the before boxes (forward overlap) and of the after boxes
    // (inverse), more slices than some ranks have planes.
    for (int axis = 0; axis < 3; ++axis)
        for (int slices : {2, 3, 5}) {
            check_reshape(split({9, 10, 11}, 1, 3, GetParam()), split({9, 10, 11}, 2, 3, GetParam()), slices, axis);
            check_reshape(split({3, 7, 4}, 0, 5, GetParam()), split({3, 7, 4}, 1, 5, GetParam()), slices, axis, true);
        }
}

TEST(Reshape, MovingBoxesMustLieInTheirRanksBoxes) {
    auto a = split({4, 4, 4}, 0, 2, order_xyz), b = split({4, 4, 4}, 1, 2, order_xyz);
    const std::vector<Box3> outside{a[1].box, a[0].box};
    EXPECT_THROW(make_reshape_plan(0, 0, a, b, 8, outside), std::logic_error);
    EXPECT_THROW(make_reshape_plan(0, 0, a, b, 8, {a[0].box}), std::logic_error);  // one per rank
}

TEST(Reshape, RejectsOrderChangesAndBadRanks) {
    auto a = split({4, 4, 4}, 0, 2, order_xyz), b = split({4, 4, 4}, 1, 2, order_zxy);
    EXPECT_THROW(make_reshape_plan(0, 0, a, b, 8), std::logic_error);
    EXPECT_THROW(make_reshape_plan(0, 2, a, a, 8), std::logic_error);
}

TEST(Reshape, ContiguousBlocksAreSentInPlace) {
    // Splitting x (slowest in xyz) into y: each block to a peer is scattered rows,
    // the reverse reshape receives contiguous x-slabs.
    auto xs = split({4, 6, 8}, 0, 2, order_xyz), ys = split({4, 6, 8}, 1, 2, order_xyz);
    const ReshapePlan fwd = make_reshape_plan(0, 0, xs, ys, 8);
    EXPECT_TRUE(fwd.any_send_scattered());
    EXPECT_FALSE(fwd.any_recv_scattered());
    double data[4 * 6 * 8];
    ReshapeContext c;
    c.plan = &fwd;
    c.send_buffer = nullptr;
    EXPECT_EQ(recv_pointer(c, 1, data), static_cast<void*>(data + fwd.peers[1].recv_dst.offset));
}

TEST(Reshape, TrafficCountsScatteredBlocksSelfCopyAndPeerBytes) {
    // 2 ranks, {4, 6, 8} doubles, x-slabs -> y-slabs in xyz: rank 0 keeps the
    // 2x3x8 self block, sends rank 1 its other 2x3x8 block as scattered rows and
    // receives rank 1's 2x3x8 x-slab contiguously.
    auto xs = split({4, 6, 8}, 0, 2, order_xyz), ys = split({4, 6, 8}, 1, 2, order_xyz);
    const ReshapeTraffic t = traffic(make_reshape_plan(0, 0, xs, ys, 8));
    const std::size_t block = 2 * 3 * 8 * 8;
    EXPECT_EQ(t.sent, block);
    EXPECT_EQ(t.received, block);
    EXPECT_EQ(t.pack, 2 * block);  // read + write
    EXPECT_EQ(t.unpack, 0u);       // lands in place
    EXPECT_EQ(t.self_copy, 2 * block);
    // The way back: the rows are scattered on arrival instead.
    const ReshapeTraffic back = traffic(make_reshape_plan(0, 0, ys, xs, 8));
    EXPECT_EQ(back.pack, 0u);
    EXPECT_EQ(back.unpack, 2 * block);
    // One rank: everything is the self copy.
    auto one = split({4, 6, 8}, 0, 1, order_xyz), one_y = split({4, 6, 8}, 1, 1, order_xyz);
    const ReshapeTraffic alone = traffic(make_reshape_plan(0, 0, one, one_y, 8));
    EXPECT_EQ(alone.sent + alone.received + alone.pack + alone.unpack, 0u);
    EXPECT_EQ(alone.self_copy, 2u * 4 * 6 * 8 * 8);
}

}  // namespace
}  // namespace fftune
