#include "core/engine/validation.hpp"

#include <stdexcept>

#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <mutex>
#include <numbers>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/platform/device_fault.hpp"
#include "core/platform/host_scratch.hpp"
#include "core/platform/parallel.hpp"

namespace fftune {

std::vector<TestMode> test_modes(const std::array<index_t, 3>& n) {
    // Frequencies strictly below Nyquist on each axis (clamped on tiny axes).
    auto clamp = [&](int k, int axis) { return static_cast<int>(std::min<index_t>(k, (n[axis] - 1) / 2)); };
    const std::array<std::array<int, 3>, 3> k{{{1, 2, 3}, {3, 1, 0}, {0, 3, 2}}};
    const double amp[3] = {1.0, 0.6, 0.35}, phase[3] = {0.3, 1.1, 2.0};
    std::vector<TestMode> modes;
    for (int m = 0; m < 3; ++m)
        modes.push_back({{clamp(k[m][0], 0), clamp(k[m][1], 1), clamp(k[m][2], 2)}, amp[m], phase[m]});
    return modes;
}

namespace {
double argument(const TestMode& m, const std::array<index_t, 3>& n, index_t x, index_t y, index_t z) {
    constexpr double two_pi = 2 * std::numbers::pi;
    // k * (2 pi j / N), reduced modulo N first so large grids keep full accuracy.
    auto phase = [&](int k, index_t j, index_t nn) { return two_pi * static_cast<double>((k * j) % nn) / nn; };
    return phase(m.k[0], x, n[0]) + phase(m.k[1], y, n[1]) + phase(m.k[2], z, n[2]) + m.phase;
}
}  // namespace

double test_function(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n,
                     index_t x, index_t y, index_t z) {
    double f = 0;
    for (const auto& m : modes) f += m.amplitude * std::cos(argument(m, n, x, y, z));
    return f;
}

double test_laplacian(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n,
                      index_t x, index_t y, index_t z) {
    double f = 0;
    for (const auto& m : modes) {
        const double k2 = double(m.k[0]) * m.k[0] + double(m.k[1]) * m.k[1] + double(m.k[2]) * m.k[2];
        f -= m.amplitude * k2 * std::cos(argument(m, n, x, y, z));
    }
    return f;
}

namespace {
// Separable evaluation: cos(kx x + ky y + kz z + phase) = Re(e^{i phase} ex[x] ey[y] ez[z])
// with per-axis tables e^{2 pi i k j / n}, so a field costs a few complex
// multiplies per point instead of a cosine per mode.
struct SeparableField {
    std::vector<std::array<std::vector<std::complex<double>>, 3>> tables;  // per mode, per axis
    std::vector<std::complex<double>> weights;                           // amplitude * e^{i phase} (* -|k|^2)
    SeparableField(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n, const Box3& box, bool laplacian) {
        for (const auto& m : modes) {
            std::array<std::vector<std::complex<double>>, 3> t;
            for (int a = 0; a < 3; ++a)
                for (index_t j = box.lo[a]; j < box.hi[a]; ++j)
                    t[a].push_back(std::polar(1.0, 2 * std::numbers::pi * double((m.k[a] * j) % n[a]) / double(n[a])));
            tables.push_back(std::move(t));
            const double k2 = double(m.k[0]) * m.k[0] + double(m.k[1]) * m.k[1] + double(m.k[2]) * m.k[2];
            weights.push_back(std::polar(m.amplitude * (laplacian ? -k2 : 1.0), m.phase));
        }
    }
    // Per mode, weight * ex[i] * ey[j] for one (x, y) row (box-relative)...
    void row(index_t i, index_t j, std::complex<double>* r) const {
        for (std::size_t m = 0; m < tables.size(); ++m) r[m] = weights[m] * tables[m][0][i] * tables[m][1][j];
    }
    // ...so a point costs Re(r * ez[k]) per mode: two multiplies and a subtraction
    // (std::complex's product goes through __muldc3: 2.2 s per 1024^3 field on 16 threads).
    double at(const std::complex<double>* r, index_t k) const {
        double v = 0;
        for (std::size_t m = 0; m < tables.size(); ++m) {
            const std::complex<double>& e = tables[m][2][k];
            v += r[m].real() * e.real() - r[m].imag() * e.imag();
        }
        return v;
    }
};

// Runs plane(x) for every x of the box, x-planes split over the host threads;
// small boxes (under 2^16 points per thread) stay on the calling thread.
void for_x_planes(const Box3& box, const std::function<void(index_t)>& plane) {
    const index_t per_plane = std::max<index_t>(1, (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]));
    parallel_for(box.lo[0], box.hi[0], [&](std::int64_t lo, std::int64_t hi) {
        for (auto x = lo; x < hi; ++x) plane(x);
    }, host_threads(), std::max<index_t>(1, (index_t{1} << 16) / per_plane));
}
}  // namespace

template <class T>
void fill_test_input(T* out, const Layout& layout, const std::array<index_t, 3>& n) {
    const Box3& b = layout.box;
    if (b.empty()) return;
    const SeparableField field(test_modes(n), n, b, false);
    const auto st = layout.strides();
    for_x_planes(b, [&](index_t x) {  // also the first touch of fresh pages, in parallel
        std::vector<std::complex<double>> r(field.tables.size());
        for (index_t y = b.lo[1]; y < b.hi[1]; ++y) {
            field.row(x - b.lo[0], y - b.lo[1], r.data());
            T* row = out + layout.offset_of({x, y, b.lo[2]});
            for (index_t k = 0; k < b.hi[2] - b.lo[2]; ++k) row[k * st[2]] = static_cast<T>(field.at(r.data(), k));
        }
    });
}
template void fill_test_input<float>(float*, const Layout&, const std::array<index_t, 3>&);
template void fill_test_input<double>(double*, const Layout&, const std::array<index_t, 3>&);

template <class T>
void fill_test_input(std::vector<T>& out, const Layout& layout, const std::array<index_t, 3>& n) {
    out.assign(layout.box.count(), T{});
    fill_test_input(out.data(), layout, n);
}
template void fill_test_input<float>(std::vector<float>&, const Layout&, const std::array<index_t, 3>&);
template void fill_test_input<double>(std::vector<double>&, const Layout&, const std::array<index_t, 3>&);

SeparableTerms test_input_terms(const std::array<index_t, 3>& n, const Box3& box) {
    // The last grid's and box's terms are kept: a sweep's points of one size
    // fill and check the same boxes, and making them took 55 µs at 256^3 on
    // 2 ranks (this project's VM), twice per point.
    static std::mutex mutex;
    static std::array<index_t, 3> last_n{};
    static Box3 last_box;
    static std::optional<SeparableTerms> last;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (last && last_n == n && last_box == box) return *last;
    }
    const SeparableField field(test_modes(n), n, box, false);
    SeparableTerms terms;
    for (std::size_t m = 0; m < field.tables.size(); ++m) {
        auto t = field.tables[m];
        for (auto& e : t[0]) e *= field.weights[m];
        terms.axis.push_back(std::move(t));
    }
    std::lock_guard<std::mutex> lock(mutex);
    last_n = n, last_box = box, last = terms;
    return terms;
}

double transform_tolerance(Precision p, index_t points) {
    const double eps = p == Precision::single ? std::numeric_limits<float>::epsilon()
                                              : std::numeric_limits<double>::epsilon();
    return 16.0 * eps * std::max(1.0, std::log2(static_cast<double>(points)));
}

namespace {

// Global max|a - b| / max|b| over all ranks.
struct RelErr {
    double num = 0, den = 0;
    void add(double diff, double ref) {
        // NaN must fail the check, and std::max would drop it.
        if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
        num = std::max(num, diff);
        den = std::max(den, ref);
    }
    void merge(const RelErr& o) {
        num = std::max(num, o.num);
        den = std::max(den, o.den);
    }
    double reduce(MPI_Comm comm) const {
        double local[2] = {num, den}, global[2];
        FFTUNE_MPI_CHECK(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm));
        return global[1] > 0 ? global[0] / global[1] : global[0];
    }
};

// Wavenumbers of the spectrum spot check, (x, y, z) output indices with z in
// 0..n_z/2: k = 0, Nyquist, an empty asymmetric one, and per test mode its own
// (amplitude N/2) and where a mirror along k_x or k_y would move it.
std::vector<std::array<index_t, 3>> spot_wavenumbers(const std::vector<TestMode>& modes,
                                                     const std::array<index_t, 3>& n) {
    auto at = [&](index_t x, index_t y, index_t z) {
        return std::array<index_t, 3>{(x % n[0] + n[0]) % n[0], (y % n[1] + n[1]) % n[1], std::min(z, n[2] / 2)};
    };
    std::vector<std::array<index_t, 3>> k{at(0, 0, 0), at(n[0] / 2, n[1] / 2, n[2] / 2), at(2, -3, n[2] / 2)};
    for (const auto& m : modes) {
        k.push_back(at(m.k[0], m.k[1], m.k[2]));
        k.push_back(at(-m.k[0], m.k[1], m.k[2]));
        k.push_back(at(m.k[0], -m.k[1], m.k[2]));
    }
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
    return k;
}

// This rank's part of the direct DFT X[k] = sum_x f(x) e^{-2 pi i k.x / n} at
// each of `ks`, then sum |f| last: one pass over the box, a row's sum along z
// per distinct k_z, then a multiply per wavenumber.
template <class T>
std::vector<std::complex<double>> partial_dft(const T* f, const Layout& l, const std::array<index_t, 3>& n,
                                              const std::vector<std::array<index_t, 3>>& ks) {
    const Box3& b = l.box;
    std::vector<std::complex<double>> sums(ks.size() + 1);
    if (b.empty()) return sums;
    auto table = [&](int a, index_t k) {  // e^{-2 pi i k j / n} over the box
        std::vector<std::complex<double>> t;
        for (index_t j = b.lo[a]; j < b.hi[a]; ++j)
            t.push_back(std::polar(1.0, -2 * std::numbers::pi * double((k * j) % n[a]) / double(n[a])));
        return t;
    };
    std::vector<index_t> kz;
    for (const auto& k : ks) kz.push_back(k[2]);
    std::sort(kz.begin(), kz.end());
    kz.erase(std::unique(kz.begin(), kz.end()), kz.end());
    std::vector<std::vector<std::complex<double>>> tx, ty, tz;
    std::vector<std::size_t> zi;  // each wavenumber's index in kz
    for (const auto& k : ks) {
        tx.push_back(table(0, k[0]));
        ty.push_back(table(1, k[1]));
        zi.push_back(std::size_t(std::lower_bound(kz.begin(), kz.end(), k[2]) - kz.begin()));
    }
    for (index_t k : kz) tz.push_back(table(2, k));
    const index_t st = l.strides()[2], nz = b.hi[2] - b.lo[2];
    std::mutex mutex;
    for_x_planes(b, [&](index_t x) {
        std::vector<std::complex<double>> plane(ks.size() + 1), row(kz.size());
        double abs_sum = 0;
        for (index_t y = b.lo[1]; y < b.hi[1]; ++y) {
            const T* r = f + l.offset_of({x, y, b.lo[2]});
            std::fill(row.begin(), row.end(), std::complex<double>());
            for (index_t z = 0; z < nz; ++z) {
                const double v = double(r[z * st]);
                abs_sum += std::abs(v);
                for (std::size_t j = 0; j < kz.size(); ++j) row[j] += v * tz[j][z];
            }
            for (std::size_t w = 0; w < ks.size(); ++w)
                plane[w] += row[zi[w]] * tx[w][x - b.lo[0]] * ty[w][y - b.lo[1]];
        }
        plane.back() = abs_sum;
        std::lock_guard<std::mutex> lock(mutex);
        for (std::size_t w = 0; w < plane.size(); ++w) sums[w] += plane[w];
    });
    return sums;
}

// What both validations read off the plan: the grid, its points, the two
// arrays' layouts and the test function's modes.
struct PlanGrid {
    std::array<index_t, 3> n;
    index_t total;
    Layout in_l, out_l;
    std::vector<TestMode> modes;
    explicit PlanGrid(Plan& p)
        : n(p.problem().size), total(n[0] * n[1] * n[2]), in_l(p.input_layout()), out_l(p.output_layout()),
          modes(test_modes(n)) {}
};

template <class T>
ValidationResult validate_typed(Plan& plan) {
    using C = std::complex<T>;
    const PlanGrid grid(plan);
    const auto& [n, total, in_l, out_l, modes] = grid;
    Backend& be = plan.backend();
    MPI_Comm comm = plan.comm();

    // The plan's two arrays, as a timed run has them: the real one holds the
    // input, then each inverse result; the complex one the spectrum, then the
    // Laplacian's. Host code reads them directly where they are host memory,
    // else through host copies in arrays reused across points
    // (core/platform/host_scratch.hpp: no fresh pages per point).
    const std::size_t n_in = in_l.box.count(), n_out = out_l.box.count();
    const bool direct = plan.buffers_on_host();
    Buffer d_real, d_complex;
    T* real = nullptr;
    C* spec = nullptr;
    // Spectrum spot check: this rank's part of the direct DFT at spot_k, less
    // the entries this rank's output holds (summed over ranks: want - got).
    const auto spot_k = spot_wavenumbers(modes, n);
    std::vector<std::complex<double>> spot;
    std::vector<double> spot_owners(spot_k.size());
    // Rank-local allocation and filling, agreed before the first exchange.
    all_or_none(comm, [&] {
        d_real = plan.allocate_input();
        d_complex = plan.allocate_output();
        real = direct ? d_real.as<T>() : host_scratch(ScratchRole::test_input).get<T>(n_in, &be);
        spec = direct ? d_complex.as<C>() : host_scratch(ScratchRole::spectrum).get<C>(n_out, &be);
        fill_test_input(real, in_l, n);
        if (!direct) be.copy_from_host(d_real.data(), real, plan.input_bytes());
        spot = partial_dft(real, in_l, n, spot_k);
    });
    auto real_to_host = [&] { if (!direct) be.copy_to_host(real, d_real.data(), plan.input_bytes()); };
    auto spec_to_host = [&] { if (!direct) be.copy_to_host(spec, d_complex.data(), plan.output_bytes()); };
    auto spec_from_host = [&] { if (!direct) be.copy_from_host(d_complex.data(), spec, plan.output_bytes()); };

    // Each transform's failure is agreed with the rank-local step after it (all_or_none).
    // A lost device ends the job before it (core/platform/device_fault.hpp).
    const auto forward_failed =
        unless_device_lost(be, comm, failure_of([&] { plan.forward(d_real.data(), d_complex.data()); }));

    const double tol = transform_tolerance(plan.problem().precision, total);
    ValidationResult result;
    const Box3& ib = in_l.box;
    const index_t iz = in_l.strides()[2];
    // The real array read back, then max |scale * result - field| / max |field|
    // over all ranks, the field evaluated again (as fill_test_input, rounded
    // to T for the input itself).
    auto compare = [&](const SeparableField& field, double scale, bool rounded, std::exception_ptr transform_failed) {
        RelErr err;
        all_or_none(comm, transform_failed, [&] {
            real_to_host();
            std::mutex mutex;
            for_x_planes(ib, [&](index_t x) {
                RelErr plane;
                std::vector<std::complex<double>> r(field.tables.size());
                for (index_t y = ib.lo[1]; y < ib.hi[1]; ++y) {
                    field.row(x - ib.lo[0], y - ib.lo[1], r.data());
                    const T* row = real + in_l.offset_of({x, y, ib.lo[2]});
                    for (index_t k = 0; k < ib.hi[2] - ib.lo[2]; ++k) {
                        const double v = field.at(r.data(), k);
                        const double ref = rounded ? double(static_cast<T>(v)) : v;
                        plane.add(std::abs(scale * double(row[k * iz]) - ref), std::abs(ref));
                    }
                }
                std::lock_guard<std::mutex> lock(mutex);
                err.merge(plane);
            });
        });
        return err.reduce(comm);
    };
    // Every step between the plan's collective transforms is rank-local:
    // agreed before the next collective call (all_or_none), so that a rank
    // that fails there does not leave the others waiting in it.

    // Whole-world oracle (first, while the spectrum is untouched): serial
    // double-precision transform of the whole grid.
    std::optional<RelErr> orc;
    all_or_none(comm, forward_failed, [&] {
        spec_to_host();
        for (std::size_t w = 0; w < spot_k.size(); ++w) {
            const auto& k = spot_k[w];
            const Box3& held = out_l.box;
            if (k[0] < held.lo[0] || k[0] >= held.hi[0] || k[1] < held.lo[1] || k[1] >= held.hi[1] ||
                k[2] < held.lo[2] || k[2] >= held.hi[2])
                continue;
            const C got = spec[out_l.offset_of(k)];
            spot[w] -= std::complex<double>(got.real(), got.imag());
            spot_owners[w] += 1;
        }
        if (total <= oracle_max_points) {
            std::vector<double> whole(total);
            for (index_t x = 0; x < n[0]; ++x)
                for (index_t y = 0; y < n[1]; ++y)
                    for (index_t z = 0; z < n[2]; ++z)
                        whole[(x * n[1] + y) * n[2] + z] = double(static_cast<T>(test_function(modes, n, x, y, z)));
            const index_t nzc = n[2] / 2 + 1;
            std::vector<std::complex<double>> ref(n[0] * n[1] * nzc);
            fftw_plan p = fftw_plan_dft_r2c_3d(int(n[0]), int(n[1]), int(n[2]), whole.data(),
                                               reinterpret_cast<fftw_complex*>(ref.data()), FFTW_ESTIMATE);
            if (!p) throw std::runtime_error("validation: FFTW could not plan the whole-grid oracle");
            fftw_execute(p);
            fftw_destroy_plan(p);
            orc.emplace();
            double local_max_ref = 0;
            for (const auto& v : ref) local_max_ref = std::max(local_max_ref, std::abs(v));
            orc->den = local_max_ref;  // every rank knows the whole spectrum's scale
            const Box3& ob = out_l.box;
            for (index_t x = ob.lo[0]; x < ob.hi[0]; ++x)
                for (index_t y = ob.lo[1]; y < ob.hi[1]; ++y)
                    for (index_t z = ob.lo[2]; z < ob.hi[2]; ++z) {
                        const auto got = spec[out_l.offset_of({x, y, z})];
                        const auto want = ref[(x * n[1] + y) * nzc + z];
                        orc->add(std::abs(std::complex<double>(got.real(), got.imag()) - want), 0.0);
                    }
        }
    });
    // max_k |want - got| / sum |f| (|X[k]| <= sum |f|); a wavenumber that
    // no rank's output holds, or two do, fails it.
    std::vector<double> spot_sums(3 * spot_k.size() + 1);
    for (std::size_t w = 0; w < spot_k.size(); ++w) {
        spot_sums[3 * w] = spot[w].real();
        spot_sums[3 * w + 1] = spot[w].imag();
        spot_sums[3 * w + 2] = spot_owners[w];
    }
    spot_sums.back() = spot.back().real();
    FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, spot_sums.data(), int(spot_sums.size()), MPI_DOUBLE, MPI_SUM, comm));
    RelErr spot_err;
    spot_err.den = spot_sums.back();
    for (std::size_t w = 0; w < spot_k.size(); ++w)
        spot_err.add(spot_sums[3 * w + 2] == 1 ? std::hypot(spot_sums[3 * w], spot_sums[3 * w + 1])
                                               : std::numeric_limits<double>::infinity(),
                     0.0);
    const Check spot_check =
        make_check("spectrum_spot", spot_err.den > 0 ? spot_err.num / spot_err.den : spot_err.num, tol);

    std::optional<Check> oracle;
    if (orc) {  // the same on every rank: the grid's size decides
        oracle = make_check("oracle_forward", orc->reduce(comm), tol);
    }

    // Round trip: inverse of the spectrum against the input, evaluated again
    // instead of kept. The inverse preserves its input (Plan), so where the
    // arrays are host memory the spectrum below is still the forward's.
    const auto round_trip_failed =
        unless_device_lost(be, comm, failure_of([&] { plan.inverse(d_complex.data(), d_real.data()); }));
    const Check rt_check = make_check(
        "round_trip", compare(SeparableField(modes, n, ib, false), 1.0 / double(total), true, round_trip_failed), tol);

    // Spectral Laplacian: the spectrum times -|k|^2 / N in place, transformed
    // back. Rounding noise at wavenumber k is amplified by |k|^2, so its
    // tolerance scales with |k_max|^2 / |k_signal|^2.
    double kmax2 = 0, ksig2 = std::numeric_limits<double>::max();
    for (int a = 0; a < 3; ++a) kmax2 += double(n[a] / 2) * double(n[a] / 2);
    for (const auto& m : modes) {
        const double k2 = double(m.k[0]) * m.k[0] + double(m.k[1]) * m.k[1] + double(m.k[2]) * m.k[2];
        if (k2 > 0) ksig2 = std::min(ksig2, k2);
    }
    const Box3& ob = out_l.box;
    const index_t oz = out_l.strides()[2];
    all_or_none(comm, [&] {
        for_x_planes(ob, [&](index_t x) {
            for (index_t y = ob.lo[1]; y < ob.hi[1]; ++y) {
                const double kx = double(wavenumber(x, n[0])), ky = double(wavenumber(y, n[1]));
                const index_t row = out_l.offset_of({x, y, ob.lo[2]});
                for (index_t z = ob.lo[2]; z < ob.hi[2]; ++z) {
                    const double kz = double(z);  // r2c keeps 0..Nz/2 along z
                    const double scale = -(kx * kx + ky * ky + kz * kz) / double(total);
                    C& c = spec[row + (z - ob.lo[2]) * oz];
                    c = C(static_cast<T>(scale * c.real()), static_cast<T>(scale * c.imag()));
                }
            }
        });
        spec_from_host();
    });
    const auto laplacian_failed =
        unless_device_lost(be, comm, failure_of([&] { plan.inverse(d_complex.data(), d_real.data()); }));
    const Check lap_check =
        make_check("spectral_laplacian", compare(SeparableField(modes, n, ib, true), 1.0, false, laplacian_failed),
                   tol * std::max(1.0, kmax2 / ksig2));
    result.checks.push_back(lap_check);
    result.checks.push_back(rt_check);
    result.checks.push_back(spot_check);
    if (oracle) result.checks.push_back(*oracle);
    return result;
}

// The spectrum of the test function at output index w (z in 0..n_z/2):
// f = sum_m a_m cos(2 pi k_m.x/n + phi_m) gives X[w] = N/2 sum_m a_m
// (e^{i phi_m} [w = k_m] + e^{-i phi_m} [w = -k_m]), indices mod n. The
// input holds f rounded to T: |X_T - X| <= eps_T/2 sum|f|, far inside the tolerance.
std::complex<double> test_spectrum(const std::vector<TestMode>& modes, const std::array<index_t, 3>& n,
                                   const std::array<index_t, 3>& w) {
    const double half_n = 0.5 * double(n[0] * n[1] * n[2]);
    auto same = [&](const TestMode& m, int sign) {
        for (int a = 0; a < 3; ++a)
            if (((sign * m.k[a]) % n[a] + n[a]) % n[a] != w[a]) return false;
        return true;
    };
    std::complex<double> x;
    for (const auto& m : modes) {
        if (same(m, 1)) x += std::polar(half_n * m.amplitude, m.phase);
        if (same(m, -1)) x += std::polar(half_n * m.amplitude, -m.phase);
    }
    return x;
}

template <class T>
ValidationResult validate_timed_typed(Plan& plan, Buffer& real, Buffer& complex, Direction timed) {
    using C = std::complex<T>;
    const PlanGrid grid(plan);
    const auto& [n, total, in_l, out_l, modes] = grid;
    Backend& be = plan.backend();
    MPI_Comm comm = plan.comm();
    const bool direct = plan.buffers_on_host();
    const double tol = transform_tolerance(plan.problem().precision, total);
    // A plan over every device leaves its timed result in storage of its own
    // (Plan::run_staged): its arrays hold the input and the spectrum only.
    const bool staged = plan.devices() > 1;
    std::exception_ptr failed;
    ValidationResult result;
    auto last = std::chrono::steady_clock::now();
    auto mark = [&](const char* part) {  // the device's work waited for, so each part is its own
        if (!failed) failed = failure_of([&] { be.synchronize(); });
        const auto now = std::chrono::steady_clock::now();
        result.parts_ms.emplace_back(part, std::chrono::duration<double, std::milli>(now - last).count());
        last = now;
    };
    if (timed == Direction::forward && staged)
        failed = unless_device_lost(be, comm, failure_of([&] { plan.forward(real.data(), complex.data()); }));

    // Spectrum spot check against the analytic spectrum, relative to its largest value.
    const auto spot_k = spot_wavenumbers(modes, n);
    std::vector<double> spot_sums(3 * spot_k.size());
    double spot_den = 0;
    for (const auto& k : spot_k) spot_den = std::max(spot_den, std::abs(test_spectrum(modes, n, k)));
    all_or_none(comm, failed, [&] {
        for (std::size_t w = 0; w < spot_k.size(); ++w) {
            const auto& k = spot_k[w];
            if (!out_l.box.contains(k)) continue;
            C got;
            const C* at = complex.as<C>() + out_l.offset_of(k);
            if (direct) got = *at;
            else be.copy_to_host(&got, at, sizeof(C));
            const auto d = test_spectrum(modes, n, k) - std::complex<double>(got.real(), got.imag());
            spot_sums[3 * w] = d.real();
            spot_sums[3 * w + 1] = d.imag();
            spot_sums[3 * w + 2] = 1;
        }
    });
    FFTUNE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, spot_sums.data(), int(spot_sums.size()), MPI_DOUBLE, MPI_SUM, comm));
    RelErr spot_err;
    spot_err.den = spot_den;
    for (std::size_t w = 0; w < spot_k.size(); ++w)
        spot_err.add(spot_sums[3 * w + 2] == 1 ? std::hypot(spot_sums[3 * w], spot_sums[3 * w + 1])
                                               : std::numeric_limits<double>::infinity(),
                     0.0);
    mark("spot");

    // Round trip on sampled planes: the inverse of the spectrum (the timed
    // inverse's own result when the inverse was timed) over N against the
    // field, on planes across the slowest axis of the real array. Each plane
    // is contiguous; the spacing puts one in every overlap chunk (a tapered
    // chunk holds at least 1/(4K) of the planes: spaced at most 1/(8K) apart).
    if (timed == Direction::forward || staged) {
        failed = unless_device_lost(be, comm, failure_of([&] { plan.inverse(complex.data(), real.data()); }));
        mark("transform");
    }
    const Box3& ib = in_l.box;
    const int slow = in_l.order[0];
    const index_t per_plane = ib.empty() ? 0 : ib.count() / ib.extent(slow);
    const index_t per_chunk = plan.config().tapered() ? 8 : 2;
    const auto planes =
        sampled_indices(ib.lo[slow], ib.hi[slow], std::max<index_t>(17, per_chunk * plan.config().overlap + 1));
    RelErr rt;
    all_or_none(comm, failed, [&] {
        if (ib.empty()) return;
        if (!direct) {  // the reference written beside the result and compared there: no plane crosses
            // The sampled planes packed, in the array's order: the field over a
            // box whose slow axis is the planes (its tables at their indices),
            // one fill, the result's planes gathered beside it, one reduction.
            const Precision precision = plan.problem().precision;
            SeparableTerms terms = test_input_terms(n, ib);
            for (auto& t : terms.axis) {
                std::vector<std::complex<double>> rows;
                for (index_t q : planes) rows.push_back(t[slow][std::size_t(q - ib.lo[slow])]);
                t[slow] = std::move(rows);
            }
            Box3 packed = ib;
            packed.lo[slow] = 0, packed.hi[slow] = index_t(planes.size());
            const std::size_t count = planes.size() * std::size_t(per_plane);
            Buffer both(be, 2 * count * sizeof(T));  // the reference, then the result's planes: one allocation
            T* const ref = both.as<T>();
            T* const got = ref + count;
            be.fill_separable(ref, Layout{packed, in_l.order}, terms, precision);
            for (std::size_t p = 0; p < planes.size(); ++p) {
                std::array<index_t, 3> first = ib.lo;
                first[slow] = planes[p];
                const StridedRegion to{{1, 1, per_plane}, {0, 0, 1}, index_t(p) * per_plane},
                    from{{1, 1, per_plane}, {0, 0, 1}, in_l.offset_of(first)};
                be.copy_region(got, to, real.data(), from, sizeof(T));
            }
            const auto d = be.max_difference(got, 1.0 / double(total), ref, index_t(count), precision);
            rt.add(d[0], d[1]);
            return;
        }
        const SeparableField field(modes, n, ib, false);
        T* host = direct ? nullptr : host_scratch(ScratchRole::test_input).get<T>(planes.size() * per_plane, &be);
        std::vector<const T*> at(planes.size());
        for (std::size_t p = 0; p < planes.size(); ++p) {
            std::array<index_t, 3> first = ib.lo;
            first[slow] = planes[p];
            const T* src = real.as<T>() + in_l.offset_of(first);
            if (direct) at[p] = src;
            else be.copy_to_host(host + p * per_plane, src, per_plane * sizeof(T)), at[p] = host + p * per_plane;
        }
        const auto st = in_l.strides();
        std::mutex mutex;
        parallel_for(0, std::int64_t(planes.size()), [&](std::int64_t lo, std::int64_t hi) {
            RelErr part;
            std::vector<std::complex<double>> r(field.tables.size());
            for (auto p = lo; p < hi; ++p) {
                Box3 pb = ib;
                pb.lo[slow] = planes[p];
                pb.hi[slow] = planes[p] + 1;
                const index_t base = in_l.offset_of(pb.lo);
                for (index_t x = pb.lo[0]; x < pb.hi[0]; ++x)
                    for (index_t y = pb.lo[1]; y < pb.hi[1]; ++y) {
                        field.row(x - ib.lo[0], y - ib.lo[1], r.data());
                        const T* row = at[p] + (in_l.offset_of({x, y, pb.lo[2]}) - base);
                        for (index_t z = pb.lo[2]; z < pb.hi[2]; ++z) {
                            const double ref = double(static_cast<T>(field.at(r.data(), z - ib.lo[2])));
                            const double got = double(row[(z - pb.lo[2]) * st[2]]) / double(total);
                            part.add(std::abs(got - ref), std::abs(ref));
                        }
                    }
            }
            std::lock_guard<std::mutex> lock(mutex);
            rt.merge(part);
        }, host_threads());
    });
    result.checks.push_back(make_check("round_trip_sampled", rt.reduce(comm), tol));
    result.checks.push_back(
        make_check("spectrum_spot", spot_err.den > 0 ? spot_err.num / spot_err.den : spot_err.num, tol));
    mark("round_trip");
    return result;
}

}  // namespace

bool validated_by_samples(const Problem& problem) {
    return problem.size[0] * problem.size[1] * problem.size[2] >= sampled_validation_min_points;
}

std::vector<index_t> sampled_indices(index_t lo, index_t hi, index_t count) {
    const index_t len = hi - lo;
    std::vector<index_t> out;
    if (len <= count) {
        for (index_t i = lo; i < hi; ++i) out.push_back(i);
        return out;
    }
    for (index_t j = 0; j < count; ++j) out.push_back(lo + j * (len - 1) / (count - 1));
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

ValidationResult validate_timed(Plan& plan, Buffer& real, Buffer& complex, Direction timed) {
    if (plan.inverse_input() == InverseInput::destroy)
        throw std::invalid_argument("validate_timed() transforms the timed spectrum back: it needs a plan made with "
                                    "InverseInput::preserve, not destroy");
    if (plan.problem().precision == Precision::single) return validate_timed_typed<float>(plan, real, complex, timed);
    return validate_timed_typed<double>(plan, real, complex, timed);
}

ValidationResult validate(Plan& plan) {
    // The round trip and the Laplacian both transform the one spectrum back.
    if (plan.inverse_input() == InverseInput::destroy)
        throw std::invalid_argument("validate() transforms the spectrum back twice: it needs a plan made with "
                                    "InverseInput::preserve, not destroy");
    if (plan.problem().precision == Precision::single) return validate_typed<float>(plan);
    return validate_typed<double>(plan);
}

}  // namespace fftune
