// The krylov family at 1-4 ranks on the CPU backend: every format x fusion x
// preconditioner converges to 1e-8 with the true residual recomputed and the
// SpMV equal to the stencil oracle; the formats hold the operator's nonzeros;
// fused and unfused iterate alike; the halo bytes are the planes a rank shares.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <random>

#include "core/base/registry.hpp"
#include "core/engine/redistribution.hpp"
#include "core/engine/transport.hpp"
#include "core/run/family.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "core/testing/world.hpp"
#include "families/krylov/kernels.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {
namespace {

using json = nlohmann::json;
using testing::world_rank;
using testing::world_size;

Point point(index_t n, int iterations, const std::string& format, const std::string& fusion, const std::string& pre) {
    Point pt;
    pt.problem = {{"kind", "krylov"}, {"ranks", world_size()}, {"size", {n, n, n}}, {"operator", "poisson7"},
                  {"precision", "double"}, {"iterations", {iterations}}};
    pt.config = {{"solver", "cg"}, {"format", format}, {"fusion", fusion}, {"preconditioner", pre}, {"backend", "fftw"}};
    return pt;
}

// The CPU backend under another name, whose kernels throw on the last rank at
// its third SpMV: a failure in the middle of a timed step.
struct FaultyBackend final : testing::ForwardingBackend {
    std::string name() const override { return "krylov_faulty"; }
};
// The CPU kernels under another name; Faulty: the injected failure.
template <bool Faulty>
struct ForwardingKernels final : KrylovKernels {
    std::unique_ptr<KrylovKernels> inner = Registry<KrylovKernels>::instance().create("fftw");
    int spmvs = 0;
    double spmv(const DeviceMatrix& a, const double* x, double* y, bool dot) override {
        if (Faulty && ++spmvs == 3 && world_rank() == world_size() - 1) throw std::runtime_error("injected kernel failure");
        return inner->spmv(a, x, y, dot);
    }
    double dot(const double* a, const double* b, index_t n) override { return inner->dot(a, b, n); }
    void axpy(double al, const double* x, double* y, index_t n) override { inner->axpy(al, x, y, n); }
    void xpay(const double* x, double be, double* y, index_t n) override { inner->xpay(x, be, y, n); }
    void scale(const double* d, const double* r, double* z, index_t n) override { inner->scale(d, r, z, n); }
    double fused_update(double al, const double* p, const double* q, double* x, double* r, const double* d, double* z,
                        index_t n) override {
        return inner->fused_update(al, p, q, x, r, d, z, n);
    }
    double spmv_folded(const DeviceMatrix& a, double be, double al, const double* r, const double* d, const double* p,
                       double* pn, double* x, double* q) override {
        return inner->spmv_folded(a, be, al, r, d, p, pn, x, q);
    }
    double update_residual(double al, const double* q, double* r, const double* d, index_t n) override {
        return inner->update_residual(al, q, r, d, n);
    }
    void spmv_one_pass(const DeviceMatrix& a, const OnePassScalars<double>* sc, const double* r, const double* q,
                       const double* p, const double* d, double* rn, double* qn, double* pn, double* x, const double* p2,
                       double* sums) override {
        if (Faulty && ++spmvs == 3 && world_rank() == world_size() - 1) throw std::runtime_error("injected kernel failure");
        inner->spmv_one_pass(a, sc, r, q, p, d, rn, qn, pn, x, p2, sums);
    }
    void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<double>* sc) override {
        inner->one_pass_scalars(sums, norms, pass, sc);
    }
};
const bool faulty = register_variant<Backend, FaultyBackend>("krylov_faulty") &&
                    register_variant<KrylovKernels, ForwardingKernels<true>>("krylov_faulty");
// The CPU backend claiming device memory: MPI transports stage through host
// mirrors (whole arrays for the *_mpi_type ones), as on a GPU without GPU-aware MPI.
struct StagedBackend final : testing::ForwardingBackend {
    std::string name() const override { return "krylov_staged"; }
    bool device_memory() const override { return true; }
};
const bool staged = register_variant<Backend, StagedBackend>("krylov_staged") &&
                    register_variant<KrylovKernels, ForwardingKernels<false>>("krylov_staged");

struct Ran {
    ValidationResult v;
    json record;
    std::vector<PhaseTraffic> traffic;
};
Ran run(const Point& pt) {
    auto w = family_named("krylov").workload(pt);
    w->setup(MPI_COMM_WORLD);
    w->prepare(MPI_COMM_WORLD);
    w->stage();
    w->step();
    Ran out;
    out.traffic = w->traffic();
    out.v = w->validate(MPI_COMM_WORLD);
    w->annotate(MPI_COMM_WORLD, out.record);
    return out;
}

TEST(Krylov, EveryFormatFusionAndPreconditionerConverges) {
    int ran = 0;
    for (index_t n : {13, 10})  // uneven slabs at 2-4 ranks
        for (const auto& format : format_names())
            for (const char* fusion : {"none", "fused", "folded", "one_pass"})
                for (const char* pre : {"none", "jacobi"}) {
                    const Point pt = point(n, 5, format, fusion, pre);
                    if (format == "cusparse_csr") {  // the library reference: cuda only
                        const auto why = family_named("krylov").not_applicable(pt.problem, pt.config);
                        ASSERT_TRUE(why);
                        EXPECT_EQ(*why, "cusparse_csr multiplies with cuSPARSE: backend cuda only");
                        continue;
                    }
                    ASSERT_FALSE(family_named("krylov").not_applicable(pt.problem, pt.config));
                    const Ran r = run(pt);
                    for (const auto& c : r.v.checks)
                        EXPECT_TRUE(c.passed) << n << " " << format << " " << fusion << " " << pre << " " << c.method
                                              << ": " << c.max_rel_error << " > " << c.tolerance;
                    ASSERT_EQ(r.v.checks.size(), 6u);
                    EXPECT_EQ(r.v.checks[0].method, "true_residual");
                    const int its = r.record["krylov"]["converged_iterations"];
                    EXPECT_GT(its, 5);
                    EXPECT_LT(its, 10 * n);
                    ++ran;
                }
    EXPECT_EQ(ran, 2 * 3 * 4 * 2);
}

Point curlcurl_point(index_t n, const std::string& format, const std::string& fusion, const std::string& pre) {
    Point pt = point(n, 5, format, fusion, pre);
    pt.problem["operator"] = "curlcurl13";
    pt.problem["precision"] = "complex_double";
    pt.config["solver"] = "cocg";
    return pt;
}

// COCG on the complex symmetric curl-curl operator: every format it takes x
// fusion x preconditioner converges, on uneven slabs of 3 n^2-row planes.
TEST(Krylov, CocgOnCurlCurlConverges) {
    int ran = 0;
    std::optional<int> iterations;
    for (index_t n : {9, 7})
        for (const char* format : {"csr", "ell"})
            for (const char* fusion : {"none", "fused", "folded", "one_pass"})
                for (const char* pre : {"none", "jacobi"}) {
                    const Point pt = curlcurl_point(n, format, fusion, pre);
                    ASSERT_FALSE(family_named("krylov").not_applicable(pt.problem, pt.config));
                    const Ran r = run(pt);
                    for (const auto& c : r.v.checks)
                        EXPECT_TRUE(c.passed) << n << " " << format << " " << fusion << " " << pre << " " << c.method
                                              << ": " << c.max_rel_error << " > " << c.tolerance;
                    const int its = r.record["krylov"]["converged_iterations"];
                    EXPECT_GT(its, 5);
                    if (n == 9 && std::string(pre) == "none") {  // formats and fusion iterate alike
                        if (!iterations) iterations = its;
                        EXPECT_EQ(its, *iterations) << format << " " << fusion;
                    }
                    ++ran;
                }
    EXPECT_EQ(ran, 2 * 2 * 4 * 2);
}

// The curl-curl operator as assembled: complex symmetric (A = A^T, not
// Hermitian), 13 nonzeros in an interior row, and equal to its oracle (curl
// applied to the faces and back) on a random vector.
TEST(Krylov, CurlCurlIsComplexSymmetricWith13NonzerosPerRow) {
    if (world_size() != 1) GTEST_SKIP() << "the whole operator on one rank";
    const index_t n = 6;
    const Slab s = slab_of(n, 1, 0, 3);
    const auto m = assemble_curlcurl13(s);
    EXPECT_EQ(m.ell_width, 13);
    std::map<std::pair<std::int64_t, std::int64_t>, complex> a;
    for (index_t r = 0; r < s.rows(); ++r)
        for (auto j = m.row_ptr[r]; j < m.row_ptr[r + 1]; ++j) a[{r, m.col[j] - s.plane()}] = m.val[j];
    bool complex_diagonal = false;
    for (const auto& [rc, v] : a) {
        const auto t = a.find({rc.second, rc.first});
        ASSERT_NE(t, a.end());
        EXPECT_EQ(t->second, v);  // symmetric, unconjugated
        if (rc.first == rc.second && v.imag() > 0) complex_diagonal = true;
    }
    EXPECT_TRUE(complex_diagonal);
    const index_t interior = ((2 * n + 2) * n + 2) * 3;  // Ex at node (2, 2, 2)
    EXPECT_EQ(m.row_ptr[interior + 1] - m.row_ptr[interior], 13);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<complex> x(static_cast<std::size_t>(s.haloed()), 0.0), want(s.rows()), got(s.rows(), 0.0);
    for (index_t i = s.plane(); i < s.plane() + s.rows(); ++i) x[i] = {u(rng), u(rng)};
    curlcurl13_reference(s, x.data(), want.data());
    for (index_t r = 0; r < s.rows(); ++r)
        for (auto j = m.row_ptr[r]; j < m.row_ptr[r + 1]; ++j) got[r] += m.val[j] * x[m.col[j]];
    for (index_t r = 0; r < s.rows(); ++r) ASSERT_LT(std::abs(got[r] - want[r]), 1e-13) << r;
}

// BiCG with r~0 = conj(r0) on a complex symmetric operator: its shadow
// iterates are the conjugates of its own and the iterates are COCG's, at two
// SpMVs per iteration; it converges in COCG's iteration count (to one, by rounding).
TEST(Krylov, BicgAgreesWithCocg) {
    for (const char* pre : {"none", "jacobi"})
        for (const char* format : {"csr", "ell"}) {
            Point b = curlcurl_point(9, format, "none", pre);
            b.config["solver"] = "bicg";
            ASSERT_FALSE(family_named("krylov").not_applicable(b.problem, b.config));
            const Ran bicg = run(b), cocg = run(curlcurl_point(9, format, "none", pre));
            for (const auto& c : bicg.v.checks)
                EXPECT_TRUE(c.passed) << format << " " << pre << " " << c.method << ": " << c.max_rel_error << " > "
                                      << c.tolerance;
            const int a = bicg.record["krylov"]["converged_iterations"], c = cocg.record["krylov"]["converged_iterations"];
            EXPECT_NEAR(a, c, 1) << format << " " << pre;
            // Two SpMVs and two halo exchanges per iteration.
            EXPECT_EQ(bicg.traffic[0].sent_bytes, 2 * cocg.traffic[0].sent_bytes);
        }
    Point fused = curlcurl_point(9, "csr", "fused", "none");
    fused.config["solver"] = "bicg";
    EXPECT_EQ(family_named("krylov").not_applicable(fused.problem, fused.config), "bicg runs unfused (one kernel per operation)");
}

// QMR on the complex symmetric operator: qmr_sym (one SpMV, the symmetric
// Lanczos process) and qmr (two, with the shadow w~ = conj(r0), whose left
// vectors are then the right ones conjugated) converge with every check
// passing, in COCG's iteration count to a few, and qmr in qmr_sym's (to one).
TEST(Krylov, QmrAgreesWithCocg) {
    for (const char* pre : {"none", "jacobi"})
        for (const char* format : {"csr", "ell"}) {
            const Ran cocg = run(curlcurl_point(9, format, "none", pre));
            std::map<std::string, Ran> qmr;
            for (const char* solver : {"qmr_sym", "qmr"}) {
                Point pt = curlcurl_point(9, format, "none", pre);
                pt.config["solver"] = solver;
                ASSERT_FALSE(family_named("krylov").not_applicable(pt.problem, pt.config));
                qmr[solver] = run(pt);
                for (const auto& c : qmr[solver].v.checks)
                    EXPECT_TRUE(c.passed) << solver << " " << format << " " << pre << " " << c.method << ": "
                                          << c.max_rel_error << " > " << c.tolerance;
            }
            const int c = cocg.record["krylov"]["converged_iterations"];
            const int sym = qmr["qmr_sym"].record["krylov"]["converged_iterations"];
            const int general = qmr["qmr"].record["krylov"]["converged_iterations"];
            if (world_rank() == 0)
                std::printf("%s %s: cocg %d, qmr_sym %d, qmr %d iterations\n", format, pre, c, sym, general);
            EXPECT_NEAR(sym, c, std::max(3, c / 10)) << format << " " << pre;
            EXPECT_NEAR(general, sym, 1) << format << " " << pre;
            EXPECT_EQ(qmr["qmr_sym"].traffic[0].sent_bytes, cocg.traffic[0].sent_bytes);
            EXPECT_EQ(qmr["qmr"].traffic[0].sent_bytes, 2 * cocg.traffic[0].sent_bytes);
        }
}

TEST(Krylov, SolverMustSuitTheOperator) {
    Point pt = curlcurl_point(8, "csr", "none", "none");
    pt.config["solver"] = "cg";
    auto why = family_named("krylov").not_applicable(pt.problem, pt.config);
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "cg solves real SPD operators (poisson7); curlcurl13 takes cocg, bicg, qmr, qmr_sym");
    pt = curlcurl_point(8, "matrix_free", "none", "none");
    why = family_named("krylov").not_applicable(pt.problem, pt.config);
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "matrix_free is poisson7's stencil only");
}

// CG's iterates do not depend on the format or on fusing the vector updates
// or folding them into the SpMV (the sums differ in order only): the same
// iteration count, residuals equal to rounding.
TEST(Krylov, FormatsAndFusionIterateAlike) {
    const Ran base = run(point(12, 3, "csr", "none", "none"));
    for (const char* format : {"csr", "ell", "matrix_free"})
        for (const char* fusion : {"none", "fused", "folded", "one_pass"}) {
            const Ran r = run(point(12, 3, format, fusion, "none"));
            EXPECT_EQ(r.record["krylov"]["converged_iterations"], base.record["krylov"]["converged_iterations"])
                << format << " " << fusion;
            const double a = r.record["krylov"]["true_residual"], b = base.record["krylov"]["true_residual"];
            EXPECT_NEAR(a, b, 1e-3 * b) << format << " " << fusion;
        }
}

// Whole operator: 7 n^3 - 6 n^2 nonzeros (each face drops one neighbour per row).
TEST(Krylov, RanksHoldTheWholeOperator) {
    const index_t n = 11;
    const LocalMatrix m = assemble_poisson7(slab_of(n, world_size(), world_rank()));
    long long mine[2] = {m.nnz(), m.slab.rows()}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all[0], 7 * n * n * n - 6 * n * n);
    EXPECT_EQ(all[1], n * n * n);
    for (index_t i = 0; i < m.slab.rows(); ++i)  // ELL holds the CSR rows, padded with zeros
        for (int k = 0; k < m.ell_width; ++k) {
            const auto j = m.row_ptr[i] + k;
            if (j < m.row_ptr[i + 1]) {
                ASSERT_EQ(m.ell_col[k * m.slab.rows() + i], m.col[j]);
                ASSERT_EQ(m.ell_val[k * m.slab.rows() + i], m.val[j]);
            } else {
                ASSERT_EQ(m.ell_val[k * m.slab.rows() + i], 0.0);
            }
        }
}

// Per step, a rank sends and receives one plane to each neighbour per iteration.
TEST(Krylov, HaloTrafficIsThePlanesShared) {
    const int p = world_size(), iterations = 4;
    const index_t n = 9;
    const Ran r = run(point(n, iterations, "ell", "fused", "jacobi"));
    ASSERT_EQ(r.traffic.size(), 4u);  // halo, spmv, update, reduce
    unsigned long long sent = r.traffic[0].sent_bytes, all = 0;
    MPI_Allreduce(&sent, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all, static_cast<unsigned long long>(iterations) * 2 * (p - 1) * n * n * 8);
    EXPECT_EQ(r.traffic[0].received_bytes, r.traffic[0].sent_bytes);
    const Slab s = slab_of(n, p, world_rank());
    EXPECT_EQ(r.record["krylov"]["halo_bytes_per_iteration"].get<std::size_t>(),
              std::size_t((s.below ? 1 : 0) + (s.above ? 1 : 0)) * n * n * 8);
}

// The halo through each of the engine's transports that applies on the CPU
// backend: CG and COCG converge in exactly the iterations and to the true
// residual of the family's own sendrecv exchange (the same planes arrive), on
// uneven slabs, unfused and in one pass (which exchanges q's planes, and r's
// first); at one rank such a point is refused (no halo to exchange).
TEST(Krylov, HaloThroughTheEnginesTransportsMatchesSendrecv) {
    int ran = 0;
    for (const auto& halo : Registry<Transport>::instance().names()) {
        for (const char* op : {"poisson7", "curlcurl13"})
            for (const char* fusion : {"none", "one_pass"}) {
                Point pt = point(11, 5, "ell", fusion, "jacobi");
                pt.problem["operator"] = op;
                if (std::string(op) == "curlcurl13") pt.problem["precision"] = "complex_double", pt.config["solver"] = "cocg";
                const Ran base = run(pt);
                pt.config["halo"] = halo;
                const auto why = family_named("krylov").not_applicable(pt.problem, pt.config);
                if (world_size() == 1) {
                    ASSERT_TRUE(why);
                    EXPECT_EQ(*why, "one rank exchanges no halo: halo " + halo + " would repeat the sendrecv point");
                    continue;
                }
                if (why || Redistribution::not_applicable(halo, *Registry<Backend>::instance().create("fftw"))) continue;
                EXPECT_EQ(family_named("krylov").config_key(pt.config),
                          pt.config.at("solver").get<std::string>() + "/ell/" + fusion + "/jacobi/fftw/" + halo);
                const Ran r = run(pt);
                const std::string what = halo + " " + op + " " + fusion;
                for (const auto& c : r.v.checks) EXPECT_TRUE(c.passed) << what << " " << c.method;
                EXPECT_EQ(r.record["krylov"]["converged_iterations"], base.record["krylov"]["converged_iterations"]) << what;
                EXPECT_EQ(r.record["krylov"]["true_residual"], base.record["krylov"]["true_residual"]) << what;
                EXPECT_EQ(r.traffic[0].sent_bytes, base.traffic[0].sent_bytes) << what;
                ++ran;
            }
    }
    if (world_size() > 1) EXPECT_GE(ran, 8);  // a2a_sync and a2a_mpi_type at least, both operators and fusions
}

// Through a backend whose memory MPI cannot read, every MPI transport stages
// through host memory; the *_mpi_type ones mirror whole arrays, and a halo
// fills only the halo planes of its destination: the interior must come back
// unchanged (it came back as the mirror's stale contents: CG broke down at its
// first iteration on a GPU). Same iterations and residual as sendrecv.
TEST(Krylov, HaloStagedThroughHostMemoryKeepsTheInterior) {
    if (world_size() == 1) GTEST_SKIP() << "one rank exchanges no halo";
    const Ran base = run(point(11, 5, "ell", "fused", "jacobi"));
    int ran = 0;
    for (const auto& halo : Registry<Transport>::instance().names()) {
        Point pt = point(11, 5, "ell", "fused", "jacobi");
        pt.config["backend"] = "krylov_staged";
        pt.config["halo"] = halo;
        if (!Registry<Transport>::instance().create(halo)->uses_mpi() ||  // NCCL, CUDA IPC: a real GPU's
            family_named("krylov").not_applicable(pt.problem, pt.config) ||
            Redistribution::not_applicable(halo, *Registry<Backend>::instance().create("krylov_staged")))
            continue;
        const Ran r = run(pt);
        for (const auto& c : r.v.checks) EXPECT_TRUE(c.passed) << halo << " " << c.method;
        EXPECT_EQ(r.record["krylov"]["converged_iterations"], base.record["krylov"]["converged_iterations"]) << halo;
        EXPECT_EQ(r.record["krylov"]["true_residual"], base.record["krylov"]["true_residual"]) << halo;
        ++ran;
    }
    EXPECT_GE(ran, 4);  // a2a_sync, a2a_mpi_type, p2p_mpi_type, p2p_sync at least
}

// A kernel failing on one rank mid-step stops every rank at the same
// iteration (no rank left waiting in a collective): the failing rank throws
// its own error, the others the breakdown its NaN caused.
// (one_pass: its scalars stay in backend memory, so every rank runs the step's
// passes and fails at its end, naming the pass where the NaN arrived.)
TEST(Krylov, AFailureOnOneRankStopsEveryRank) {
    for (const char* fusion : {"none", "one_pass"}) {
        Point pt = point(10, 20, "csr", fusion, "none");
        pt.config["backend"] = "krylov_faulty";
        auto w = family_named("krylov").workload(pt);
        w->setup(MPI_COMM_WORLD);
        w->prepare(MPI_COMM_WORLD);
        w->stage();
        try {
            w->step();
            ADD_FAILURE() << fusion << ": step finished";
        } catch (const std::exception& e) {
            const std::string want =
                world_rank() == world_size() - 1 ? "injected kernel failure" : "cg broke down at iteration 3 of 20";
            EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << fusion << ": " << e.what();
        }
        MPI_Barrier(MPI_COMM_WORLD);  // every rank got here
    }
}

// Jacobi with a diagonal that is not constant (poisson7's is 6 everywhere, so
// CG's iterates cannot tell a wrong one): scale and the fused update against
// host loops, on every backend with Krylov kernels usable here.
TEST(Krylov, KernelsMatchHostLoops) {
    int checked = 0;
    for (const auto& name : Registry<KrylovKernels>::instance().names()) {
        if (!Registry<Backend>::instance().contains(name) || name.rfind("krylov_", 0) == 0) continue;
        auto be = Registry<Backend>::instance().create(name);
        if (be->unavailable()) continue;
        auto k = Registry<KrylovKernels>::instance().create(name);
        const index_t n = 1000;
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> u(0.5, 2);
        std::vector<double> p(n), q(n), x(n), r(n), d(n);
        for (auto* v : {&p, &q, &x, &r, &d})
            for (auto& e : *v) e = u(rng);
        auto up = [&](const std::vector<double>& v) {
            Buffer b(*be, n * 8);
            be->copy_from_host(b.data(), v.data(), n * 8);
            return b;
        };
        auto down = [&](Buffer& b) {
            std::vector<double> v(n);
            be->copy_to_host(v.data(), b.data(), n * 8);
            be->synchronize();
            return v;
        };
        Buffer bp = up(p), bq = up(q), bx = up(x), br = up(r), bd = up(d), bz = up(r);
        auto* dp = static_cast<double*>(bp.data());
        k->bind(*be, DeviceMatrix{Format::matrix_free, slab_of(10, 1, 0)});
        k->scale(static_cast<double*>(bd.data()), static_cast<double*>(br.data()), static_cast<double*>(bz.data()), n);
        auto z = down(bz);
        for (index_t i = 0; i < n; ++i) ASSERT_DOUBLE_EQ(z[i], d[i] * r[i]) << name;
        const double alpha = 0.3;
        const double rz = k->fused_update(alpha, dp, static_cast<double*>(bq.data()), static_cast<double*>(bx.data()),
                                          static_cast<double*>(br.data()), static_cast<double*>(bd.data()),
                                          static_cast<double*>(bz.data()), n);
        const auto gx = down(bx), gr = down(br), gz = down(bz);
        double want = 0;
        for (index_t i = 0; i < n; ++i) {
            const double xi = x[i] + alpha * p[i], ri = r[i] - alpha * q[i], zi = d[i] * ri;
            ASSERT_NEAR(gx[i], xi, 1e-15 * 4) << name;
            ASSERT_NEAR(gr[i], ri, 1e-15 * 4) << name;
            ASSERT_NEAR(gz[i], zi, 1e-15 * 8) << name;
            want += ri * zi;
        }
        EXPECT_NEAR(rz, want, 1e-12 * want) << name;
        ++checked;
    }
    EXPECT_GE(checked, 1);
}

// The folded and one-pass iterations' kernels against host loops, on a middle
// slab (both halos from neighbours) with every haloed value random and a
// diagonal that is not constant: p_next on every haloed row, x += αp,
// q = A p_next by the operator's oracle, (p_next, q); then r -= αq and
// (r, D^-1 r); one pass: r_next and p_next on every haloed row, x, q_next and
// its seven sums. Every format,
// with and without Jacobi, the stencil at each of its y-rows per thread, on
// every backend with Krylov kernels usable here (cuda: n = 40 takes the
// per-block slots of the two-level reduction in the stencil, atomics in ELL).
template <class S>
void folded_kernels_match_host_loops(const std::string& name, Backend& be) {
    constexpr bool real = std::is_same_v<S, double>;
    const index_t n = real ? 40 : 12;
    const Slab s = slab_of(n, 3, 1, real ? 1 : 3);
    const auto m = [&] {
        if constexpr (real) return assemble_poisson7(s);
        else return assemble_curlcurl13(s);
    }();
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0.5, 2);
    auto random = [&](index_t count) {
        std::vector<S> v(static_cast<std::size_t>(count));
        for (auto& e : v) {
            if constexpr (real) e = u(rng);
            else e = S(u(rng), u(rng) - 1.25);
        }
        return v;
    };
    const auto r = random(s.haloed()), p = random(s.haloed()), d = random(s.haloed()), x = random(s.rows());
    const S alpha = S(0.3), beta = S(0.7);
    auto up = [&](const auto& v) {
        Buffer b(be, v.size() * sizeof(v[0]));
        be.copy_from_host(b.data(), v.data(), b.bytes());
        return b;
    };
    auto down = [&](Buffer& b) {
        std::vector<S> v(b.bytes() / sizeof(S));
        be.copy_to_host(v.data(), b.data(), b.bytes());
        be.synchronize();
        return v;
    };
    Buffer row_ptr = up(m.row_ptr), col = up(m.col), val = up(m.val), ell_col = up(m.ell_col), ell_val = up(m.ell_val);
    const std::vector<std::pair<Format, int>> formats =
        real ? std::vector<std::pair<Format, int>>{{Format::csr, 0}, {Format::ell, 0}, {Format::matrix_free, 0},
                                                   {Format::matrix_free, 1}, {Format::matrix_free, 2}, {Format::matrix_free, 8}}
             : std::vector<std::pair<Format, int>>{{Format::csr, 0}, {Format::ell, 0}};
    for (const auto& [format, stencil_rows] : formats)
        for (const bool jacobi : {false, true}) {
            const std::string what = fmt::format("{} {} {} rows {} jacobi {}", name, real ? "real" : "complex",
                                                 format_names()[int(format)], stencil_rows, jacobi);
            DeviceMatrixT<S> a{format, s};
            a.stencil_rows = stencil_rows;
            a.row_ptr = static_cast<const std::int64_t*>(row_ptr.data());
            a.col = static_cast<const std::int32_t*>(format == Format::ell ? ell_col.data() : col.data());
            a.val = static_cast<const S*>(format == Format::ell ? ell_val.data() : val.data());
            a.ell_width = m.ell_width;
            auto k = Registry<KernelsT<S>>::instance().create(name);
            k->bind(be, a);
            Buffer br = up(r), bp = up(p), bd = up(d), bx = up(x), bn = up(std::vector<S>(r.size(), S(0))),
                   bq = up(std::vector<S>(s.rows(), S(0)));
            const S* dinv = jacobi ? static_cast<const S*>(bd.data()) : nullptr;
            const S pq = k->spmv_folded(a, beta, alpha, static_cast<const S*>(br.data()), dinv,
                                        static_cast<const S*>(bp.data()), bn.as<S>(), bx.as<S>(), bq.as<S>());
            std::vector<S> want_pn(r.size()), want_q(static_cast<std::size_t>(s.rows()));
            for (std::size_t h = 0; h < r.size(); ++h) want_pn[h] = (jacobi ? d[h] * r[h] : r[h]) + beta * p[h];
            if constexpr (real) poisson7_reference(s, want_pn.data(), want_q.data());
            else curlcurl13_reference(s, want_pn.data(), want_q.data());
            const auto got_pn = down(bn), got_x = down(bx), got_q = down(bq);
            S want_pq = 0;
            double scale = 0;
            for (index_t i = 0; i < s.rows(); ++i) {
                const std::size_t h = static_cast<std::size_t>(i + s.plane());
                ASSERT_LT(std::abs(got_x[i] - (x[i] + alpha * p[h])), 1e-14) << what << " x " << i;
                ASSERT_LT(std::abs(got_q[i] - want_q[i]), 1e-13 * (1 + std::abs(want_q[i]))) << what << " q " << i;
                want_pq += want_pn[h] * want_q[i];
                scale += std::abs(want_pn[h] * want_q[i]);
            }
            for (std::size_t h = 0; h < r.size(); ++h) ASSERT_LT(std::abs(got_pn[h] - want_pn[h]), 1e-14) << what << " p " << h;
            EXPECT_LT(std::abs(pq - want_pq), 1e-13 * scale) << what;
            // r -= αq on the own rows (q as computed), (r, D^-1 r).
            S* own_r = br.as<S>() + s.plane();
            const S rz = k->update_residual(alpha, bq.as<S>(), own_r, jacobi ? dinv + s.plane() : nullptr, s.rows());
            const auto got_r = down(br);
            S want_rz = 0;
            scale = 0;
            for (index_t i = 0; i < s.rows(); ++i) {
                const std::size_t h = static_cast<std::size_t>(i + s.plane());
                const S ri = r[h] - alpha * got_q[i];
                ASSERT_LT(std::abs(got_r[h] - ri), 1e-13 * (1 + std::abs(ri))) << what << " r " << i;
                want_rz += ri * (jacobi ? d[h] * ri : ri);
                scale += std::abs(ri * ri) * (jacobi ? std::abs(d[h]) : 1);
            }
            EXPECT_LT(std::abs(rz - want_rz), 1e-13 * scale) << what;

            // One pass: r_next = r - αq and p_next = D^-1 r_next + βp on every haloed row (q random here,
            // haloed), x += αp + α2 p2 and q_next = A p_next on the own rows, q_next's halo rows untouched;
            // the sums.
            const auto qh = random(s.haloed()), p2 = random(s.haloed());
            const S sentinel = S(7), alpha2 = S(-0.2);
            OnePassScalars<S> scalars;
            scalars.alpha = alpha, scalars.beta = beta, scalars.alpha2 = alpha2;
            const bool norms = jacobi || !real;
            Buffer cr = up(r), cq = up(qh), cp = up(p), cp2 = up(p2), cx = up(x), rn = up(std::vector<S>(r.size(), S(0))),
                   qn = up(std::vector<S>(r.size(), sentinel)), pn = up(std::vector<S>(r.size(), S(0))),
                   csc = up(std::vector<OnePassScalars<S>>{scalars}),
                   csums = up(std::vector<double>(static_cast<std::size_t>(one_pass_sum_count<S>(true)), -1.0));
            k->spmv_one_pass(a, csc.as<OnePassScalars<S>>(), cr.as<S>(), cq.as<S>(), cp.as<S>(), dinv, rn.as<S>(),
                             qn.as<S>(), pn.as<S>(), cx.as<S>(), cp2.as<S>(), csums.as<double>());
            std::vector<double> sums(static_cast<std::size_t>(one_pass_sum_count<S>(true)));
            be.copy_to_host(sums.data(), csums.data(), sums.size() * sizeof(double));
            be.synchronize();
            const OnePassSums<S> got = one_pass_sums_of<S>(sums.data(), norms);
            std::vector<S> want_rn(r.size()), want_p1(r.size()), want_q1(static_cast<std::size_t>(s.rows()));
            for (std::size_t h = 0; h < r.size(); ++h) {
                want_rn[h] = r[h] - alpha * qh[h];
                want_p1[h] = (jacobi ? d[h] * want_rn[h] : want_rn[h]) + beta * p[h];
            }
            if constexpr (real) poisson7_reference(s, want_p1.data(), want_q1.data());
            else curlcurl13_reference(s, want_p1.data(), want_q1.data());
            const auto got_rn = down(rn), got_qn = down(qn), got_p1 = down(pn), got_x1 = down(cx);
            for (std::size_t h = 0; h < r.size(); ++h) {
                ASSERT_LT(std::abs(got_rn[h] - want_rn[h]), 1e-14) << what << " one-pass r " << h;
                ASSERT_LT(std::abs(got_p1[h] - want_p1[h]), 1e-14) << what << " one-pass p " << h;
            }
            OnePassSums<S> want;
            double scales[7] = {};
            for (index_t i = 0; i < s.rows(); ++i) {
                const std::size_t h = static_cast<std::size_t>(i + s.plane());
                ASSERT_LT(std::abs(got_x1[i] - (x[i] + alpha * p[h] + alpha2 * p2[h])), 1e-14) << what << " one-pass x " << i;
                const S qi = want_q1[i], ri = want_rn[h], zi = jacobi ? d[h] * ri : ri, dq = jacobi ? d[h] * qi : qi;
                ASSERT_LT(std::abs(got_qn[h] - qi), 1e-13 * (1 + std::abs(qi))) << what << " one-pass q " << i;
                S rq = ri * qi;
                if constexpr (!real) rq = std::conj(ri) * qi;
                const S terms[7] = {want_p1[h] * qi, ri * zi, qi * zi, qi * dq, S(std::norm(ri)), rq, S(std::norm(qi))};
                S* sums[7] = {&want.pq, &want.rz, &want.qz, &want.qdq, &want.rr, &want.rq, &want.qq};
                for (int t = 0; t < 7; ++t) *sums[t] += terms[t], scales[t] += std::abs(terms[t]);
            }
            for (std::size_t h : {std::size_t(0), r.size() - 1})  // a row of each halo plane: not q's to write
                EXPECT_EQ(got_qn[h], sentinel) << what << " one-pass q halo " << h;
            {  // the older direction reconstructed, p_prev = (p − D^-1 r)/β2, instead of read from p2
                const S beta2 = S(0.6);
                OnePassScalars<S> rec = scalars;
                rec.inv_beta2 = S(1) / beta2;
                Buffer sc2 = up(std::vector<OnePassScalars<S>>{rec}), cx2 = up(x), junk = up(random(s.haloed()));
                k->spmv_one_pass(a, sc2.as<OnePassScalars<S>>(), cr.as<S>(), cq.as<S>(), cp.as<S>(), dinv, rn.as<S>(),
                                 qn.as<S>(), pn.as<S>(), cx2.as<S>(), junk.as<S>(), csums.as<double>());
                const auto got_x2 = down(cx2);
                for (index_t i = 0; i < s.rows(); ++i) {
                    const std::size_t h = static_cast<std::size_t>(i + s.plane());
                    const S older = (p[h] - (jacobi ? d[h] * r[h] : r[h])) / beta2;
                    ASSERT_LT(std::abs(got_x2[i] - (x[i] + alpha * p[h] + alpha2 * older)), 1e-13)
                        << what << " one-pass x, p_prev reconstructed " << i;
                }
            }
            const S gots[7] = {got.pq, got.rz, got.qz, got.qdq, got.rr, got.rq, got.qq};
            const S wants[7] = {want.pq, want.rz, want.qz, want.qdq, want.rr, want.rq, want.qq};
            for (int t = 0; t < 7; ++t) EXPECT_LT(std::abs(gots[t] - wants[t]), 1e-13 * scales[t]) << what << " one-pass sum " << t;

            // The scalars from these sums: α = rz/pq, β = (rz − 2α qz + α² qdq)/rz, α2 ← the α before,
            // ‖r − αq‖²; a zero (p, q) marks the pass broken, and that stays.
            k->one_pass_scalars(csums.as<double>(), norms, 4, csc.as<OnePassScalars<S>>());
            OnePassScalars<S> sc;
            be.copy_to_host(&sc, csc.data(), sizeof(sc));
            be.synchronize();
            const S a1 = want.rz / want.pq, b1 = (want.rz - S(2) * a1 * want.qz + a1 * a1 * want.qdq) / want.rz;
            const double rr1 = std::real(want.rr) - 2 * std::real(a1 * want.rq) + std::norm(a1) * std::real(want.qq);
            EXPECT_LT(std::abs(sc.alpha - a1), 1e-12 * std::abs(a1)) << what;
            EXPECT_LT(std::abs(sc.beta - b1), 1e-9 * (1 + std::abs(b1))) << what;
            EXPECT_EQ(sc.alpha2, alpha) << what;
            EXPECT_LT(std::abs(sc.inv_beta2 - S(1) / beta), 1e-15) << what << ": 1/β of the pass before";
            EXPECT_LT(std::abs(sc.rr - rr1), 1e-9 * std::real(want.rr)) << what;
            EXPECT_EQ(sc.broken, 0) << what;
            for (int c = 0; c < (real ? 1 : 2); ++c) sums[c] = 0;  // (p, q) = 0
            be.copy_from_host(csums.data(), sums.data(), sums.size() * sizeof(double));
            for (int pass : {6, 7}) k->one_pass_scalars(csums.as<double>(), norms, pass, csc.as<OnePassScalars<S>>());
            be.copy_to_host(&sc, csc.data(), sizeof(sc));
            be.synchronize();
            EXPECT_EQ(sc.broken, 7) << what << ": broken at the first of the passes 6, 7";
        }
}
TEST(Krylov, FoldedAndOnePassKernelsMatchHostLoops) {
    int checked = 0;
    for (const auto& name : Registry<KrylovKernels>::instance().names()) {
        if (!Registry<Backend>::instance().contains(name) || name.rfind("krylov_", 0) == 0) continue;
        auto be = Registry<Backend>::instance().create(name);
        if (be->unavailable()) continue;
        folded_kernels_match_host_loops<double>(name, *be);
        if (Registry<KernelsT<complex>>::instance().contains(name)) folded_kernels_match_host_loops<complex>(name, *be);
        ++checked;
    }
    EXPECT_GE(checked, 1);
}

TEST(Krylov, TooFewPlanesIsNotApplicable) {
    const Point pt = point(3, 5, "csr", "none", "none");
    const auto why = family_named("krylov").not_applicable(pt.problem, pt.config);
    if (world_size() > 3) {
        ASSERT_TRUE(why);
        EXPECT_NE(why->find("3 z-planes over 4 ranks"), std::string::npos) << *why;
    } else {
        EXPECT_FALSE(why);
    }
}

}  // namespace
}  // namespace fftune::krylov
