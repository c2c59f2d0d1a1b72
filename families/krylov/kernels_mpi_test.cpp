// The krylov kernels and operators against their oracles: curlcurl13 as
// assembled against the curl applied twice; every backend's vector kernels,
// and its folded and one-pass passes, against host loops (cpu_kernels.cpp,
// cuda_kernels.cpp where a GPU is present).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/platform/backend.hpp"
#include "core/testing/world.hpp"
#include "families/krylov/kernels.hpp"
#include "families/krylov/operator.hpp"

namespace fftune::krylov {
namespace {

using testing::world_size;

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
            // ‖r − αq‖²; a zero (p, q) marks the pass broken, and that stays, as does ‖r − αq‖² of the pass before.
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
            const double rr_before = sc.rr;
            for (int c = 0; c < (real ? 1 : 2); ++c) sums[c] = 0;  // (p, q) = 0
            be.copy_from_host(csums.data(), sums.data(), sums.size() * sizeof(double));
            for (int pass : {6, 7}) k->one_pass_scalars(csums.as<double>(), norms, pass, csc.as<OnePassScalars<S>>());
            be.copy_to_host(&sc, csc.data(), sizeof(sc));
            be.synchronize();
            EXPECT_EQ(sc.broken, 7) << what << ": broken at the first of the passes 6, 7";
            EXPECT_EQ(sc.rr, rr_before) << what << ": ‖r‖² stays the last pass's before the breakdown (a step's floor test)";
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

}  // namespace
}  // namespace fftune::krylov
