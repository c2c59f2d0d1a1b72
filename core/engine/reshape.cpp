#include "core/engine/reshape.hpp"

#include <stdexcept>

namespace fftune {

bool ReshapePlan::any_send_scattered() const {
    for (std::size_t p = 0; p < peers.size(); ++p)
        if (static_cast<int>(p) != self && peers[p].send_count > 0 && !peers[p].send_src.contiguous())
            return true;
    return false;
}

bool ReshapePlan::any_recv_scattered() const {
    for (std::size_t p = 0; p < peers.size(); ++p)
        if (static_cast<int>(p) != self && peers[p].recv_count > 0 && !peers[p].recv_dst.contiguous())
            return true;
    return false;
}

ReshapeTraffic traffic(const ReshapePlan& plan) {
    ReshapeTraffic t;
    const std::size_t e = plan.elem_bytes;
    for (std::size_t p = 0; p < plan.peers.size(); ++p) {
        const PeerBlock& b = plan.peers[p];
        const auto out = static_cast<std::size_t>(b.send_count) * e, in = static_cast<std::size_t>(b.recv_count) * e;
        if (static_cast<int>(p) == plan.self) {
            if (!plan.self_in_place) t.self_copy += 2 * out;
            continue;
        }
        t.sent += out;
        t.received += in;
        if (b.send_count > 0 && !b.send_src.contiguous()) t.pack += 2 * out;
        if (b.recv_count > 0 && !b.recv_dst.contiguous()) t.unpack += 2 * in;
    }
    return t;
}

Box3 ReshapePlan::block(int from, int to) const {
    return intersect(moving_before[static_cast<std::size_t>(from)], moving_after[static_cast<std::size_t>(to)]);
}

namespace {
std::vector<Box3> moving_or_whole(const std::vector<Box3>& moving, const std::vector<Layout>& layouts) {
    if (moving.empty()) {
        std::vector<Box3> whole;
        for (const auto& l : layouts) whole.push_back(l.box);
        return whole;
    }
    if (moving.size() != layouts.size()) throw std::logic_error("make_reshape_plan: one moving box per rank");
    for (std::size_t r = 0; r < moving.size(); ++r)
        if (!moving[r].empty() && !(intersect(moving[r], layouts[r].box) == moving[r]))
            throw std::logic_error("make_reshape_plan: a moving box leaves its rank's box");
    return moving;
}
}  // namespace

ReshapePlan make_reshape_plan(int phase, int self, const std::vector<Layout>& all_before,
                              const std::vector<Layout>& all_after, std::size_t elem_bytes,
                              const std::vector<Box3>& moving_before, const std::vector<Box3>& moving_after) {
    if (all_before.size() != all_after.size() || self < 0 ||
        self >= static_cast<int>(all_before.size()))
        throw std::logic_error("make_reshape_plan: inconsistent rank lists");
    ReshapePlan plan;
    plan.phase = phase;
    plan.self = self;
    plan.before = all_before[self];
    plan.after = all_after[self];
    plan.all_before = all_before;
    plan.all_after = all_after;
    plan.moving_before = moving_or_whole(moving_before, all_before);
    plan.moving_after = moving_or_whole(moving_after, all_after);
    plan.elem_bytes = elem_bytes;
    if (plan.before.order != plan.after.order)
        throw std::logic_error("reshape keeps the memory order; FFT stages change it");
    const int n = static_cast<int>(all_before.size());
    plan.peers.resize(n);
    for (int p = 0; p < n; ++p) {
        PeerBlock& b = plan.peers[p];
        const Box3 out_box = plan.block(self, p);
        const Box3 in_box = plan.block(p, self);
        b.send_count = out_box.count();
        b.recv_count = in_box.count();
        b.send_src = region_of(plan.before, out_box);
        b.recv_dst = region_of(plan.after, in_box);
        // The self block never enters the packed buffers (copy_self moves it),
        // so they hold (P-1)/P of the data, and nothing at P = 1.
        if (p == self) continue;
        b.send_displ = plan.send_total;
        b.recv_displ = plan.recv_total;
        plan.send_total += b.send_count;
        plan.recv_total += b.recv_count;
    }
    return plan;
}

namespace {
StridedRegion packed(const ReshapePlan& plan, const Box3& box, index_t displ) {
    return packed_region(plan.before, box, displ);
}
Box3 send_box(const ReshapePlan& plan, int peer) { return plan.block(plan.self, peer); }
Box3 recv_box(const ReshapePlan& plan, int peer) { return plan.block(peer, plan.self); }
}  // namespace

void pack_peer(const ReshapeContext& ctx, int peer, const void* src, int queue) {
    const ReshapePlan& plan = *ctx.plan;
    const PeerBlock& b = plan.peers[peer];
    if (b.send_count == 0) return;
    void* target = ctx.host_send ? ctx.host_send : ctx.send_buffer;
    ctx.backend->copy_region_on(queue, target, packed(plan, send_box(plan, peer), b.send_displ), src,
                                b.send_src, plan.elem_bytes);
}

void pack_block(const ReshapeContext& ctx, int peer, const void* src, void* block, int queue) {
    const ReshapePlan& plan = *ctx.plan;
    const PeerBlock& b = plan.peers[peer];
    if (b.send_count == 0) return;
    ctx.backend->copy_region_on(queue, block, packed(plan, send_box(plan, peer), 0), src, b.send_src, plan.elem_bytes);
}

void unpack_peer(const ReshapeContext& ctx, int peer, void* dst, int queue) {
    const ReshapePlan& plan = *ctx.plan;
    const PeerBlock& b = plan.peers[peer];
    if (b.recv_count == 0) return;
    const char* source = static_cast<const char*>(ctx.host_recv ? ctx.host_recv : ctx.recv_buffer);
    ctx.backend->copy_region_on(queue, dst, b.recv_dst, source + b.recv_displ * plan.elem_bytes,
                                packed(plan, recv_box(plan, peer), 0), plan.elem_bytes);
}

void unpack_block(const ReshapeContext& ctx, int peer, void* dst, const void* block, int queue) {
    const ReshapePlan& plan = *ctx.plan;
    const PeerBlock& b = plan.peers[peer];
    if (b.recv_count == 0) return;
    ctx.backend->peer_copy_region_on(queue, dst, b.recv_dst, block, packed(plan, recv_box(plan, peer), 0), plan.elem_bytes);
}

void pull_block(const ReshapeContext& ctx, int peer, void* dst, const void* peer_source, const StridedRegion& region,
                int queue) {
    const PeerBlock& b = ctx.plan->peers[peer];
    if (b.recv_count == 0) return;
    ctx.backend->peer_copy_region_on(queue, dst, b.recv_dst, peer_source, region, ctx.plan->elem_bytes);
}

void copy_self(const ReshapeContext& ctx, const void* src, void* dst, int queue) {
    const ReshapePlan& plan = *ctx.plan;
    const PeerBlock& b = plan.peers[plan.self];
    if (b.send_count == 0 || plan.self_in_place) return;
    ctx.backend->copy_region_on(queue, dst, b.recv_dst, src, b.send_src, plan.elem_bytes);
}

void fork_queues(Backend& backend) {
    for (int q = 1; q < backend.queue_count(); ++q) backend.queue_wait(q, 0);
}

void join_queues(Backend& backend) {
    for (int q = 1; q < backend.queue_count(); ++q) backend.queue_wait(0, q);
}

int side_queue(const Backend& backend, std::size_t k) {
    const int n = backend.queue_count();
    return n > 1 ? 1 + static_cast<int>(k % static_cast<std::size_t>(n - 1)) : 0;
}

bool must_pack(const ReshapeContext& ctx, int peer) {
    return ctx.host_send != nullptr || !ctx.plan->peers[peer].send_src.contiguous();
}
bool must_unpack(const ReshapeContext& ctx, int peer) {
    return ctx.host_recv != nullptr || !ctx.plan->peers[peer].recv_dst.contiguous();
}

const void* send_pointer(const ReshapeContext& ctx, int peer, const void* src) {
    const PeerBlock& b = ctx.plan->peers[peer];
    const std::size_t e = ctx.plan->elem_bytes;
    if (ctx.host_send) return static_cast<const char*>(ctx.host_send) + b.send_displ * e;
    if (b.send_src.contiguous()) return static_cast<const char*>(src) + b.send_src.offset * e;
    return static_cast<const char*>(ctx.send_buffer) + b.send_displ * e;
}

void* recv_pointer(const ReshapeContext& ctx, int peer, void* dst) {
    const PeerBlock& b = ctx.plan->peers[peer];
    const std::size_t e = ctx.plan->elem_bytes;
    if (ctx.host_recv) return static_cast<char*>(ctx.host_recv) + b.recv_displ * e;
    if (b.recv_dst.contiguous()) return static_cast<char*>(dst) + b.recv_dst.offset * e;
    return static_cast<char*>(ctx.recv_buffer) + b.recv_displ * e;
}

const void* staged_source(const ReshapeContext& ctx, const void* src) {
    if (!ctx.host_src_mirror) return src;
    ctx.backend->copy_to_host(ctx.host_src_mirror, src, ctx.plan->before.box.count() * ctx.plan->elem_bytes);
    return ctx.host_src_mirror;
}

void* staged_destination(const ReshapeContext& ctx, void* dst) {
    if (!ctx.host_dst_mirror) return dst;
    // The mirror goes back whole (finish_staged_destination): where the
    // receives do not cover the destination box (moving boxes that leave part
    // of it, a halo), it first takes what dst holds, which then comes back unchanged.
    index_t received = 0;
    for (const PeerBlock& b : ctx.plan->peers) received += b.recv_count;
    if (received < ctx.plan->after.box.count())
        ctx.backend->copy_to_host(ctx.host_dst_mirror, dst, ctx.plan->after.box.count() * ctx.plan->elem_bytes);
    return ctx.host_dst_mirror;
}

void finish_staged_destination(const ReshapeContext& ctx, void* dst) {
    if (!ctx.host_dst_mirror) return;
    ctx.backend->copy_from_host(dst, ctx.host_dst_mirror, ctx.plan->after.box.count() * ctx.plan->elem_bytes);
}

}  // namespace fftune
