// Every registered transport moves a reshape's data exactly (MPI test, run at
// 1-4 ranks): x-slabs to y-slabs and back, in every memory order, with uneven
// boxes and ranks that own nothing, through the world and a split communicator;
// on the fftw backend and on a backend whose side queues run late
// (core/testing/queued_backend.hpp), as CUDA streams may.
#include "core/engine/transport.hpp"

#include <gtest/gtest.h>

#include <complex>

#include "core/engine/config.hpp"
#include "core/engine/decomposition.hpp"
#include "core/base/registry.hpp"
#include "core/testing/queued_backend.hpp"

namespace fftune {
namespace {

using Element = std::complex<double>;

Element tag(index_t x, index_t y, index_t z) { return {double(x * 10000 + y * 100 + z), -double(x + 1)}; }

// Axis `a` of n split over p ranks (the decompositions' own grid_box), in memory order `order`.
std::vector<Layout> split(const std::array<index_t, 3>& n, int a, int p, AxisOrder order) {
    std::vector<Layout> out;
    for (int i = 0; i < p; ++i) out.push_back({grid_box(n, a, p, i, (a + 1) % 3, 1, 0), order});
    return out;
}

std::vector<Element> fill(const Layout& l) {
    std::vector<Element> v(l.box.count());
    for (index_t x = l.box.lo[0]; x < l.box.hi[0]; ++x)
        for (index_t y = l.box.lo[1]; y < l.box.hi[1]; ++y)
            for (index_t z = l.box.lo[2]; z < l.box.hi[2]; ++z) v[l.offset_of({x, y, z})] = tag(x, y, z);
    return v;
}

// (transport, backend): "fftw" or "queued".
class Transports : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
protected:
    static std::unique_ptr<Backend> make_backend() {
        if (std::get<1>(GetParam()) == "queued") return std::make_unique<testing::QueuedBackend>();
        return Registry<Backend>::instance().create(std::get<1>(GetParam()));
    }
    static std::string name() { return std::get<0>(GetParam()) + " on " + std::get<1>(GetParam()); }

    // Reshape `before` -> `after` over `comm` with the transport under test, twice
    // (plans are reused across iterations), and check every element.
    void check(MPI_Comm comm, const std::vector<Layout>& before, const std::vector<Layout>& after) {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        auto backend = make_backend();
        auto transport = Registry<Transport>::instance().create(std::get<0>(GetParam()));
        const ReshapePlan plan = make_reshape_plan(0, rank, before, after, sizeof(Element));
        MPI_Datatype element;
        MPI_Type_contiguous(sizeof(Element), MPI_BYTE, &element);
        MPI_Type_commit(&element);
        std::vector<Element> send(plan.send_total), recv(plan.recv_total);
        ReshapeContext ctx{&plan, comm, backend.get(), element, send.data(), recv.data()};
        transport->setup(ctx);
        PhaseTimer timer(*backend);
        ReshapePhases phases;
        if (transport->separate_pack_phases()) phases.pack = timer.phase("pack.0");
        phases.exchange = timer.phase("exchange.0");
        if (transport->separate_pack_phases()) phases.unpack = timer.phase("unpack.0");
        const auto src = fill(before[rank]);
        const auto want = fill(after[rank]);
        for (int iteration = 0; iteration < 2; ++iteration) {
            std::vector<Element> dst(after[rank].box.count(), Element(-1, -1));
            transport->execute(ctx, src.data(), dst.data(), timer, phases);
            EXPECT_EQ(dst, want) << name() << " iteration " << iteration << " rank " << rank << " "
                                 << before[rank].box.str() << " -> " << after[rank].box.str();
        }
        EXPECT_EQ(src, fill(before[rank])) << "the source must be preserved";
        const auto times = timer.collect();
        EXPECT_EQ(times.size(), transport->separate_pack_phases() ? 3u : 1u);
        for (double t : times) EXPECT_GE(t, 0.0);
        MPI_Type_free(&element);
    }
};

TEST_P(Transports, SlabToSlabInEveryOrder) {
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (const auto order : {order_xyz, order_zxy, order_yzx})
        for (const std::array<index_t, 3> n : {std::array<index_t, 3>{9, 10, 11}, {3, 2, 5}, {1, 7, 2}}) {
            SCOPED_TRACE(order_name(order) + " " + size_string(n));
            check(MPI_COMM_WORLD, split(n, 0, p, order), split(n, 1, p, order));
            check(MPI_COMM_WORLD, split(n, 2, p, order), split(n, 0, p, order));
        }
}

TEST_P(Transports, InsideASplitCommunicator) {
    int rank = 0, p = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int q = 0;
    MPI_Comm_size(half, &q);
    check(half, split({5, 4, 6}, 1, q, order_zxy), split({5, 4, 6}, 2, q, order_zxy));
    MPI_Comm_free(&half);
}

INSTANTIATE_TEST_SUITE_P(All, Transports,
                         ::testing::Combine(::testing::Values("p2p_sync", "p2p_streams", "p2p_mpi_type", "a2a_sync",
                                                              "a2a_mpi_type"),
                                            ::testing::Values("fftw", "queued")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// The queued test backend itself: side-queue work lands late, and only a wait
// or when_done tells when.
TEST(QueuedBackend, SideQueueWorkLandsOnlyAfterAWait) {
    testing::QueuedBackend backend(2, std::chrono::milliseconds(20));
    std::vector<double> src(64, 1.0), dst(64, 0.0), third(64, 0.0);
    const StridedRegion all{{1, 1, 64}, {64, 64, 1}, 0};
    backend.copy_region_on(1, dst.data(), all, src.data(), all, sizeof(double));
    EXPECT_EQ(dst[0], 0.0) << "queue 1's copy ran at once";
    std::atomic<bool> flagged{false};
    backend.when_done(1, [&] { flagged = true; });
    backend.queue_wait(2, 1);  // queue 2 after queue 1
    backend.copy_region_on(2, third.data(), all, dst.data(), all, sizeof(double));  // reads what queue 1 wrote
    backend.queue_wait(0, 2);
    EXPECT_TRUE(flagged.load());
    EXPECT_EQ(third, std::vector<double>(64, 1.0));
}

TEST(TransportRegistry, EveryHostTransportIsTested) {
    auto backend = Registry<Backend>::instance().create("fftw");
    std::vector<std::string> host;
    for (const auto& name : Registry<Transport>::instance().names())
        if (!Registry<Transport>::instance().create(name)->not_applicable(*backend, false)) host.push_back(name);
    EXPECT_EQ(host, (std::vector<std::string>{"a2a_mpi_type", "a2a_sync", "p2p_mpi_type", "p2p_streams", "p2p_sync"}));
}

}  // namespace
}  // namespace fftune
