#include "families/poisson/device_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "core/platform/parallel.hpp"
#include "families/poisson/solver.hpp"

namespace fftune {
FFTUNE_DEFINE_REGISTRY(poisson::PoissonKernels);
}

namespace fftune::poisson {
namespace {

// Row r of axis d's rows: its first element and the stride along d.
struct RowWalk {
    index_t stride[3];
    int a, b;  // the other axes, a the slower
    RowWalk(const GreenTable& g, int d) : stride{g.t[1] * g.t[2], g.t[2], 1}, a(d == 0 ? 1 : 0), b(3 - d - a) {}
    index_t start(const GreenTable& g, index_t r) const { return (r / g.t[b]) * stride[a] + (r % g.t[b]) * stride[b]; }
};

// The CPU oracle: green.cpp's functions, on host memory.
class HostPoissonKernels final : public PoissonKernels {
public:
    void fill_rho(Backend&, const GridArray& a, const TestProblem& t, Precision precision) override {
        if (precision == Precision::single) fill<float>(a, t);
        else fill<double>(a, t);
    }
    PhiErrors phi_errors(Backend&, const GridArray& a, const std::vector<index_t>& planes, const TestProblem& t,
                         Precision precision) override {
        return precision == Precision::single ? errors<float>(a, planes, t) : errors<double>(a, planes, t);
    }
    void green_table(Backend&, double* table, const GreenTable& g) override {
        parallel_for(0, g.t[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = 0; j < g.t[1]; ++j)
                    for (index_t l = 0; l < g.t[2]; ++l) table[(i * g.t[1] + j) * g.t[2] + l] = green_value(g, i, j, l);
        });
    }
    void even_rows(Backend&, double* rows, const double* table, const GreenTable& g, int d, index_t first,
                   index_t count) override {
        const RowWalk w(g, d);
        const index_t len = 2 * (g.t[d] - 1);
        parallel_for(0, count, [&](std::int64_t lo, std::int64_t hi) {
            for (index_t q = lo; q < hi; ++q) {
                const double* row = table + w.start(g, first + q);
                for (index_t j = 0; j < len; ++j)
                    rows[row_place(d, count, len, q, j)] = row[std::min(j, len - j) * w.stride[d]];
            }
        });
    }
    void real_rows(Backend&, double* table, const double* spectra, const GreenTable& g, int d, index_t first,
                   index_t count) override {
        const RowWalk w(g, d);
        const index_t half = g.t[d];  // L/2 + 1
        parallel_for(0, count, [&](std::int64_t lo, std::int64_t hi) {
            for (index_t q = lo; q < hi; ++q) {
                double* row = table + w.start(g, first + q);
                for (index_t k = 0; k < half; ++k) row[k * w.stride[d]] = spectra[2 * row_place(d, count, half, q, k)];
            }
        });
    }
    void fold(Backend&, void* out, const Layout& layout, const double* table, const GreenTable& g, double scale,
              Precision precision) override {
        if (precision == Precision::single) fold_as<float>(static_cast<float*>(out), layout, table, g, scale);
        else fold_as<double>(static_cast<double*>(out), layout, table, g, scale);
    }

private:
    template <class T>
    static T& element(const GridArray& a, index_t x, index_t y, index_t z) {
        const auto& r = a.region;
        return static_cast<T*>(a.data)[r.offset + (x - a.box.lo[0]) * r.stride[0] + (y - a.box.lo[1]) * r.stride[1] +
                                       (z - a.box.lo[2]) * r.stride[2]];
    }
    template <class T>
    static void fill(const GridArray& a, const TestProblem& t) {
        const Box3& b = a.box;
        parallel_for(b.lo[0], b.hi[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t i = lo; i < hi; ++i)
                for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
                    for (index_t l = b.lo[2]; l < b.hi[2]; ++l) element<T>(a, i, j, l) = T(t.rho(i, j, l));
        });
    }
    template <class T>
    static PhiErrors errors(const GridArray& a, const std::vector<index_t>& planes, const TestProblem& t) {
        const Box3& b = a.box;
        PhiErrors all;
        std::mutex mutex;
        parallel_for(0, std::int64_t(planes.size()), [&](std::int64_t lo, std::int64_t hi) {
            PhiErrors part;
            for (auto p = lo; p < hi; ++p) {
                const index_t i = planes[std::size_t(p)];
                for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
                    for (index_t l = b.lo[2]; l < b.hi[2]; ++l) {
                        const double exact = t.phi(i, j, l), e = double(element<T>(a, i, j, l)) - exact;
                        if (!std::isfinite(e)) {
                            part.not_finite = true;  // NaN or infinity: fails, whatever the rest
                            continue;
                        }
                        part.max_error = std::max(part.max_error, std::abs(e));
                        part.max_exact = std::max(part.max_exact, std::abs(exact));
                        part.sum_error2 += e * e;
                        part.sum_exact2 += exact * exact;
                    }
            }
            std::lock_guard<std::mutex> lock(mutex);
            all.max_error = std::max(all.max_error, part.max_error);
            all.max_exact = std::max(all.max_exact, part.max_exact);
            all.not_finite = all.not_finite || part.not_finite;
            all.sum_error2 += part.sum_error2;
            all.sum_exact2 += part.sum_exact2;
        });
        return all;
    }
    template <class T>
    static void fold_as(T* out, const Layout& layout, const double* table, const GreenTable& g, double scale) {
        const Box3& box = layout.box;
        auto folded = [&](int d, index_t k) { return std::min(k, g.m[d] - k); };
        parallel_for(box.lo[0], box.hi[0], [&](std::int64_t lo, std::int64_t hi) {
            for (index_t x = lo; x < hi; ++x)
                for (index_t y = box.lo[1]; y < box.hi[1]; ++y)
                    for (index_t z = box.lo[2]; z < box.hi[2]; ++z)
                        out[layout.offset_of({x, y, z})] = T(
                            scale * table[(folded(0, x) * g.t[1] + folded(1, y)) * g.t[2] + folded(2, z)]);
        });
    }
};

const bool registered = register_variant<PoissonKernels, HostPoissonKernels>("fftw");

// Rows of axis d that fit in `bytes` of rows and spectra (at least one).
index_t chunk_rows(const GreenTable& g, int d, std::size_t bytes) {
    const index_t len = 2 * (g.t[d] - 1);
    const std::size_t per_row = std::size_t(len) * sizeof(double) + std::size_t(g.t[d]) * 2 * sizeof(double);
    return std::max<index_t>(1, index_t(bytes / per_row));
}

}  // namespace

std::unique_ptr<PoissonKernels> kernels_for(const Backend& backend) {
    const auto& r = Registry<PoissonKernels>::instance();
    if (r.contains(backend.name())) return r.create(backend.name());
    if (!backend.device_memory()) return r.create("fftw");
    return nullptr;
}

std::size_t spectral_kernel_on_bytes(const GreenTable& g, std::size_t chunk_bytes) {
    std::size_t chunk = 0;
    for (int d = 0; d < 3; ++d) {
        if (!g.free[d] || g.t[d] < 2) continue;
        const index_t rows = index_t(g.count()) / g.t[d], per_row = 2 * (g.t[d] - 1) + 2 * g.t[d];
        chunk = std::max(chunk, std::size_t(std::min(rows, chunk_rows(g, d, chunk_bytes)) * per_row) * sizeof(double));
    }
    return g.count() * sizeof(double) + 2 * chunk;  // the FFT work area: at most the chunk again
}

namespace {
// Each part's host wall time since the last mark, waited for on the device (where asked).
struct PartClock {
    Backend& be;
    std::map<std::string, double>* parts;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    void mark(const std::string& part) {
        if (!parts) return;
        be.synchronize();
        const auto now = std::chrono::steady_clock::now();
        (*parts)[part] = std::chrono::duration<double, std::milli>(now - last).count();
        last = now;
    }
};

// The table, then a DCT-I pass per free axis, in place in `table` (g.count() values).
void spectral_table_on(Backend& be, PoissonKernels& kernels, const GreenTable& g, double* table,
                       std::size_t chunk_bytes, PartClock& clock) {
    kernels.green_table(be, table, g);
    clock.mark("table");
    for (int d = 0; d < 3; ++d) {
        if (!g.free[d] || g.t[d] < 2) continue;  // a periodic axis: already in Fourier space
        const index_t len = 2 * (g.t[d] - 1), half = g.t[d];
        const index_t rows = g.count() / std::size_t(g.t[d]), per_chunk = std::min(rows, chunk_rows(g, d, chunk_bytes));
        Buffer extended(be, std::size_t(per_chunk) * len * sizeof(double));
        Buffer spectra(be, std::size_t(per_chunk) * half * 2 * sizeof(double));
        // The DCT-I of the N + 1 values: the r2c of their even extension, real (FFTW's REDFT00).
        auto plan_for = [&](index_t count) {
            FftDescriptor desc;
            desc.precision = Precision::double_;
            desc.kind = FftKind::r2c;
            if (rows_interleaved(d)) {  // row_place: value j of row q at j·count + q
                desc.dims = {{len, count, count}};
                desc.batch = {{count, 1, 1}};
            } else {
                desc.dims = {{len, 1, 1}};
                desc.batch = {{count, len, half}};
            }
            desc.in_elements = count * len;
            desc.out_elements = count * half;
            return be.make_fft(desc);
        };
        auto full = plan_for(per_chunk);
        const index_t tail_rows = rows % per_chunk;
        auto tail = tail_rows > 0 ? plan_for(tail_rows) : nullptr;
        const std::size_t work = std::max(full->work_bytes(), tail ? tail->work_bytes() : 0);
        Buffer area;
        if (work > 0) {
            area = Buffer(be, work);
            full->set_work_area(area.data());
            if (tail) tail->set_work_area(area.data());
        }
        const std::string pass = std::string("pass_") + "xyz"[d];
        clock.mark(pass + ".setup");
        for (index_t first = 0; first < rows; first += per_chunk) {
            const index_t count = std::min(per_chunk, rows - first);
            kernels.even_rows(be, extended.as<double>(), table, g, d, first, count);
            (count == per_chunk ? full : tail)->execute(extended.data(), spectra.data());
            kernels.real_rows(be, table, spectra.as<double>(), g, d, first, count);
        }
        be.synchronize();  // the chunk buffers are freed at the end of this pass
        clock.mark(pass + ".rows");
    }
}

// The table of the last spectral kernel built in device memory, kept for the
// next point with the same key (keep_spectral_table_for). Its memory belongs
// to a backend of its own (a Buffer frees through the backend that made it;
// every backend of a process is on one device). Never destroyed by static
// destructors (they run after the CUDA runtime may be gone).
struct KeptTable {
    std::string key;
    std::unique_ptr<Backend> owner;  // before `table`: destroyed after it
    Buffer table;
    // The table first, then its backend (an assignment of a whole KeptTable
    // would end the backend first: a move assigns members in order).
    void release() {
        table = Buffer();
        owner.reset();
        key.clear();
    }
};
KeptTable& kept_table() {
    static auto* kept = new KeptTable;
    return *kept;
}
std::string table_key(const std::string& backend, const Size& n, Boundary b, Kernel k) {
    return fmt::format("{} {} {} {} {}", backend, n[0], n[1], n[2], to_string(b) + "/" + to_string(k));
}
}  // namespace

void spectral_kernel_on(Backend& be, PoissonKernels& kernels, const GreenTable& g, const Layout& layout,
                        Precision precision, void* out, std::size_t chunk_bytes, std::map<std::string, double>* parts) {
    PartClock clock{be, parts};
    Buffer table(be, g.count() * sizeof(double));
    spectral_table_on(be, kernels, g, table.as<double>(), chunk_bytes, clock);
    kernels.fold(be, out, layout, table.as<double>(), g, g.scale(), precision);
    be.synchronize();
    clock.mark("fold");
}

void keep_spectral_table_for(const std::string& backend, const Size& n, Boundary b, Kernel k) {
    KeptTable& kept = kept_table();
    if (kept.owner && kept.key != table_key(backend, n, b, k)) kept.release();
}

std::string build_spectral_kernel(Backend& be, const Size& n, Boundary b, Kernel k, const Layout& layout,
                                  Precision precision, void* out, std::map<std::string, double>* parts) {
    const GreenTable g = green_table(n, b, k);
    KeptTable& kept = kept_table();
    const std::string key = table_key(be.name(), n, b, k);
    std::string why;
    auto kernels = kernels_for(be);
    if (!kernels) why = "no poisson kernels for backend " + be.name();
    else if (auto w = kernels->not_applicable(b)) why = *w;
    else if (be.device_memory() && kept.owner && kept.key == key) {  // the table kept: the fold alone
        PartClock clock{be, parts};
        kernels->fold(be, out, layout, kept.table.as<double>(), g, g.scale(), precision);
        be.synchronize();
        clock.mark("fold");
        return "backend (table kept)";
    } else if (const auto mem = be.device_memory_info()) {
        if (kept.owner) kept.release();  // another table: its memory back first
        const std::size_t need = spectral_kernel_on_bytes(g) + (std::size_t(16) << 20);  // and plans' own
        if (mem->free < need)
            why = fmt::format("its work ({:.2f} GiB) does not fit in the device's {:.2f} GiB free", double(need) / (1 << 30),
                              double(mem->free) / (1 << 30));
    }
    if (!why.empty()) {
        upload_kernel(be, *shared_spectral_kernel(n, b, k, layout), precision, out);
        return "host: " + why;
    }
    if (!be.device_memory()) {  // host memory: rebuilt each time (cheap beside a host point; tests meter it)
        spectral_kernel_on(be, *kernels, g, layout, precision, out, std::size_t(256) << 20, parts);
        return "backend";
    }
    // Device memory: the table in a buffer of its own backend, kept after the fold.
    PartClock clock{be, parts};
    auto owner = Registry<Backend>::instance().create(be.name());
    Buffer table(*owner, g.count() * sizeof(double));
    spectral_table_on(be, *kernels, g, table.as<double>(), std::size_t(256) << 20, clock);
    kernels->fold(be, out, layout, table.as<double>(), g, g.scale(), precision);
    be.synchronize();
    clock.mark("fold");
    kept.release();
    kept.key = key;
    kept.owner = std::move(owner);
    kept.table = std::move(table);
    return "backend";
}

}  // namespace fftune::poisson
