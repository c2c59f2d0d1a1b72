// The engine end to end (MPI test, 1-4 ranks): every decomposition x layout x
// method combination x process grid x precision, on sizes that do not divide
// by the rank counts (some ranks own empty boxes), validated by the spectral
// Laplacian, the round trip, the spectrum spot check and the whole-world oracle.
#include "core/engine/plan.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <thread>

#include "core/engine/decomposition.hpp"
#include "core/engine/fft_descriptor.hpp"
#include "core/base/registry.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/forwarding_transport.hpp"
#include "core/testing/metered_backend.hpp"
#include "core/testing/queued_backend.hpp"
#include "core/testing/teardown_order.hpp"
#include "core/testing/world.hpp"
#include "core/run/testcase.hpp"
#include "core/engine/transport.hpp"
#include "core/engine/validation.hpp"

namespace fftune {
namespace {

using testing::world_rank;
using testing::world_size;

// The backend under test: FFTUNE_TEST_BACKEND (default fftw); CMake registers
// this binary once per backend built.
std::string backend_name() {
    const char* env = std::getenv("FFTUNE_TEST_BACKEND");
    return env ? env : "fftw";
}

// Every registered method that applies to the backend (host-staged or not),
// or those of them FFTUNE_TEST_METHODS lists (space-separated: to narrow a
// failure down by hand).
std::vector<std::string> methods() {
    const auto backend = Registry<Backend>::instance().create(backend_name());
    const char* only = std::getenv("FFTUNE_TEST_METHODS");
    std::vector<std::string> out;
    for (const auto& name : Registry<Transport>::instance().names())
        if (!Registry<Transport>::instance().create(name)->not_applicable(*backend, false) &&
            (!only || (" " + std::string(only) + " ").find(" " + name + " ") != std::string::npos))
            out.push_back(name);
    return out;
}

// Two phases: the full product on host backends; on device backends (where
// every NCCL plan creates communicators) each method in each phase once, paired
// with itself and with the next method.
std::vector<std::vector<std::string>> method_combos(int phases) {
    std::vector<std::vector<std::string>> out;
    if (phases == 0) return {{}};
    const auto m = methods();
    const bool device = Registry<Backend>::instance().create(backend_name())->device_memory();
    for (std::size_t i = 0; i < m.size(); ++i) {
        if (phases == 1) {
            out.push_back({m[i]});
        } else if (device) {
            out.push_back({m[i], m[i]});
            out.push_back({m[i], m[(i + 1) % m.size()]});
        } else {
            for (const auto& b : m) out.push_back({m[i], b});
        }
    }
    return out;
}

class PlanSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanSweep, EveryApplicableConfigurationValidates) {
    const int p = world_size();
    const auto decomposition = Registry<Decomposition>::instance().create(GetParam());
    int validated = 0;
    // 8x1x6: a transformed axis of length 1 (no order to keep or change).
    for (const std::array<index_t, 3> n : {std::array<index_t, 3>{9, 10, 11}, {5, 3, 7}, {32, 24, 20}, {8, 1, 6}})
        for (auto layout : all_values<LayoutVariant>())
            for (const auto& grid : decomposition->uses_process_grid() ? all_grids(p) : std::vector<std::array<int, 2>>{{p, 1}})
                for (const auto& methods : method_combos(decomposition->redistribution_phases()))
                    for (auto precision : all_values<Precision>())
                        for (bool kept : {false, true}) {
                            const Problem problem{"fft3d", n, precision, Direction::forward, p};
                            Config config{backend_name(), GetParam(), layout, grid, methods, false};
                            config.fft_stores_kept = kept;  // where the backend's FFTs can (cuda)
                            if (auto why = check_applicable(problem, config)) {
                                // The backend must run here.
                                if (!kept) EXPECT_EQ(why->find("backend"), std::string::npos) << *why;
                                continue;
                            }
                            Plan plan(MPI_COMM_WORLD, problem, config);
                            const ValidationResult v = validate(plan);
                            ASSERT_EQ(v.checks.size(), 4u);  // small grids get the oracle too
                            for (const auto& c : v.checks) {
                                EXPECT_TRUE(c.passed) << config.key() << " " << size_string(n) << " " << c.method
                                                      << " error " << c.max_rel_error << " > " << c.tolerance;
                                EXPECT_LE(c.max_rel_error, precision == Precision::double_ ? 1e-10 : 1e-4);
                            }
                            ++validated;
                        }
    if (GetParam() == "reference_3d" && p > 1) EXPECT_EQ(validated, 0);  // one process only
    else EXPECT_GT(validated, 0);
}

INSTANTIATE_TEST_SUITE_P(All, PlanSweep, ::testing::Values("slab_2d1d", "slab_1d2d", "pencil", "reference_3d"),
                         [](const auto& info) { return info.param; });

// Overlap (Config::overlap): each FFT next to a reshape runs slice by slice,
// with more slices than some ranks have planes. On the backend under test and,
// for host backends, on the queued one, whose overlap queue runs every FFT
// slice late in a thread of its own: a reshape that starts before its slice
// is transformed, or a stage that reads before the last slice is done, fails.
const bool queued_registered = register_variant<Backend, testing::QueuedBackend>("queued");

TEST(Plan, OverlappedStagesValidate) {
    const int p = world_size();
    std::vector<std::string> backends{backend_name()};
    if (!Registry<Backend>::instance().create(backend_name())->device_memory()) backends.push_back("queued");
    const auto m = methods();
    for (const auto& backend : backends) {
        int validated = 0, realigned_refused = 0, one_rank_refused = 0, configs = 0, parted = 0;
        for (const std::string d : {"slab_2d1d", "slab_1d2d", "pencil"}) {
            const auto decomposition = Registry<Decomposition>::instance().create(d);
            const int phases = decomposition->redistribution_phases();
            for (const std::array<index_t, 3> n : {std::array<index_t, 3>{9, 10, 11}, {5, 3, 7}})
                for (auto layout : all_values<LayoutVariant>())
                    for (std::size_t i = 0; i < m.size(); ++i)
                        for (int chunks : {2, 7}) {
                            const auto precision = (i + chunks) % 2 ? Precision::single : Precision::double_;
                            const auto grid = phases == 2 ? auto_grid(p) : std::array<int, 2>{p, 1};
                            std::vector<std::string> methods{m[i]};
                            if (phases == 2) methods.push_back(m[(i + 1) % m.size()]);
                            const Problem problem{"fft3d", n, precision, Direction::forward, p};
                            Config config{backend, d, layout, grid, methods, false, chunks};
                            // Every other point with tapered slices (smallest first forward, last inverse).
                            if ((++configs) % 2) config.overlap_slices = SliceSchedule::tapered;
                            // Every third the exchange in 2 or 3 parts where the plan has a tail to part.
                            if (configs % 3 == 0) {
                                config.exchange_parts = 2 + configs % 2;
                                if (check_applicable(problem, config)) config.exchange_parts = 1;
                            }
                            if (auto why = check_applicable(problem, config)) {
                                if (p == 1 && layout == LayoutVariant::default_) {  // no reshape at one rank
                                    EXPECT_NE(why->find("at one rank the plan has none"), std::string::npos) << *why;
                                    ++one_rank_refused;
                                } else if (why->find("overlap") != std::string::npos) {
                                    // Realigned FFTs change the slowest axis: no slice is contiguous in both arrays.
                                    EXPECT_EQ(layout, LayoutVariant::realigned) << *why;
                                    ++realigned_refused;
                                }
                                continue;
                            }
                            Plan plan(MPI_COMM_WORLD, problem, config);
                            // Same phases as without overlap (they now overlap in time).
                            Config plain = config;
                            plain.overlap = 1;
                            plain.overlap_slices = SliceSchedule::even;
                            plain.exchange_parts = 1;
                            Plan reference(MPI_COMM_WORLD, problem, plain);
                            for (auto dir : {Direction::forward, Direction::inverse}) {
                                auto want = reference.phase_names(dir), got = plan.phase_names(dir);
                                std::sort(want.begin(), want.end());
                                std::sort(got.begin(), got.end());
                                EXPECT_EQ(got, want) << config.key();
                            }
                            const ValidationResult v = validate(plan);
                            for (const auto& c : v.checks)
                                EXPECT_TRUE(c.passed) << config.key() << " " << size_string(n) << " " << c.method
                                                      << " error " << c.max_rel_error << " > " << c.tolerance;
                            ++validated;
                            parted += config.parted();
                        }
        }
        const int every = 3 * 2 * 2 * static_cast<int>(m.size());  // decompositions x sizes x chunk counts x methods
        EXPECT_EQ(realigned_refused, every) << backend;  // every realigned one
        if (p == 1) {
            EXPECT_EQ(one_rank_refused, every) << backend;  // and at one rank every default one
            continue;
        }
        EXPECT_GT(validated, 0) << backend;
        EXPECT_GT(parted, 0) << backend;  // slab_2d1d and pencil in the default layout part
    }
}

// The backend under test, noting the descriptor of every FFT it plans.
std::vector<FftDescriptor> planned_ffts;
class NotingFfts final : public testing::ForwardingBackend {
public:
    NotingFfts() : ForwardingBackend(backend_name()) {}
    std::string name() const override { return "test_noting_ffts"; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& d) override {
        planned_ffts.push_back(d);
        return ForwardingBackend::make_fft(d);
    }
};
const bool registered_noting_ffts = register_variant<Backend, NotingFfts>("test_noting_ffts");

// The backend under test, its plans making reversed twins (FftPlan::reversed)
// as new plans of the flipped descriptor, each noted.
std::vector<FftDescriptor> reversed_ffts;
class ReversibleFft final : public FftPlan {
public:
    ReversibleFft(Backend& backend, const FftDescriptor& d) : backend_(backend), d_(d), inner_(backend.make_fft(d)) {}
    void execute(void* in, void* out) override { inner_->execute(in, out); }
    std::size_t work_bytes() const override { return inner_->work_bytes(); }
    void set_work_area(void* area) override { inner_->set_work_area(area); }
    std::unique_ptr<FftPlan> reversed() const override {
        if (!is_c2c(d_.kind)) return nullptr;
        FftDescriptor flipped = d_;
        flipped.kind = d_.kind == FftKind::c2c_forward ? FftKind::c2c_backward : FftKind::c2c_forward;
        reversed_ffts.push_back(flipped);
        return std::make_unique<ReversibleFft>(backend_, flipped);
    }

private:
    Backend& backend_;
    FftDescriptor d_;
    std::unique_ptr<FftPlan> inner_;
};
class ReversingFfts final : public testing::ForwardingBackend {
public:
    ReversingFfts() : ForwardingBackend(backend_name()) {}
    std::string name() const override { return "test_reversing_ffts"; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& d) override {
        planned_ffts.push_back(d);
        return std::make_unique<ReversibleFft>(inner(), d);
    }
};
const bool registered_reversing_ffts = register_variant<Backend, ReversingFfts>("test_reversing_ffts");

// The inverse runs the forward's c2c plans reversed wherever it has a stage
// of the same transform (same shape, strides and queue), and plans only the
// others: no c2c transform is planned in both directions. slab_2d1d's x-FFT
// and pencil's x (and, on a grid of two rows and columns, y) FFTs in the
// default layout are such stages from two ranks on; the realigned layouts'
// c2c stages change the memory order, so their strides differ between
// directions. Every plan still validates.
TEST(Plan, TheInverseRunsTheForwardsComplexPlansReversed) {
    const int p = world_size();
    int twins = 0;
    for (const std::string d : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>())
            for (int overlap : {1, 2}) {
                const int phases = Registry<Decomposition>::instance().create(d)->redistribution_phases();
                const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, p};
                const Config config{"test_reversing_ffts", d, layout, phases == 2 ? auto_grid(p) : std::array<int, 2>{p, 1},
                                    std::vector<std::string>(phases, "a2a_sync"), false, overlap};
                if (check_applicable(problem, config)) continue;
                planned_ffts.clear();
                reversed_ffts.clear();
                Plan plan(MPI_COMM_WORLD, problem, config);
                for (const FftDescriptor& made : planned_ffts) {
                    if (made.kind != FftKind::c2c_backward) continue;
                    FftDescriptor as_forward = made;
                    as_forward.kind = FftKind::c2c_forward;
                    for (const FftDescriptor& other : planned_ffts)
                        EXPECT_FALSE(same_fft_plan(other, as_forward)) << config.key() << ": planned both ways";
                }
                for (const FftDescriptor& r : reversed_ffts) EXPECT_EQ(r.kind, FftKind::c2c_backward) << config.key();
                if (p > 1 && layout == LayoutVariant::default_ && d != "slab_1d2d")
                    EXPECT_GE(reversed_ffts.size(), 1u) << config.key();
                twins += int(reversed_ffts.size());
                const ValidationResult v = validate(plan);
                EXPECT_TRUE(v.passed()) << config.key();
            }
    if (p > 1) EXPECT_GT(twins, 0);
}

// Whether an FFT stage writes its axes in another order than it reads them.
bool reorders(const FftDescriptor& d) {
    std::vector<FftDim> axes = d.dims;
    axes.insert(axes.end(), d.batch.begin(), d.batch.end());
    std::vector<std::size_t> by_in(axes.size()), by_out(axes.size());
    std::iota(by_in.begin(), by_in.end(), 0);
    std::iota(by_out.begin(), by_out.end(), 0);
    std::sort(by_in.begin(), by_in.end(), [&](auto i, auto j) { return axes[i].in_stride > axes[j].in_stride; });
    std::sort(by_out.begin(), by_out.end(), [&](auto i, auto j) { return axes[i].out_stride > axes[j].out_stride; });
    return by_in != by_out;
}

// At one rank every reshape would copy the rank's whole array onto itself: the
// plan has none, so no stage copies (no pack, exchange, unpack or self copy;
// the inverse's copy.in of the caller's spectrum only when it must preserve
// it), the floor traffic is the FFTs' alone, no FFT reorders axes (the
// realigned orders serve exchanges), the stages are one 3D transform, and it
// still validates.
TEST(Plan, AtOneRankNothingIsCopied) {
    if (world_size() != 1) GTEST_SKIP() << "one rank";
    int checked = 0;
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>()) {
            const int phases = Registry<Decomposition>::instance().create(d)->redistribution_phases();
            const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, 1};
            const Config config{"test_noting_ffts", d, layout, {1, 1}, std::vector<std::string>(phases, "a2a_sync"), false};
            ASSERT_FALSE(check_applicable(problem, config)) << d;
            planned_ffts.clear();
            Plan plan(MPI_COMM_WORLD, problem, config, InverseInput::destroy);
            for (auto dir : {Direction::forward, Direction::inverse}) {
                for (const auto& name : plan.phase_names(dir))
                    EXPECT_EQ(name.rfind("fft.", 0), 0u) << d << " " << to_string(layout) << ": " << name;
                for (const auto& t : plan.phase_traffic(dir)) EXPECT_EQ(t.sent_bytes + t.received_bytes, 0u);
            }
            // No exchange separates the stages: one 3D transform each way.
            for (auto dir : {Direction::forward, Direction::inverse})
                EXPECT_EQ(plan.phase_names(dir), std::vector<std::string>{"fft.xyz"}) << d << " " << to_string(layout);
            EXPECT_EQ(planned_ffts.size(), 2u) << d;
            for (const FftDescriptor& f : planned_ffts)
                EXPECT_FALSE(reorders(f)) << d << " " << to_string(layout) << ": an FFT stage of " << f.dims.size()
                                          << " axes reorders";
            EXPECT_THROW(validate(plan), std::invalid_argument);  // it needs the spectrum twice
            // An inverse that preserves the spectrum keeps its first stage apart
            // instead of copying the spectrum for a merged c2r.
            Plan preserving(MPI_COMM_WORLD, problem, config);
            EXPECT_EQ(preserving.phase_names(Direction::forward), std::vector<std::string>{"fft.xyz"});
            const auto inverse = preserving.phase_names(Direction::inverse);
            EXPECT_EQ(std::count(inverse.begin(), inverse.end(), "copy.in"), 0) << d;
            EXPECT_EQ(inverse.size(), 2u) << d;
            const ValidationResult v = validate(preserving);
            EXPECT_TRUE(v.passed()) << d << " " << to_string(layout);
            ++checked;
        }
    EXPECT_EQ(checked, 6);
}

TEST(Plan, OverlapMustBeAChunkCount) {
    const int p = world_size();
    const Problem problem{"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, p};
    const Config zero{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"a2a_sync"}, false, 0};
    EXPECT_THROW(check_applicable(problem, zero), std::invalid_argument);
    const Config one_gpu{"fftw", "reference_3d", LayoutVariant::default_, {1, 1}, {}, false, 2};
    if (p == 1) {
        const auto why = check_applicable(problem, one_gpu);
        ASSERT_TRUE(why);
        EXPECT_NE(why->find("overlap needs an FFT stage next to a reshape"), std::string::npos) << *why;
    }
}

TEST(Plan, ExchangePartsApplyToAForwardTailOnly) {
    const int p = world_size();
    Problem problem{"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, p};
    Config config{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"a2a_sync"}, false, 2};
    config.exchange_parts = 0;
    EXPECT_THROW(check_applicable(problem, config), std::invalid_argument);
    config.exchange_parts = 2;
    if (p == 1) GTEST_SKIP() << "overlap needs a reshape between ranks";
    EXPECT_FALSE(check_applicable(problem, config));
    problem.direction = Direction::inverse;
    auto why = check_applicable(problem, config);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("exchange_parts is built for the forward only"), std::string::npos) << *why;
    problem.direction = Direction::forward;
    config.overlap = 1;  // no slices: parts are no choice (Config::parted), the key says none
    EXPECT_EQ(config.key().find("parts"), std::string::npos);
}

// Parted exchange (Config::exchange_parts): slab_2d1d's forward runs its last
// FFT, fft.x, in parts of its 6 y-rows per rank (equal parts share one plan),
// and still validates.
TEST(Plan, PartedExchangeRunsTheLastFftInParts) {
    const int p = world_size();
    if (p == 1) GTEST_SKIP() << "overlap needs a reshape between ranks";
    const Problem problem{"fft3d", {8, 6 * p, 9}, Precision::double_, Direction::forward, p};
    auto rows_per_x_fft = [&](int parts) {
        Config config{"test_noting_ffts", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"a2a_sync"}, false, 3};
        config.exchange_parts = parts;
        planned_ffts.clear();
        Plan plan(MPI_COMM_WORLD, problem, config);
        std::vector<index_t> rows;  // the y batch of each planned forward fft.x
        for (const auto& d : planned_ffts)
            if (d.kind == FftKind::c2c_forward && d.dims.size() == 1 && d.dims[0].n == 8) rows.push_back(d.batch[0].n);
        EXPECT_TRUE(validate(plan).passed()) << config.key();
        return rows;
    };
    EXPECT_EQ(rows_per_x_fft(1), std::vector<index_t>{6});
    EXPECT_EQ(rows_per_x_fft(3), std::vector<index_t>{2});
    EXPECT_EQ(rows_per_x_fft(4), (std::vector<index_t>{2, 1}));  // parts of 2, 2, 1, 1 rows
}

// Overlap slices of one shape share one FFT plan (same_fft_plan): with every
// rank's 16 x-planes cut in 4 even slices the plan makes as many FFT plans as
// without overlap, tapered slices one per shape, and both still validate.
TEST(Plan, EqualOverlapSlicesShareOnePlan) {
    const int p = world_size();
    if (p == 1) GTEST_SKIP() << "overlap needs a reshape between ranks";
    const Problem problem{"fft3d", {16 * p, 10, 9}, Precision::double_, Direction::forward, p};
    auto planned = [&](int overlap, SliceSchedule schedule) {
        Config config{"test_noting_ffts", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"a2a_sync"}, false, overlap};
        config.overlap_slices = schedule;
        planned_ffts.clear();
        Plan plan(MPI_COMM_WORLD, problem, config);
        const std::size_t made = planned_ffts.size();
        EXPECT_TRUE(validate(plan).passed()) << config.key();
        return made;
    };
    const std::size_t plain = planned(1, SliceSchedule::even);
    EXPECT_EQ(planned(4, SliceSchedule::even), plain);
    EXPECT_GT(planned(4, SliceSchedule::tapered), plain);
}

TEST(Plan, ApplicationInterface) {
    const int p = world_size();
    const Problem problem{"fft3d", {12, 7, 5}, Precision::double_, Direction::forward, p};
    const Config config{backend_name(), "pencil", LayoutVariant::realigned, auto_grid(p), {"a2a_sync", "p2p_streams"}, false};
    Plan plan(MPI_COMM_WORLD, problem, config);
    // Input boxes tile the real grid, output boxes the complex grid, across ranks.
    long long counts[2] = {plan.input_count(), plan.output_count()}, total[2];
    MPI_Allreduce(counts, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(total[0], 12 * 7 * 5);
    EXPECT_EQ(total[1], 12 * 7 * 3);
    EXPECT_EQ(plan.input_bytes(), std::size_t(plan.input_count()) * 8);
    EXPECT_EQ(plan.output_bytes(), std::size_t(plan.output_count()) * 16);
    EXPECT_GT(plan.workspace_bytes(), 0u);
    EXPECT_EQ(plan.output_layout().order, order_xyz);
    // Phase names follow the stages.
    // A phase where a rank is alone (one rank; a 1 x P grid) has no stage: its
    // reshape would copy the rank's block onto itself, and the FFT stages on
    // either side of it are one.
    const auto& names = plan.phase_names(Direction::forward);
    const auto grid = auto_grid(p);
    std::vector<std::string> want;
    if (grid[0] == 1 && grid[1] == 1) want = {"fft.xyz"};
    // Phase 0 among one rank: the y FFT reorders (realigned) for phase 1, so z and y stay two stages.
    else if (grid[1] == 1) want = {"fft.z", "fft.y", "exchange.1", "fft.x"};
    else want = {"fft.z", "pack.0", "exchange.0", "unpack.0", "fft.y", "exchange.1", "fft.x"};
    EXPECT_EQ(names, want);
    // GPU backends stage MPI traffic through pinned host memory when MPI is not
    // GPU-aware; at one rank there is no traffic, so nothing is staged.
    EXPECT_EQ(plan.host_staging_bytes() > 0, p > 1 && plan.backend().device_memory() && !mpi_gpu_aware());
    auto in = plan.allocate_input();
    EXPECT_THROW(plan.forward(in.data(), in.data()), std::invalid_argument);
}

// InverseInput::destroy: the same inverse without the copy of the caller's
// spectrum (reference_3d at one rank is the chain whose c2r reads it), its
// first FFT stage merged into the c2r's where that makes one stage of all
// (one rank: kept apart to preserve the spectrum, it costs a work array; a
// P x 1 pencil merges its one-rank phase either way, the x stage apart), and
// every plan's result unchanged.
TEST(Plan, InverseThatMayDestroyItsInputCopiesNothing) {
    const int p = world_size();
    const Problem problem{"fft3d", {9, 6, 10}, Precision::double_, Direction::forward, p};
    int compared = 0;
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil", "reference_3d"}) {
        const int phases = Registry<Decomposition>::instance().create(d)->redistribution_phases();
        const Config config{backend_name(), d, LayoutVariant::default_, phases == 2 ? auto_grid(p) : std::array<int, 2>{p, 1},
                            std::vector<std::string>(phases, "a2a_sync"), false};
        if (check_applicable(problem, config)) continue;
        Plan keeps(MPI_COMM_WORLD, problem, config), destroys(MPI_COMM_WORLD, problem, config, InverseInput::destroy);
        auto names = keeps.phase_names(Direction::inverse);
        const bool copied = std::find(names.begin(), names.end(), "copy.in") != names.end();
        if (std::string(d) == "reference_3d") EXPECT_TRUE(copied);
        names.erase(std::remove(names.begin(), names.end(), "copy.in"), names.end());
        // The same phases but FFT stages, which transform the same axes in all.
        auto split = [](const std::vector<std::string>& phases) {
            std::vector<std::string> other;
            std::string axes;
            for (const auto& n : phases)
                if (n.rfind("fft.", 0) == 0) axes += n.substr(4);
                else other.push_back(n);
            std::sort(axes.begin(), axes.end());
            return std::pair{other, axes};
        };
        const auto destroyed = destroys.phase_names(Direction::inverse);
        EXPECT_EQ(split(destroyed), split(names)) << d;
        const bool merged = destroyed.size() < names.size();
        // Only one rank merges every stage into one.
        EXPECT_EQ(merged, std::string(d) != "reference_3d" && p == 1) << d;
        if (merged) EXPECT_LE(destroys.workspace_bytes() + (copied ? keeps.output_bytes() : 0), keeps.workspace_bytes()) << d;
        else EXPECT_EQ(destroys.workspace_bytes() + (copied ? keeps.output_bytes() : 0), keeps.workspace_bytes()) << d;

        Backend& be = keeps.backend();
        std::vector<double> real(keeps.input_count());
        for (std::size_t i = 0; i < real.size(); ++i) real[i] = std::sin(0.37 * double(i + 101 * world_rank()));
        Buffer in(be, keeps.input_bytes()), spectrum(be, keeps.output_bytes()), again(be, keeps.output_bytes());
        Buffer out_kept(be, keeps.input_bytes()), out_destroyed(be, keeps.input_bytes());
        if (!real.empty()) be.copy_from_host(in.data(), real.data(), keeps.input_bytes());
        keeps.forward(in.data(), spectrum.data());
        keeps.forward(in.data(), again.data());
        keeps.inverse(spectrum.data(), out_kept.data());
        be.synchronize();  // each plan has a backend (a stream) of its own
        destroys.inverse(again.data(), out_destroyed.data());
        destroys.backend().synchronize();
        std::vector<double> a(real.size()), b(real.size());
        if (!real.empty()) {
            be.copy_to_host(a.data(), out_kept.data(), keeps.input_bytes());
            be.copy_to_host(b.data(), out_destroyed.data(), keeps.input_bytes());
        }
        be.synchronize();
        for (std::size_t i = 0; i < a.size(); ++i) {
            ASSERT_NEAR(a[i], b[i], 1e-12 * 540) << d << " at " << i;
            ASSERT_NEAR(a[i], 540 * real[i], 1e-9) << d << " at " << i;  // unnormalised round trip: N = 540
        }
        ++compared;
    }
    EXPECT_GE(compared, p == 1 ? 4 : 3);
}

// An FFT that stores aside in software (host backends): the inner FFT writes
// its whole output, then the block goes to the target and is poisoned (NaN)
// in the output, so that a transport still copying it from there would spoil
// the result.
struct StoringAsideFft final : FftPlan {
    StoringAsideFft(std::unique_ptr<FftPlan> inner, const StoreAside& aside, Precision precision, Backend& backend)
        : inner(std::move(inner)), aside(aside), elem(complex_bytes(precision)), backend(backend) {}
    void execute(void* in, void* out) override {
        inner->execute(in, out);
        const StridedRegion from = region_of(aside.out, aside.box);
        backend.copy_region(target, region_of(aside.target, aside.box), out, from, elem);
        std::vector<char> nan(static_cast<std::size_t>(from.count()) * elem);
        for (std::size_t i = 0; i < nan.size() / sizeof(float); ++i)
            reinterpret_cast<float*>(nan.data())[i] = std::numeric_limits<float>::quiet_NaN();
        backend.copy_region(out, from, nan.data(), StridedRegion{from.extent, {from.extent[1] * from.extent[2], from.extent[2], 1}, 0}, elem);
        ++runs;
    }
    std::size_t work_bytes() const override { return inner->work_bytes(); }
    void set_work_area(void* area) override { inner->set_work_area(area); }
    bool stores_aside() const override { return true; }
    void set_store_arrays(void*, void* t) override { target = t; }
    std::unique_ptr<FftPlan> inner;
    StoreAside aside;
    std::size_t elem;
    Backend& backend;
    void* target = nullptr;
    static inline int runs = 0;
};
class StoresAside final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_stores_aside"; }
    std::optional<std::string> store_aside_unavailable() const override { return std::nullopt; }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& d) override {
        auto plan = ForwardingBackend::make_fft(d);
        if (!d.store_aside) return plan;
        return std::make_unique<StoringAsideFft>(std::move(plan), *d.store_aside, d.precision, *this);
    }
};
const bool registered_stores_aside = register_variant<Backend, StoresAside>("test_stores_aside");

// Config::fft_stores_kept: where the FFT before a reshape stores the self block
// into the reshape's destination, no transport copies it (no self copy in the
// traffic floors) and every plan still validates; the caller's arrays are
// never a target, and a backend that cannot is refused with the reason.
TEST(Plan, AnFftThatStoresTheKeptBlockAsideLeavesNothingToCopy) {
    const int p = world_size();
    const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, p};
    Config plain{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"p2p_sync"}, false};
    plain.fft_stores_kept = true;
    const auto why = check_applicable(problem, plain);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find(p == 1 ? "needs a reshape between ranks" : "backend fftw has no FFT that stores"), std::string::npos)
        << *why;
    if (p == 1) return;
    int checked = 0;
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>())
            for (const char* method : {"p2p_sync", "a2a_sync", "p2p_streams", "a2a_mpi_type"}) {
                const int phases = Registry<Decomposition>::instance().create(d)->redistribution_phases();
                Config config{"test_stores_aside", d, layout, phases == 2 ? auto_grid(p) : std::array<int, 2>{p, 1},
                              std::vector<std::string>(phases, method), false};
                config.fft_stores_kept = true;
                if (auto no = check_applicable(problem, config)) {
                    EXPECT_EQ(std::string(method), "a2a_mpi_type") << *no;  // its datatypes move the self block
                    continue;
                }
                StoringAsideFft::runs = 0;
                Plan plan(MPI_COMM_WORLD, problem, config);
                config.fft_stores_kept = false;
                Plan copying(MPI_COMM_WORLD, problem, config);
                for (auto dir : {Direction::forward, Direction::inverse}) {
                    const auto names = plan.phase_names(dir);
                    ASSERT_EQ(names, copying.phase_names(dir));
                    const auto with = plan.phase_traffic(dir), without = copying.phase_traffic(dir);
                    for (std::size_t k = 0; k < names.size(); ++k) {
                        if (names[k].rfind("exchange.", 0) != 0) {
                            EXPECT_EQ(with[k].device_bytes, without[k].device_bytes) << d << " " << names[k];
                            continue;
                        }
                        EXPECT_LE(with[k].device_bytes, without[k].device_bytes) << d << " " << names[k];
                        EXPECT_EQ(with[k].sent_bytes, without[k].sent_bytes) << d << " " << names[k];
                    }
                }
                const auto v = validate(plan);
                EXPECT_TRUE(v.passed()) << config.key();
                EXPECT_GT(StoringAsideFft::runs, 0) << config.key();
                ++checked;
            }
    EXPECT_EQ(checked, 3 * 2 * 3);
}

// Summed over ranks, the self copies a plan with stored-aside blocks leaves out
// are exactly the self blocks: what the copying plan's exchanges move within a rank.
// On the backend under test where its FFTs store aside (cuda: LTO store
// callbacks), else in software: slab_2d1d's self blocks, both directions.
TEST(Plan, StoredAsideBlocksAreTheSelfCopiesTheTrafficLeavesOut) {
    const int p = world_size();
    if (p == 1) GTEST_SKIP() << "needs a reshape between ranks";
    const bool native = !Registry<Backend>::instance().create(backend_name())->store_aside_unavailable();
    const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, p};
    for (const char* method : {"p2p_sync", "a2a_sync", "p2p_streams"}) {
        Config config{native ? backend_name() : "test_stores_aside", "slab_2d1d", LayoutVariant::default_, {p, 1},
                      {method}, false};
        Plan copying(MPI_COMM_WORLD, problem, config);
        config.fft_stores_kept = true;
        Plan plan(MPI_COMM_WORLD, problem, config);
        for (auto dir : {Direction::forward, Direction::inverse}) {
            // The exchange of slab_2d1d: rank r keeps the x-planes of its slab that are
            // in its y-slab, Nx/P x Ny/P x (Nz/2+1) complex elements, read + written once.
            const auto names = plan.phase_names(dir);
            const auto k = std::find(names.begin(), names.end(), "exchange.0") - names.begin();
            ASSERT_LT(std::size_t(k), names.size());
            const auto saved = static_cast<long long>(copying.phase_traffic(dir)[k].device_bytes -
                                                      plan.phase_traffic(dir)[k].device_bytes);
            long long total = 0;
            MPI_Allreduce(&saved, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            long long self = 0;
            for (int r = 0; r < p; ++r) {
                const index_t xs = split_hi(12, p, r) - split_lo(12, p, r), ys = split_hi(10, p, r) - split_lo(10, p, r);
                self += 2 * xs * ys * 5 * 16;
            }
            EXPECT_EQ(total, self) << method << " " << to_string(dir);
        }
        const auto v = validate(plan);
        EXPECT_TRUE(v.passed()) << config.key();
    }
    if (!native) return;
    // Every decomposition and layout: the backend's FFTs store aside wherever
    // the software ones do (one cuFFT call, passes, a loop of calls, or the
    // copy out of a reordering stage's scratch array), so the floors are the same.
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
        for (auto layout : all_values<LayoutVariant>()) {
            const int phases = Registry<Decomposition>::instance().create(d)->redistribution_phases();
            Config config{backend_name(), d, layout, phases == 2 ? auto_grid(p) : std::array<int, 2>{p, 1},
                          std::vector<std::string>(phases, "p2p_sync"), false};
            config.fft_stores_kept = true;
            Plan plan(MPI_COMM_WORLD, problem, config);
            config.backend = "test_stores_aside";
            Plan software(MPI_COMM_WORLD, problem, config);
            for (auto dir : {Direction::forward, Direction::inverse}) {
                const auto a = plan.phase_traffic(dir), b = software.phase_traffic(dir);
                ASSERT_EQ(a.size(), b.size()) << d;
                for (std::size_t k = 0; k < a.size(); ++k)
                    EXPECT_EQ(a[k].device_bytes, b[k].device_bytes) << config.key() << " " << plan.phase_names(dir)[k];
            }
            const auto v = validate(plan);
            EXPECT_TRUE(v.passed()) << config.key();
        }
}

TEST(Plan, RejectsWhatCannotApplyWithTheReason) {
    const int p = world_size();
    const Problem problem{"fft3d", {2, 8, 8}, Precision::double_, Direction::forward, p};
    if (p > 2) {
        const Config slab{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"p2p_sync"}, false};
        const auto why = check_applicable(problem, slab);
        ASSERT_TRUE(why);
        EXPECT_NE(why->find("Nx=2 < P"), std::string::npos) << *why;
        EXPECT_THROW(Plan(MPI_COMM_WORLD, problem, slab), std::invalid_argument);
    }
    const Config two_methods{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"p2p_sync", "a2a_sync"}, false};
    EXPECT_THROW(check_applicable({"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, p}, two_methods),
                 std::invalid_argument);
    const Config unknown{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"carrier_pigeon"}, false};
    EXPECT_THROW(check_applicable({"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, p}, unknown),
                 std::invalid_argument);
    const Config aware{"fftw", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"p2p_sync"}, true};
    const auto why = check_applicable({"fft3d", {8, 8, 8}, Precision::double_, Direction::forward, p}, aware);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("gpu_aware"), std::string::npos);
}

const bool metered_registered = register_variant<Backend, testing::MeteredBackend>("fftw_metered");

Config metered_config(const std::string& decomposition, int p) {
    const int phases = Registry<Decomposition>::instance().create(decomposition)->redistribution_phases();
    return {"fftw_metered", decomposition, LayoutVariant::default_, phases == 2 ? auto_grid(p) : decltype(auto_grid(p)){p, 1},
            std::vector<std::string>(phases, "a2a_sync"), false};
}

TEST(Plan, FootprintIsWhatItAllocatesWithOneSharedFftWorkArea) {
    auto& meter = testing::Meter::instance();
    const int p = world_size();
    int checked = 0;
    for (int overlap : {1, 3})  // overlapped pencils hold a third work array
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil", "reference_3d"}) {
        const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, p};
        Config config = metered_config(d, p);
        config.overlap = overlap;
        if (check_applicable(problem, config)) continue;
        ++checked;
        meter.capacity = std::size_t(1) << 40;
        meter.largest_request = 0;
        const std::size_t live0 = meter.live;
        Plan plan(MPI_COMM_WORLD, problem, config);
        EXPECT_EQ(meter.live - live0, plan.workspace_bytes()) << d;
        // One area, as large as the largest stage asked for, given to every stage.
        ASSERT_EQ(meter.areas.size(), 1u) << d;
        EXPECT_EQ(meter.sizes.at(*meter.areas.begin()), meter.largest_request) << d;
        if (std::string(d) == "reference_3d")  // one step: only c2r's copy of its input needs a slot
            EXPECT_EQ(plan.workspace_bytes(), plan.output_bytes() + meter.largest_request);
        meter.peak = meter.live;
        // Execution and validation work in the area; validation holds one input
        // and one output, as a timed run does.
        const auto v = validate(plan);
        EXPECT_TRUE(v.passed()) << d;
        EXPECT_EQ(meter.peak - live0, plan.input_bytes() + plan.output_bytes() + plan.workspace_bytes()) << d;
    }
    EXPECT_TRUE(meter.areas.empty());
    EXPECT_GE(checked, p == 1 ? 4 : 6);  // one rank: nothing to overlap
}

// What cuda_ipc_direct and cuda_ipc_push rely on: where a reshape's source or
// destination is a work array of the plan, its context names that array and
// execute is given it, the slices of an overlapped stage included.
int owned_sources = 0, owned_destinations = 0;
bool checking_owned_arrays = false;  // only its own test sees the transport: others count methods()

class ChecksOwnedArrays final : public testing::ForwardingTransport {
public:
    std::optional<std::string> not_applicable(const Backend&, bool) const override {
        if (!checking_owned_arrays) return std::string("owned-array test only");
        return std::nullopt;
    }
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        if (ctx.plan->source_owned) {
            EXPECT_EQ(src, ctx.source_array);
            ++owned_sources;
        } else {
            EXPECT_EQ(ctx.source_array, nullptr);
        }
        if (ctx.plan->destination_owned) {
            EXPECT_EQ(dst, ctx.destination_array);
            ++owned_destinations;
        } else {
            EXPECT_EQ(ctx.destination_array, nullptr);
        }
        ForwardingTransport::execute(ctx, src, dst, timer, phases);
    }
};
const bool registered_checks = register_variant<Transport, ChecksOwnedArrays>("test_checks_owned_arrays");

TEST(Plan, ReshapesAreGivenTheOwnedArraysTheirContextNames) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    checking_owned_arrays = true;
    for (int overlap : {1, 3})
        for (const char* d : {"slab_2d1d", "pencil"})
            for (Direction dir : {Direction::forward, Direction::inverse}) {
                const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, dir, p};
                Config config = metered_config(d, p);
                config.backend = "fftw";
                config.redistribution.assign(config.redistribution.size(), "test_checks_owned_arrays");
                config.overlap = overlap;
                if (check_applicable(problem, config)) continue;
                const std::string what = fmt::format("{} overlap {} {}", d, overlap, to_string(dir));
                owned_sources = owned_destinations = 0;
                Plan plan(MPI_COMM_WORLD, problem, config);
                EXPECT_TRUE(validate(plan).passed()) << what;
                // A reshape between two FFT stages reads and writes work arrays.
                EXPECT_GT(owned_sources, 0) << what;
                EXPECT_GT(owned_destinations, 0) << what;
            }
    checking_owned_arrays = false;
}

// What cuda_ipc_push_queued relies on: forward, an overlapped stage of
// a transport that queues slices opens once, queues every slice on that
// slice's own instance with the stage's arrays, and closes once on the last;
// inverse (FFT slices read each destination), every slice runs execute. The
// moves happen only at close_slices, so a slice left out or given the wrong
// arrays fails validation.
struct QueuedMove {
    Transport* by;
    const ReshapeContext* ctx;
    const void* src;
    void* dst;
};
std::vector<QueuedMove> queued_moves;
int slices_opened = 0, slices_closed = 0, slices_executed = 0, slices_landed = 0;
bool queueing_slices = false;  // only its own test sees the transport: others count methods()
bool landing_slices = false;   // lands_slices: land_slices moves what is queued (exchange_parts)

// Every queued move, now and in order, on every rank (each executes collectively).
void move_queued() {
    for (const QueuedMove& m : queued_moves) {
        PhaseTimer untimed(*m.ctx->backend);
        static_cast<testing::ForwardingTransport*>(m.by)->ForwardingTransport::execute(*m.ctx, m.src, m.dst, untimed, {});
    }
    queued_moves.clear();
}

class QueuesSlices final : public testing::ForwardingTransport {
public:
    std::optional<std::string> not_applicable(const Backend&, bool) const override {
        if (!queueing_slices) return std::string("queued-slices test only");
        return std::nullopt;
    }
    bool queues_slices(bool sources_written_by_slices) const override { return sources_written_by_slices; }
    void open_slices(const ReshapeContext&) override {
        EXPECT_TRUE(queued_moves.empty());
        ++slices_opened;
    }
    void queue_slice(const ReshapeContext& ctx, const void* src, void* dst) override {
        queued_moves.push_back({this, &ctx, src, dst});
    }
    void close_slices(const ReshapeContext& ctx) override {
        if (!landing_slices) {  // landing, the last part has landed already
            ASSERT_FALSE(queued_moves.empty());
            EXPECT_EQ(&ctx, queued_moves.back().ctx);  // the last slice's instance closes
        }
        move_queued();
        ++slices_closed;
    }
    bool lands_slices() const override { return landing_slices; }
    void land_slices(const ReshapeContext& ctx) override {
        ASSERT_FALSE(queued_moves.empty());
        EXPECT_EQ(&ctx, queued_moves.back().ctx);  // the instance of the move queued last
        move_queued();
        ++slices_landed;
    }
    void execute(const ReshapeContext& ctx, const void* src, void* dst, PhaseTimer& timer,
                 const ReshapePhases& phases) override {
        ++slices_executed;
        ForwardingTransport::execute(ctx, src, dst, timer, phases);
    }
};
const bool registered_queues = register_variant<Transport, QueuesSlices>("test_queues_slices");

TEST(Plan, OverlappedSlicesAreQueuedForwardOnly) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    queueing_slices = true;
    for (const char* d : {"slab_2d1d", "pencil"})
        for (Direction dir : {Direction::forward, Direction::inverse}) {
            const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, dir, p};
            Config config = metered_config(d, p);
            config.backend = "fftw";
            config.redistribution.assign(config.redistribution.size(), "test_queues_slices");
            config.overlap = 3;
            if (check_applicable(problem, config)) continue;
            const std::string what = fmt::format("{} {}", d, to_string(dir));
            Plan plan(MPI_COMM_WORLD, problem, config);
            EXPECT_TRUE(validate(plan).passed()) << what;  // both directions
            EXPECT_TRUE(queued_moves.empty()) << what;
            // Then each direction alone.
            Buffer in = dir == Direction::forward ? plan.allocate_input() : plan.allocate_output();
            Buffer out = dir == Direction::forward ? plan.allocate_output() : plan.allocate_input();
            slices_opened = slices_closed = slices_executed = 0;
            if (dir == Direction::forward) {
                plan.forward(in.data(), out.data());
                EXPECT_GT(slices_opened, 0) << what;
                EXPECT_EQ(slices_executed, 0) << what;
            } else {
                plan.inverse(in.data(), out.data());
                EXPECT_EQ(slices_opened, 0) << what;
                EXPECT_GT(slices_executed, 0) << what;
            }
            EXPECT_EQ(slices_opened, slices_closed) << what;
        }
    queueing_slices = false;
}

// A parted exchange (Config::exchange_parts) over a transport that lands
// queued moves on the device queues every (slice, part) move and lands them
// before each part of the last FFT: the moves happen only at land_slices and
// close_slices, so a part transformed before its moves have landed fails
// validation. Without lands_slices the moves run one by one (execute).
TEST(Plan, PartedMovesLandBeforeEachPartOfTheLastFft) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    queueing_slices = true;
    for (bool lands : {true, false})
        for (const char* d : {"slab_2d1d", "pencil"}) {
            landing_slices = lands;
            const Problem problem{"fft3d", {12, 10, 9}, Precision::double_, Direction::forward, p};
            Config config = metered_config(d, p);
            config.backend = "fftw";
            config.redistribution.assign(config.redistribution.size(), "test_queues_slices");
            config.overlap = 3;
            config.exchange_parts = 2;
            if (check_applicable(problem, config)) continue;
            const std::string what = fmt::format("{} lands {}", d, lands);
            Plan plan(MPI_COMM_WORLD, problem, config);
            EXPECT_TRUE(validate(plan).passed()) << what;
            Buffer in = plan.allocate_input();
            Buffer out = plan.allocate_output();
            slices_opened = slices_closed = slices_executed = slices_landed = 0;
            plan.forward(in.data(), out.data());
            EXPECT_EQ(slices_landed, lands ? 2 : 0) << what;  // one per part of the last FFT
            EXPECT_EQ(slices_executed, lands ? 0 : 3 * 2) << what;  // 3 slices x 2 parts one by one
            EXPECT_EQ(slices_opened, slices_closed) << what;
        }
    queueing_slices = landing_slices = false;
}

// Summed over ranks, the floor traffic is the whole problem: every FFT reads and
// writes its whole input and output once; every reshape moves each complex
// element once, to a peer (sent, and received there) or within its rank (the
// self copy, read + write); whether or not the reshape runs slice by slice.
TEST(Plan, TrafficFloorsAddUpToTheWholeProblem) {
    const int p = world_size();
    const std::array<index_t, 3> n{12, 10, 9};
    const std::size_t real_total = 12 * 10 * 9 * 8, complex_total = 12 * 10 * 5 * 16;
    int checked = 0;
    for (auto [overlap, parts] : {std::pair{1, 1}, {3, 1}, {3, 2}})
        for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil"})
            for (LayoutVariant layout : {LayoutVariant::default_, LayoutVariant::realigned})
                for (Direction dir : {Direction::forward, Direction::inverse}) {
                    const Problem problem{"fft3d", n, Precision::double_, dir, p};
                    Config config = metered_config(d, p);
                    config.backend = "fftw";
                    config.layout = layout;
                    config.overlap = overlap;
                    config.exchange_parts = parts;
                    if (check_applicable(problem, config)) continue;
                    ++checked;
                    Plan plan(MPI_COMM_WORLD, problem, config);
                    const auto& names = plan.phase_names(dir);
                    const auto mine = plan.phase_traffic(dir);
                    ASSERT_EQ(mine.size(), names.size());
                    std::vector<unsigned long long> local, sum(3 * mine.size());
                    for (const auto& t : mine) local.insert(local.end(), {t.device_bytes, t.sent_bytes, t.received_bytes});
                    MPI_Allreduce(local.data(), sum.data(), static_cast<int>(sum.size()), MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                  MPI_COMM_WORLD);
                    const std::string what = fmt::format("{} {} overlap {} parts {} {}", d, to_string(layout), overlap,
                                                         parts, to_string(dir));
                    int real_ffts = 0;
                    for (std::size_t k = 0; k < names.size(); ++k) {
                        const auto device = sum[3 * k], sent = sum[3 * k + 1], received = sum[3 * k + 2];
                        const std::string& ph = names[k];
                        if (ph.rfind("fft.", 0) == 0) {
                            EXPECT_EQ(sent + received, 0u) << what << " " << ph;
                            if (device == real_total + complex_total) ++real_ffts;
                            else EXPECT_EQ(device, 2 * complex_total) << what << " " << ph;
                        } else if (ph == "copy.in") {
                            EXPECT_EQ(device, 2 * complex_total) << what;
                        } else if (ph.rfind("exchange.", 0) == 0) {
                            EXPECT_EQ(sent, received) << what << " " << ph;
                            EXPECT_EQ(sent + device / 2, complex_total) << what << " " << ph;  // a2a_sync packs apart
                            if (p == 1) EXPECT_EQ(sent, 0u) << what;
                        } else {
                            ASSERT_TRUE(ph.rfind("pack.", 0) == 0 || ph.rfind("unpack.", 0) == 0) << ph;
                            EXPECT_LE(device, 2 * complex_total) << what << " " << ph;
                        }
                    }
                    EXPECT_EQ(real_ffts, 1) << what;
                }
    EXPECT_GE(checked, 12);
}

TEST(Plan, RefusesOnEveryRankWhatDoesNotFitTheSharedDevice) {
    auto& meter = testing::Meter::instance();
    const int p = world_size();
    const Problem problem{"fft3d", {16, 12, 10}, Precision::double_, Direction::forward, p};
    const Config config = metered_config("slab_2d1d", p);
    meter.capacity = std::size_t(1) << 40;
    unsigned long long need = 0, shared = 0;
    {
        Plan plan(MPI_COMM_WORLD, problem, config);
        need = plan.input_bytes() + plan.output_bytes() + plan.workspace_bytes();
        EXPECT_EQ(plan.ranks_on_device(), p);  // every rank of this node reports the same device
    }
    // The ranks of one node share the pretend device: their needs add up.
    MPI_Allreduce(&need, &shared, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    meter.capacity = meter.live + shared - 1;
    try {
        Plan plan(MPI_COMM_WORLD, problem, config);
        ADD_FAILURE() << "a plan one byte too large was built";
    } catch (const Unsupported& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("does not fit in device memory"), std::string::npos) << what;
        EXPECT_NE(what.find(std::to_string(p) + " rank(s) on device metered-device"), std::string::npos) << what;
    }
    EXPECT_EQ(meter.live, meter.capacity - shared + 1) << "nothing may stay allocated";
    meter.capacity = meter.live + shared;
    EXPECT_NO_THROW(Plan(MPI_COMM_WORLD, problem, config));
    meter.capacity = std::size_t(1) << 40;
}

// The question without the refusal: the same sum over the ranks of a device,
// answered alike on every rank, and nothing thrown.
TEST(Plan, FitsInDeviceMemoryAddsTheNeedsOfTheRanksSharingIt) {
    auto& meter = testing::Meter::instance();
    const int p = world_size();
    const auto backend = Registry<Backend>::instance().create("fftw_metered");
    const std::size_t need = std::size_t(1) << 20;  // each rank's
    meter.capacity = meter.live + p * need;
    EXPECT_TRUE(fits_in_device_memory(MPI_COMM_WORLD, *backend, need));
    meter.capacity = meter.live + p * need - 1;
    EXPECT_FALSE(fits_in_device_memory(MPI_COMM_WORLD, *backend, need));
    // One rank asking for nothing: the others' sum still decides.
    const int rank = world_rank();
    meter.capacity = meter.live + (p - 1) * need;
    EXPECT_EQ(fits_in_device_memory(MPI_COMM_WORLD, *backend, rank == 0 ? 0 : need), true);
    EXPECT_EQ(fits_in_device_memory(MPI_COMM_WORLD, *backend, rank == 0 ? 1 : need), false);
    meter.capacity = std::size_t(1) << 40;
}

// A transport that, like cuda_ipc, maps peers' buffers until it is destroyed,
// and on rank 1 takes a while to let go; a backend that notes when memory is
// freed. No rank may free its buffers before every rank has let go, also when
// a setup fails (on the last rank) and the plan is never made.
std::vector<std::chrono::steady_clock::time_point> freed, closed;
bool fail_setup_on_last_rank = false;

bool pad_mapped_arrays = false;

class NotingFrees final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_noting_frees"; }
    std::size_t mapped_array_bytes(std::size_t bytes) const override { return bytes + (pad_mapped_arrays ? 4096 : 0); }
    void deallocate(void* p) override {
        freed.push_back(std::chrono::steady_clock::now());
        ForwardingBackend::deallocate(p);
    }
};

class MapsPeers final : public testing::ForwardingTransport {
public:
    ~MapsPeers() override {
        if (world_rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
        closed.push_back(std::chrono::steady_clock::now());
    }
    bool maps_peer_memory() const override { return true; }
    void setup(const ReshapeContext& ctx) override {
        ForwardingTransport::setup(ctx);
        if (fail_setup_on_last_rank && world_rank() == world_size() - 1) throw std::runtime_error("injected");
    }
    std::optional<std::string> not_applicable(const Backend& backend, bool) const override {
        if (backend.name() != "test_noting_frees") return std::string("teardown test only");
        return std::nullopt;
    }
};

const bool registered_noting = register_variant<Backend, NotingFrees>("test_noting_frees");
const bool registered_maps = register_variant<Transport, MapsPeers>("test_maps_peers");

TEST(Plan, NoRankFreesItsBuffersBeforeEveryRankUnmappedThem) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    const Problem problem{"fft3d", {8, 6, 5}, Precision::double_, Direction::forward, p};
    const Config config{"test_noting_frees", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"test_maps_peers"}, false};
    for (const bool fail : {false, true}) {
    SCOPED_TRACE(fail ? "a setup fails" : "the plan is made");
    fail_setup_on_last_rank = fail;
    freed.clear(), closed.clear();
    if (fail) EXPECT_ANY_THROW(Plan(MPI_COMM_WORLD, problem, config));
    else { Plan plan(MPI_COMM_WORLD, problem, config); }
    fail_setup_on_last_rank = false;
    testing::expect_closed_before_freed(closed, freed);
    }
}

// Arrays that peers map are allocated in the size the backend maps best
// (cuda: a MiB more for whole numbers of 2 MiB from 512 MiB on): the plan
// asks for it, counts it, and still validates.
TEST(Plan, ArraysPeersMapTakeTheBackendsMappedSize) {
    const int p = world_size();
    if (p < 2) GTEST_SKIP() << "needs peers";
    const Problem problem{"fft3d", {8, 6, 5}, Precision::double_, Direction::forward, p};
    const Config config{"test_noting_frees", "slab_2d1d", LayoutVariant::default_, {p, 1}, {"test_maps_peers"}, false};
    std::size_t plain = 0;
    { plain = Plan(MPI_COMM_WORLD, problem, config).workspace_bytes(); }
    pad_mapped_arrays = true;
    {
        Plan padded(MPI_COMM_WORLD, problem, config);
        const std::size_t extra = padded.workspace_bytes() - plain;
        EXPECT_GT(extra, 0u);
        EXPECT_EQ(extra % 4096, 0u) << extra;
        EXPECT_LE(extra, 4u * 4096) << "work arrays and the send buffer, no more";
        EXPECT_TRUE(validate(padded).passed());
    }
    pad_mapped_arrays = false;
}

}  // namespace
}  // namespace fftune
