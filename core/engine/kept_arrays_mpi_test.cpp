// KeptArrays (MPI test, 1-4 ranks): inside a job, a plan leaves its arrays
// and its mappings of the peers' ones for the next plan. One of the same
// sizes takes them as they are and still validates; one of other sizes lets
// them go, and no rank frees an array before every rank closed its mappings.
// Registered again on the GPU (FFTUNE_TEST_BACKEND=cuda): cuda_ipc_push's
// real mappings across plans.
#include "core/engine/kept_arrays.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/base/registry.hpp"
#include "core/engine/plan.hpp"
#include "core/engine/transport.hpp"
#include "core/engine/validation.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/forwarding_transport.hpp"
#include "core/testing/teardown_order.hpp"
#include "core/testing/world.hpp"

namespace fftune {
namespace {

using testing::world_rank;
using testing::world_size;
using Clock = std::chrono::steady_clock;

std::vector<Clock::time_point> freed, closed;

class NotingFrees final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_kept_noting_frees"; }
    void deallocate(void* p) override {
        freed.push_back(Clock::now());
        ForwardingBackend::deallocate(p);
    }
};

// Maps "peers' arrays" as cuda_ipc does: one mapping per setup, closed when
// the last holder lets go (rank 1 takes a while to close).
class MapsPeersUntilLetGo final : public testing::ForwardingTransport {
public:
    bool maps_peer_memory() const override { return true; }
    void setup(const ReshapeContext& ctx) override {
        ForwardingTransport::setup(ctx);
        mapping_ = std::shared_ptr<const int>(new int(0), [](const int* p) {
            if (world_rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
            closed.push_back(Clock::now());
            delete p;
        });
    }
    std::vector<std::shared_ptr<const void>> peer_mappings() const override { return {mapping_}; }
    std::optional<std::string> not_applicable(const Backend& backend, bool) const override {
        if (backend.name() != "test_kept_noting_frees") return std::string("kept-arrays test only");
        return std::nullopt;
    }

private:
    std::shared_ptr<const int> mapping_;
};

const bool registered_backend = register_variant<Backend, NotingFrees>("test_kept_noting_frees");
const bool registered_transport = register_variant<Transport, MapsPeersUntilLetGo>("test_maps_peers_kept");

void expect_closed_before_freed() { testing::expect_closed_before_freed(closed, freed); }

using Size = std::array<index_t, 3>;

Problem problem_of(Size n) { return {"fft3d", n, Precision::double_, Direction::forward, world_size()}; }

TEST(KeptArrays, TheNextPlanOfTheSameSizesTakesThemOtherSizesLetThemGoAfterEveryRankUnmapped) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    const Config config{"test_kept_noting_frees", "slab_2d1d", LayoutVariant::default_, {p, 1},
                        {"test_maps_peers_kept"}, false};
    KeptArrays& kept = KeptArrays::instance();
    freed.clear(), closed.clear();
    {
        KeptArrays::Job job(MPI_COMM_WORLD);
        std::size_t first_bytes = 0;
        {
            Plan a(MPI_COMM_WORLD, problem_of({12, 10, 9}), config, InverseInput::preserve, ArrayLifetime::kept);
            EXPECT_EQ(a.kept_before_bytes(), 0u);
            EXPECT_EQ(a.kept_reused_bytes(), 0u);
            first_bytes = a.workspace_bytes();
        }
        EXPECT_TRUE(freed.empty()) << "the first plan's arrays are kept";
        EXPECT_TRUE(closed.empty()) << "and so are its mappings";
        EXPECT_EQ(kept.kept_bytes(), first_bytes);
        const std::size_t per_plan = kept.mappings_held();  // one per reshape, of either direction
        EXPECT_EQ(per_plan, 2u);
        {
            Plan b(MPI_COMM_WORLD, problem_of({12, 10, 9}), config, InverseInput::preserve, ArrayLifetime::kept);
            EXPECT_EQ(b.kept_before_bytes(), first_bytes);
            EXPECT_EQ(b.kept_reused_bytes(), b.workspace_bytes());
            EXPECT_TRUE(validate(b).passed()) << "a plan on the last plan's arrays";
            freed.clear();  // validation's own input and output
        }
        EXPECT_TRUE(freed.empty()) << "the same arrays went back";
        EXPECT_TRUE(closed.empty());
        EXPECT_EQ(kept.mappings_held(), 2 * per_plan);
        {
            Plan c(MPI_COMM_WORLD, problem_of({16, 12, 10}), config, InverseInput::preserve, ArrayLifetime::kept);
            EXPECT_EQ(c.kept_before_bytes(), first_bytes);
            EXPECT_EQ(c.kept_reused_bytes(), 0u);
            EXPECT_EQ(closed.size(), 2 * per_plan) << "both plans' mappings closed before the arrays were let go";
            expect_closed_before_freed();
            EXPECT_TRUE(validate(c).passed());
        }
        freed.clear(), closed.clear();
    }
    // The job's end lets go of the last plan's arrays the same way.
    expect_closed_before_freed();
    EXPECT_EQ(kept.kept_bytes(), 0u);
    EXPECT_EQ(kept.mappings_held(), 0u);

    // Outside a job a plan keeps nothing.
    freed.clear(), closed.clear();
    { Plan d(MPI_COMM_WORLD, problem_of({12, 10, 9}), config, InverseInput::preserve, ArrayLifetime::kept); }
    EXPECT_EQ(kept.kept_bytes(), 0u);
    expect_closed_before_freed();
}

// A kept array still lent, or kept by other ranks, is refused on every rank.
TEST(KeptArrays, OnePlanAtATimeAndOnTheSameRanks) {
    const int p = world_size();
    const Config config{"test_kept_noting_frees", "slab_2d1d", LayoutVariant::default_, {p, 1},
                        {"test_maps_peers_kept"}, false};
    if (p < 2) GTEST_SKIP() << "needs peers";
    KeptArrays::Job job(MPI_COMM_WORLD);
    Plan a(MPI_COMM_WORLD, problem_of({8, 6, 5}), config, InverseInput::preserve, ArrayLifetime::kept);
    try {
        Plan b(MPI_COMM_WORLD, problem_of({8, 6, 5}), config, InverseInput::preserve, ArrayLifetime::kept);
        ADD_FAILURE() << "a second plan took arrays the first one holds";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("still lent to a live plan"), std::string::npos) << e.what();
    }
}

// The engine's own transports on the backend under test: a job's plans of
// one size in turn, then of another, and back; each validates on arrays
// (and, for cuda_ipc_push, mappings) the plan before it left.
std::string backend_name() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return env ? env : "fftw";
}

TEST(KeptArrays, PlansInTurnOnKeptArraysValidate) {
    const int p = world_size();
    const std::string backend = backend_name();
    std::vector<std::string> methods;
    for (const char* m : {"cuda_ipc_push", "nccl_a2a", "a2a_sync", "p2p_sync"})
        if (Registry<Transport>::instance().contains(m) &&
            !Registry<Transport>::instance().create(m)->not_applicable(*Registry<Backend>::instance().create(backend), false))
            methods.push_back(m);
    ASSERT_FALSE(methods.empty());
    KeptArrays::Job job(MPI_COMM_WORLD);
    int reused = 0, checked = 0;
    for (const std::string& m : methods)
        for (int overlap : {1, 2})
            for (Size n : {Size{24, 20, 18}, Size{24, 20, 18}, Size{32, 16, 12}, Size{24, 20, 18}}) {
                Config config{backend, "slab_2d1d", LayoutVariant::default_, {p, 1}, {m}, false};
                config.overlap = overlap;
                if (check_applicable(problem_of(n), config)) continue;
                SCOPED_TRACE(config.key());
                std::unique_ptr<Plan> plan;
                try {
                    plan = std::make_unique<Plan>(MPI_COMM_WORLD, problem_of(n), config, InverseInput::preserve,
                                                  ArrayLifetime::kept);
                } catch (const Unsupported& e) {  // NCCL with ranks sharing a GPU
                    continue;
                }
                reused += plan->kept_reused_bytes() > 0;
                ++checked;
                EXPECT_TRUE(validate(*plan).passed());
            }
    EXPECT_GT(checked, 0);
    if (p > 1) EXPECT_GT(reused, 0) << "plans of one size in a row share their arrays";
}

}  // namespace
}  // namespace fftune
