// The CPU backend's Krylov kernels: plain loops split over the rank's host
// threads (core/platform/parallel.hpp); the oracle the other backends' are
// checked against. Reductions sum per-thread partials in thread order.
#include <cmath>
#include <mutex>
#include <vector>

#include "core/platform/parallel.hpp"
#include "families/krylov/kernels.hpp"

namespace fftune {
FFTUNE_DEFINE_REGISTRY(krylov::KernelsT<double>);
FFTUNE_DEFINE_REGISTRY(krylov::KernelsT<std::complex<double>>);
}

namespace fftune::krylov {
namespace {

constexpr std::int64_t grain = 4096;

// Sum of body(lo, hi) over chunks of [0, n), in chunk order.
template <class F>
auto reduce(index_t n, F body) {
    using T = decltype(body(index_t{0}, index_t{0}));
    const int threads = host_threads();
    const index_t chunks = std::max<index_t>(1, std::min<index_t>(threads, (n + grain - 1) / grain));
    std::vector<T> part(static_cast<std::size_t>(chunks), T(0));
    parallel_for(0, chunks, [&](std::int64_t c0, std::int64_t c1) {
        for (std::int64_t c = c0; c < c1; ++c) part[c] = body(c * n / chunks, (c + 1) * n / chunks);
    }, threads);
    T s = 0;
    for (const T& p : part) s += p;
    return s;
}

template <class S>
class CpuKernels final : public KernelsT<S> {
public:
    S spmv(const DeviceMatrixT<S>& a, const S* x, S* y, bool dot) override {
        const index_t rows = a.slab.rows(), plane = a.slab.plane(), nx = a.slab.nx, ny = a.slab.ny, nz = a.slab.nz;
        if constexpr (!std::is_same_v<S, double>)
            if (a.format == Format::matrix_free) throw std::logic_error("matrix_free is poisson7's (real) stencil");
        return reduce(rows, [&](index_t lo, index_t hi) {
            S s = 0;
            for (index_t i = lo; i < hi; ++i) {
                S v = 0;
                switch (a.format) {
                    case Format::csr:
                    case Format::cusparse_csr:  // not applicable here (krylov.cpp); the same arrays
                        for (auto j = a.row_ptr[i]; j < a.row_ptr[i + 1]; ++j) v += a.val[j] * x[a.col[j]];
                        break;
                    case Format::ell:
                        for (int k = 0; k < a.ell_width; ++k) v += a.val[k * rows + i] * x[a.col[k * rows + i]];
                        break;
                    case Format::matrix_free: {
                        const index_t xi = i % nx, yi = (i / nx) % ny, zi = a.slab.z0 + i / plane, own = i + plane;
                        v = S(6) * x[own];
                        if (xi > 0) v -= x[own - 1];
                        if (xi + 1 < nx) v -= x[own + 1];
                        if (yi > 0) v -= x[own - nx];
                        if (yi + 1 < ny) v -= x[own + nx];
                        if (zi > 0) v -= x[own - plane];
                        if (zi + 1 < nz) v -= x[own + plane];
                        break;
                    }
                }
                y[i] = v;
                if (dot) s += x[i + plane] * v;
            }
            return s;
        });
    }
    S dot(const S* a, const S* b, index_t n) override {
        return reduce(n, [&](index_t lo, index_t hi) {
            S s = 0;
            for (index_t i = lo; i < hi; ++i) s += a[i] * b[i];
            return s;
        });
    }
    double norm2(const S* a, index_t n) override {
        return reduce(n, [&](index_t lo, index_t hi) {
            double s = 0;
            for (index_t i = lo; i < hi; ++i) s += std::norm(a[i]);
            return s;
        });
    }
    void conjugate(const S* x, S* y, index_t n) override {
        parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) {
                if constexpr (std::is_same_v<S, double>) y[i] = x[i];
                else y[i] = std::conj(x[i]);
            }
        }, host_threads(), grain);
    }
    void axpy(S alpha, const S* x, S* y, index_t n) override {
        parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) y[i] += alpha * x[i];
        }, host_threads(), grain);
    }
    void xpay(const S* x, S beta, S* y, index_t n) override {
        parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) y[i] = x[i] + beta * y[i];
        }, host_threads(), grain);
    }
    void scal(S a, S* y, index_t n) override {
        parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) y[i] *= a;
        }, host_threads(), grain);
    }
    void scale(const S* inv_diag, const S* r, S* z, index_t n) override {
        parallel_for(0, n, [&](std::int64_t lo, std::int64_t hi) {
            for (auto i = lo; i < hi; ++i) z[i] = inv_diag[i] * r[i];
        }, host_threads(), grain);
    }
    S fused_update(S alpha, const S* p, const S* q, S* x, S* r, const S* inv_diag, S* z, index_t n) override {
        return reduce(n, [&](index_t lo, index_t hi) {
            S s = 0;
            for (index_t i = lo; i < hi; ++i) {
                x[i] += alpha * p[i];
                const S ri = r[i] - alpha * q[i];
                r[i] = ri;
                const S zi = inv_diag ? inv_diag[i] * ri : ri;
                if (inv_diag) z[i] = zi;
                s += ri * zi;
            }
            return s;
        });
    }
    // The fold as its three operations in turn: the oracle of the fused kernels.
    S spmv_folded(const DeviceMatrixT<S>& a, S beta, S alpha, const S* r, const S* inv_diag, const S* p, S* p_next,
                  S* x, S* q) override {
        const index_t plane = a.slab.plane();
        parallel_for(0, a.slab.haloed(), [&](std::int64_t lo, std::int64_t hi) {
            for (auto h = lo; h < hi; ++h) p_next[h] = (inv_diag ? inv_diag[h] * r[h] : r[h]) + beta * p[h];
        }, host_threads(), grain);
        axpy(alpha, p + plane, x, a.slab.rows());
        return spmv(a, p_next, q, true);
    }
    // One pass as its operations in turn: the oracle of the one-pass kernels.
    void spmv_one_pass(const DeviceMatrixT<S>& a, const OnePassScalars<S>* sc, const S* r, const S* q, const S* p,
                       const S* inv_diag, S* r_next, S* q_next, S* p_next, S* x, const S* p2, double* sums) override {
        const index_t plane = a.slab.plane(), rows = a.slab.rows();
        const S alpha = sc->alpha, beta = sc->beta, alpha2 = sc->alpha2, inv_beta2 = sc->inv_beta2;
        parallel_for(0, a.slab.haloed(), [&](std::int64_t lo, std::int64_t hi) {
            for (auto h = lo; h < hi; ++h) {
                r_next[h] = r[h] - alpha * q[h];
                p_next[h] = (inv_diag ? inv_diag[h] * r_next[h] : r_next[h]) + beta * p[h];
            }
        }, host_threads(), grain);
        if (x) {
            axpy(alpha, p + plane, x, rows);
            if (p2 && inv_beta2 != S(0)) {  // p_prev = (p − D^-1 r) / β: p and r are that pass's p' and r'
                parallel_for(plane, plane + rows, [&](std::int64_t lo, std::int64_t hi) {
                    for (auto h = lo; h < hi; ++h)
                        x[h - plane] += alpha2 * ((p[h] - (inv_diag ? inv_diag[h] * r[h] : r[h])) * inv_beta2);
                }, host_threads(), grain);
            } else if (p2) {
                axpy(alpha2, p2 + plane, x, rows);
            }
        }
        OnePassSums<S> s;
        s.pq = spmv(a, p_next, q_next + plane, true);
        const S* rn = r_next + plane;
        const S* qn = q_next + plane;
        const S* d = inv_diag ? inv_diag + plane : nullptr;
        s.rz = reduce(rows, [&](index_t lo, index_t hi) {
            S t = 0;
            for (index_t i = lo; i < hi; ++i) t += rn[i] * (d ? d[i] * rn[i] : rn[i]);
            return t;
        });
        s.qz = reduce(rows, [&](index_t lo, index_t hi) {
            S t = 0;
            for (index_t i = lo; i < hi; ++i) t += qn[i] * (d ? d[i] * rn[i] : rn[i]);
            return t;
        });
        s.qdq = reduce(rows, [&](index_t lo, index_t hi) {
            S t = 0;
            for (index_t i = lo; i < hi; ++i) t += qn[i] * (d ? d[i] * qn[i] : qn[i]);
            return t;
        });
        s.rr = norm2(rn, rows);
        s.rq = reduce(rows, [&](index_t lo, index_t hi) {
            S t = 0;
            for (index_t i = lo; i < hi; ++i) {
                if constexpr (std::is_same_v<S, double>) t += rn[i] * qn[i];
                else t += std::conj(rn[i]) * qn[i];
            }
            return t;
        });
        s.qq = norm2(qn, rows);
        // The backend's layout (kernels.hpp): S's parts of pq, rz, qz, qdq, then the norms where they differ.
        double* o = sums;
        auto put = [&](S v) {
            if constexpr (std::is_same_v<S, double>) *o++ = v;
            else *o++ = v.real(), *o++ = v.imag();
        };
        put(s.pq), put(s.rz), put(s.qz), put(s.qdq);
        if (inv_diag || !std::is_same_v<S, double>) *o++ = std::real(s.rr), put(s.rq), *o++ = std::real(s.qq);
    }
    void one_pass_scalars(const double* sums, bool norms, int pass, OnePassScalars<S>* sc) override {
        const OnePassSums<S> s = one_pass_sums_of<S>(sums, norms);
        const S alpha = s.rz / s.pq, beta = (s.rz - S(2) * alpha * s.qz + alpha * alpha * s.qdq) / s.rz;
        sc->alpha2 = sc->alpha, sc->alpha = alpha;
        sc->inv_beta2 = std::abs(sc->beta) >= one_pass_reconstruct_beta ? S(1) / sc->beta : S(0);
        sc->beta = beta;
        const double rr = std::real(s.rr) - 2 * std::real(alpha * s.rq) + std::norm(alpha) * std::real(s.qq);
        auto finite = [](S v) { return std::isfinite(std::real(v)) && std::isfinite(std::imag(v)); };
        if (sc->broken == 0) {  // rr stays the last pass's before a breakdown (the step's floor test)
            if (!finite(s.pq) || s.pq == S(0) || !finite(s.rz) || !finite(beta)) sc->broken = 1 + pass;
            else sc->rr = rr;
        }
    }
    S update_residual(S alpha, const S* q, S* r, const S* inv_diag, index_t n) override {
        return reduce(n, [&](index_t lo, index_t hi) {
            S s = 0;
            for (index_t i = lo; i < hi; ++i) {
                r[i] -= alpha * q[i];
                s += r[i] * (inv_diag ? inv_diag[i] * r[i] : r[i]);
            }
            return s;
        });
    }
};

const bool registered = register_variant<KernelsT<double>, CpuKernels<double>>("fftw") &&
                        register_variant<KernelsT<complex>, CpuKernels<complex>>("fftw");

}  // namespace
}  // namespace fftune::krylov
