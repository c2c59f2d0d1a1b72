#include "core/engine/redistribution.hpp"

#include "core/base/registry.hpp"

namespace fftune {

Redistribution::Redistribution(MPI_Comm comm, Backend& backend, const std::string& transport, int phase,
                               const std::vector<Layout>& before, const std::vector<Layout>& after,
                               std::size_t elem_bytes, PhaseTimer& timer, const std::vector<Box3>& moving_before,
                               const std::vector<Box3>& moving_after)
    : comm_(comm), timer_(timer) {
    int rank = 0;
    FFTUNE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    all_or_none(comm, [&] {
        transport_ = Registry<Transport>::instance().create(transport);
        plan_ = make_reshape_plan(phase, rank, before, after, elem_bytes, moving_before, moving_after);
        MPI_Datatype element = MPI_DATATYPE_NULL;
        FFTUNE_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &element));
        FFTUNE_MPI_CHECK(MPI_Type_commit(&element));
        element_ = Datatype(element);
        ctx_.plan = &plan_;
        ctx_.comm = comm;
        ctx_.backend = &backend;
        ctx_.element = element_.get();
        if (transport_->uses_staging_buffers()) {
            send_ = Buffer(backend, transport_->send_buffer_elems(plan_) * elem_bytes);
            if (transport_->uses_recv_buffer()) recv_ = Buffer(backend, transport_->recv_buffer_elems(plan_) * elem_bytes);
        }
        ctx_.send_buffer = send_.data();
        ctx_.recv_buffer = recv_.data();
        // MPI that cannot read device memory: pinned host staging (one element at
        // least, so that a rank with nothing to send is still marked staged).
        if (backend.device_memory() && transport_->uses_mpi()) {
            auto host = [&](index_t n) { return Buffer(backend, std::max<index_t>(n, 1) * elem_bytes, /*host=*/true); };
            if (transport_->uses_whole_arrays()) {
                host_src_ = host(plan_.before.box.count());
                host_dst_ = host(plan_.after.box.count());
                ctx_.host_src_mirror = host_src_.data();
                ctx_.host_dst_mirror = host_dst_.data();
            } else {
                host_send_ = host(plan_.send_total);
                host_recv_ = host(plan_.recv_total);
                ctx_.host_send = host_send_.data();
                ctx_.host_recv = host_recv_.data();
            }
        }
        const std::string n = std::to_string(phase);
        if (transport_->separate_pack_phases()) phases_.pack = timer.phase("pack." + n);
        phases_.exchange = timer.phase("exchange." + n);
        if (transport_->separate_pack_phases()) phases_.unpack = timer.phase("unpack." + n);
    });
    try {
        all_or_none(comm, [&] { transport_->setup(ctx_); });
    } catch (...) {
        // Every rank is here (agreed): let go of mapped peer buffers before any is freed.
        const bool mapped = transport_->maps_peer_memory();
        transport_.reset();
        if (mapped) MPI_Barrier(comm_);
        throw;
    }
}

Redistribution::~Redistribution() {
    // A transport that maps its peers' buffers lets go of them before any rank frees its own.
    const bool mapped = transport_ && transport_->maps_peer_memory();
    transport_.reset();
    if (mapped) MPI_Barrier(comm_);
}

std::optional<std::string> Redistribution::not_applicable(const std::string& transport, const Backend& backend) {
    const auto t = Registry<Transport>::instance().create(transport);
    if (auto why = t->not_applicable(backend, /*gpu_aware=*/false)) return why;
    return t->not_runnable_here(backend);
}

void Redistribution::execute(const void* src, void* dst) { transport_->execute(ctx_, src, dst, timer_, phases_); }

std::vector<std::pair<int, PhaseTraffic>> Redistribution::traffic() const {
    const auto t = phase_traffic(plan_, *transport_, phases_);
    std::vector<std::pair<int, PhaseTraffic>> out{{phases_.exchange, t.exchange}};
    if (phases_.pack >= 0) out.push_back({phases_.pack, t.pack});
    if (phases_.unpack >= 0) out.push_back({phases_.unpack, t.unpack});
    return out;
}

std::size_t Redistribution::host_bytes() const {
    return host_send_.bytes() + host_recv_.bytes() + host_src_.bytes() + host_dst_.bytes();
}

}  // namespace fftune
