// GPU backend: device memory, strided copies as CUDA kernels (cuda_copy.cu), cuFFT plans with
// the advanced data layout, CUDA-event clocks, all on one stream per backend.
// One process per GPU: the device is chosen by the node-local MPI rank.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/engine/fft_descriptor.hpp"
#include "core/platform/block_pool.hpp"
#include "core/platform/cuda_check.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/host_memory.hpp"
#include "core/platform/settings.hpp"
#include "core/base/registry.hpp"
#include "variants/backends/cuda_copy.hpp"
#include "variants/backends/cufftxt.hpp"

#if FFTUNE_CUFFT_STORE_ASIDE
#include <cufftXt.h>

#include "variants/backends/cufft_store_aside.hpp"
// LTO-IR of variants/backends/cufft_store_aside.cu (embedded by CMake).
extern const unsigned char fftune_cufft_store_aside_fatbin[];
extern const std::size_t fftune_cufft_store_aside_fatbin_size;
#endif

namespace fftune {
namespace {

using fftune::check;
void check(cufftResult r, const char* what) {
    if (r != CUFFT_SUCCESS) throw std::runtime_error(fmt::format("{}: cuFFT error {}", what, static_cast<int>(r)));
}

// Device of this process: the node-local rank (from the launcher's environment,
// so no collective call is needed) modulo the visible devices.
int select_device() {
    static const int device = [] {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
        int local = 0;
        for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"})
            if (const char* v = std::getenv(var)) {
                local = std::atoi(v);
                break;
            }
        return local % count;
    }();
    if (device >= 0) check(cudaSetDevice(device), "cudaSetDevice");
    return device;
}

// cuFFT advanced layout: element (i_1..i_r) of batch b sits at
//   b * dist + sum_k i_k * stride * prod(embed[k+1..r-1]).
// A descriptor maps onto it when its transformed strides nest that way; of the
// batch dimensions, mergeable ones are merged, the largest becomes the cuFFT
// batch and the rest are looped over (thesis Tables 4.1-4.3).
struct Advanced {
    std::vector<long long> n, inembed, onembed;
    long long istride = 1, ostride = 1, idist = 1, odist = 1, batch = 1;
    std::vector<FftDim> loops;  // outer batch dimensions executed one call per index
};

Advanced advanced_layout(const FftDescriptor& d) {
    Advanced a;
    const int r = static_cast<int>(d.dims.size());
    const bool real_in = d.kind == FftKind::r2c, real_out = d.kind == FftKind::c2r;
    const bool halved = real_in || real_out;
    // Logical extents of each transformed dim on the input and output side.
    auto extent = [&](int k, bool input) {
        const long long n = d.dims[k].n;
        if (halved && k == r - 1 && ((input && real_out) || (!input && real_in))) return n / 2 + 1;
        return n;
    };
    a.istride = d.dims[r - 1].in_stride;
    a.ostride = d.dims[r - 1].out_stride;
    a.n.resize(r), a.inembed.resize(r), a.onembed.resize(r);
    for (int k = 0; k < r; ++k) a.n[k] = d.dims[k].n;
    a.inembed[0] = extent(0, true);
    a.onembed[0] = extent(0, false);
    for (int k = r - 1; k >= 1; --k) {
        const long long in_ratio = d.dims[k - 1].in_stride / d.dims[k].in_stride;
        const long long out_ratio = d.dims[k - 1].out_stride / d.dims[k].out_stride;
        if (d.dims[k - 1].in_stride % d.dims[k].in_stride || d.dims[k - 1].out_stride % d.dims[k].out_stride)
            throw std::logic_error("FFT dims do not nest; cuFFT's advanced layout cannot express them");
        a.inembed[k] = in_ratio;
        a.onembed[k] = out_ratio;
        if (in_ratio < extent(k, true) || out_ratio < extent(k, false))
            throw std::logic_error("FFT dims overlap; cuFFT's advanced layout cannot express them");
    }
    // Merge batch dims (slow -> fast): outer.stride == inner.n * inner.stride on both sides.
    std::vector<FftDim> batch;
    for (const FftDim& b : d.batch) {
        if (b.n == 1) continue;
        if (!batch.empty()) {
            FftDim& last = batch.back();
            if (last.in_stride == b.n * b.in_stride && last.out_stride == b.n * b.out_stride) {
                last = {last.n * b.n, b.in_stride, b.out_stride};
                continue;
            }
        }
        batch.push_back(b);
    }
    if (batch.empty()) return a;
    // cuFFT takes one batch dim; the others are looped over. Take the one with
    // the smallest input stride, so neighbouring transforms read neighbouring
    // memory (coalesced), not the longest: on a 1024^3 pencil y-FFT (batch dims
    // x, stride 1024*513, and z, stride 1) batching x took 50 ms on an H200,
    // while slices that made z the longer dim took 18 ms.
    const auto chosen = std::min_element(batch.begin(), batch.end(), [](auto& x, auto& y) {
        return x.in_stride != y.in_stride ? x.in_stride < y.in_stride : x.n > y.n;
    });
    a.batch = chosen->n;
    a.idist = chosen->in_stride;
    a.odist = chosen->out_stride;
    for (auto it = batch.begin(); it != batch.end(); ++it)
        if (it != chosen) a.loops.push_back(*it);
    return a;
}

// One cuFFT call sequence: a plan in the advanced layout, executed once per
// index of the batch dimensions cuFFT cannot take.
class CufftPass {
public:
    // `aside`: the descriptor's StoreAside for this pass, stored by a cuFFT LTO
    // store callback, for outputs of fewer than 2^32 elements.
    CufftPass(const FftDescriptor& d, cudaStream_t stream, const std::optional<StoreAside>& aside = std::nullopt)
        : layout_(advanced_layout(d)), stream_(stream), desc_(d) {
        desc_.store_aside.reset();
        check(cudaGetDevice(&device_), "cudaGetDevice");
        const bool single = d.precision == Precision::single;
        switch (d.kind) {  // cuFFT's own type codes per kind and precision
            case FftKind::r2c: type_ = single ? CUFFT_R2C : CUFFT_D2Z; break;
            case FftKind::c2r: type_ = single ? CUFFT_C2R : CUFFT_Z2D; break;
            default: type_ = single ? CUFFT_C2C : CUFFT_Z2Z; break;
        }
        check(cufftCreate(&plan_), "cufftCreate");
        check(cufftSetStream(plan_, stream), "cufftSetStream");
        // The Plan hands every stage one shared work area (FftPlan::work_bytes).
        check(cufftSetAutoAllocation(plan_, 0), "cufftSetAutoAllocation");
#if FFTUNE_CUFFT_STORE_ASIDE
        if (aside && d.kind != FftKind::c2r && d.out_elements < (index_t{1} << 32)) {
            const FftuneStoreAside info = store_aside_info(*aside);
            check(cudaMalloc(&aside_, sizeof info), "cudaMalloc");
            check(cudaMemcpy(aside_, &info, sizeof info, cudaMemcpyHostToDevice), "cudaMemcpy");
            check(cufftXtSetJITCallback(plan_, single ? "fftune_store_aside_c" : "fftune_store_aside_z",
                                        fftune_cufft_store_aside_fatbin, fftune_cufft_store_aside_fatbin_size,
                                        single ? CUFFT_CB_ST_COMPLEX : CUFFT_CB_ST_COMPLEX_DOUBLE,
                                        reinterpret_cast<void**>(&aside_)),
                  "cufftXtSetJITCallback");
        }
#else
        (void)aside;
#endif
        check(cufftMakePlanMany64(plan_, static_cast<int>(layout_.n.size()), layout_.n.data(), layout_.inembed.data(),
                                  layout_.istride, layout_.idist, layout_.onembed.data(), layout_.ostride, layout_.odist,
                                  type_, layout_.batch, &work_),
              "cufftMakePlanMany64");
        in_elem_ = (d.kind == FftKind::r2c ? 1 : 2) * (single ? 4 : 8);
        out_elem_ = (d.kind == FftKind::c2r ? 1 : 2) * (single ? 4 : 8);
    }
    ~CufftPass() {
        drop_graphs();
        cufftDestroy(plan_);
        if (aside_) cudaFree(aside_);
        for (cudaStream_t b : branches_) cudaStreamDestroy(b);
        for (cudaEvent_t e : joins_) cudaEventDestroy(e);
        if (fork_) cudaEventDestroy(fork_);
    }
    CufftPass(const CufftPass&) = delete;
    CufftPass& operator=(const CufftPass&) = delete;

    std::size_t work_bytes() const { return work_; }
    bool stores_aside() const { return aside_ != nullptr; }
    // The callback reads its arrays from device memory: graphs stay valid.
    void set_store_arrays(void* output, void* target) {
        if (!aside_) throw std::logic_error("this cuFFT pass stores nothing aside");
        void* arrays[2] = {output, target};
        check(cudaMemcpy(&aside_->base, arrays, sizeof arrays, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    void set_work_area(void* area) {
        if (area == area_) return;  // a pooled pass given the area it had: its graphs still hold
        drop_graphs();  // they hold the old area
        check(cufftSetWorkArea(plan_, area), "cufftSetWorkArea");
        area_ = area;
    }

    // PassPool: whether another plan may take this pass (a store aside holds
    // its plan's arrays), whether it is the one `d` asks for on `device`, and
    // its stream handed over. A graph does not hold the stream it was
    // captured on, so the graphs stay; they are replayed only for the same
    // (in, out) pair and area.
    bool reusable() const { return aside_ == nullptr; }
    // A c2c pass serves either direction: cuFFT takes it per call (execute).
    bool serves(const FftDescriptor& d, int device) const {
        FftDescriptor same = d;
        same.queue = desc_.queue;
        if (is_c2c(same.kind) && is_c2c(desc_.kind)) same.kind = desc_.kind;
        return device == device_ && same_fft_plan(desc_, same);
    }
    void attach(cudaStream_t stream) {
        stream_ = stream;
        check(cufftSetStream(plan_, stream), "cufftSetStream");
    }
    void detach() {  // its plan's stream goes with the plan
        cudaStreamSynchronize(stream_);
        stream_ = nullptr;
        cufftSetStream(plan_, nullptr);
    }

    // A looped pass replays a CUDA graph of its cuFFT calls, one per (in, out)
    // pair and direction: that saves the launch gap between calls (measured
    // on an H200: variants/backends/README.md), and runs them on parallel
    // branches (run_branched). `direction`: CUFFT_FORWARD or CUFFT_INVERSE,
    // read by c2c passes only.
    void execute(void* in, void* out, int direction) {
        if (loop_count() < 2 || !graphs_work_ || capturing()) return run_loops(in, out, direction);  // inside a caller's capture: record the calls there
        for (const Graph& g : graphs_)
            if (g.in == in && g.out == out && g.direction == direction)
                return check(cudaGraphLaunch(g.exec, stream_), "cudaGraphLaunch");
        if (graphs_.size() == kGraphs) {  // the oldest pair goes, once its last replay is done
            check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
            cudaGraphExecDestroy(graphs_.front().exec);
            graphs_.erase(graphs_.begin());
        }
        cudaGraphExec_t exec = capture(in, out, direction);
        if (!exec) {
            graphs_work_ = false;  // this plan's calls cannot be captured: issue them directly
            return run_loops(in, out, direction);
        }
        graphs_.push_back({in, out, direction, exec});
        check(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
    }

private:
    // (in, out) pairs kept: the timed buffers and validation's, for each of
    // up to 16 overlap slices that share the plan (Plan::Overlap); dropping
    // one waits for the stream, which must not happen inside a timed run.
    static constexpr std::size_t kGraphs = 64;
    struct Graph {
        void *in, *out;
        int direction;
        cudaGraphExec_t exec;
    };
    long long loop_count() const {
        long long n = 1;
        for (const FftDim& l : layout_.loops) n *= l.n;
        return n;
    }
    bool capturing() const {
        cudaStreamCaptureStatus status{};
        check(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
        return status != cudaStreamCaptureStatusNone;
    }
    // The loop's calls recorded, not run; nullptr when they cannot be captured.
    cudaGraphExec_t capture(void* in, void* out, int direction) {
        if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();  // the direct calls report errors of their own
            return nullptr;
        }
        bool recorded = true;
        try {
            if (work_ == 0 && branch_count() > 1) run_branched(in, out, direction);
            else run_loops(in, out, direction);
        } catch (const std::exception&) {
            recorded = false;
        }
        cudaGraph_t graph = nullptr;
        const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
        cudaGraphExec_t exec = nullptr;
        const bool ok = recorded && end == cudaSuccess && graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        if (graph) cudaGraphDestroy(graph);
        if (!ok) {
            cudaGetLastError();  // clear the failed capture's error; the direct calls report errors of their own
            return nullptr;
        }
        return exec;
    }
    void drop_graphs() {
        if (graphs_.empty()) return;
        cudaStreamSynchronize(stream_);
        for (const Graph& g : graphs_) cudaGraphExecDestroy(g.exec);
        graphs_.clear();
    }

    // Each call of the loop on its planes of `in` and `out`.
    template <class F>
    void for_each_call(void* in, void* out, F&& call) const {
        // Loop over the batch dimensions cuFFT cannot take (at most two).
        const auto& L = layout_.loops;
        const long long n0 = L.size() > 0 ? L[0].n : 1, n1 = L.size() > 1 ? L[1].n : 1;
        for (long long a = 0; a < n0; ++a)
            for (long long b = 0; b < n1; ++b) {
                long long ioff = 0, ooff = 0;
                if (L.size() > 0) ioff += a * L[0].in_stride, ooff += a * L[0].out_stride;
                if (L.size() > 1) ioff += b * L[1].in_stride, ooff += b * L[1].out_stride;
                call(static_cast<char*>(in) + ioff * in_elem_, static_cast<char*>(out) + ooff * out_elem_);
            }
    }
    void run_loops(void* in, void* out, int direction) {
        for_each_call(in, out, [&](void* a, void* b) { run(a, b, direction); });
    }
    // Parallel chains of a looped pass's graph. On an H200, 1, 4, 8, 16 chains:
    // 512^3 pencil total 5.60, 3.42, 3.00, 2.89 ms; 1024^3 the same from 4 on.
    static constexpr long long kBranches = 16;
    long long branch_count() const { return std::min(kBranches, loop_count()); }
    // While capturing: the loop's calls touch disjoint planes and, with no work
    // area, share nothing, so they go round-robin onto parallel branches
    // (fork and join by events) instead of one chain: one call of a 1024^3
    // pencil y-FFT is only 513 transforms, too few to fill the GPU alone.
    void run_branched(void* in, void* out, int direction) {
        if (branches_.empty()) {
            check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
            for (long long k = 0; k < branch_count(); ++k) {
                branches_.push_back(nullptr);
                check(cudaStreamCreateWithFlags(&branches_.back(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
                joins_.push_back(nullptr);
                check(cudaEventCreateWithFlags(&joins_.back(), cudaEventDisableTiming), "cudaEventCreateWithFlags");
            }
        }
        check(cudaEventRecord(fork_, stream_), "cudaEventRecord");
        for (cudaStream_t b : branches_) check(cudaStreamWaitEvent(b, fork_, 0), "cudaStreamWaitEvent");
        struct Restore {  // the plan's stream again, also when a call throws
            CufftPass& p;
            ~Restore() { cufftSetStream(p.plan_, p.stream_); }
        } restore{*this};
        std::size_t i = 0;
        for_each_call(in, out, [&](void* a, void* b) {
            check(cufftSetStream(plan_, branches_[i++ % branches_.size()]), "cufftSetStream");
            run(a, b, direction);
        });
        for (std::size_t k = 0; k < branches_.size(); ++k) {
            check(cudaEventRecord(joins_[k], branches_[k]), "cudaEventRecord");
            check(cudaStreamWaitEvent(stream_, joins_[k], 0), "cudaStreamWaitEvent");
        }
    }
    void run(void* in, void* out, int direction) {
        switch (type_) {
            case CUFFT_R2C: check(cufftExecR2C(plan_, (cufftReal*)in, (cufftComplex*)out), "cufftExecR2C"); break;
            case CUFFT_D2Z: check(cufftExecD2Z(plan_, (cufftDoubleReal*)in, (cufftDoubleComplex*)out), "cufftExecD2Z"); break;
            case CUFFT_C2R: check(cufftExecC2R(plan_, (cufftComplex*)in, (cufftReal*)out), "cufftExecC2R"); break;
            case CUFFT_Z2D: check(cufftExecZ2D(plan_, (cufftDoubleComplex*)in, (cufftDoubleReal*)out), "cufftExecZ2D"); break;
            case CUFFT_C2C:
                check(cufftExecC2C(plan_, (cufftComplex*)in, (cufftComplex*)out, direction), "cufftExecC2C");
                break;
            default:
                check(cufftExecZ2Z(plan_, (cufftDoubleComplex*)in, (cufftDoubleComplex*)out, direction),
                      "cufftExecZ2Z");
        }
    }
    Advanced layout_;
    cudaStream_t stream_;
    FftDescriptor desc_;  // without the store aside
    int device_ = -1;
    void* area_ = nullptr;
    std::vector<Graph> graphs_;
    bool graphs_work_ = true;
    std::vector<cudaStream_t> branches_;  // the graphs' parallel chains (run_branched)
    std::vector<cudaEvent_t> joins_;
    cudaEvent_t fork_ = nullptr;
    cufftType type_{};
    cufftHandle plan_{};
#if FFTUNE_CUFFT_STORE_ASIDE
    FftuneStoreAside* aside_ = nullptr;  // device memory: the callback's caller info
    // Output coordinates (memory order, from the output box's corner) to target offsets.
    static FftuneStoreAside store_aside_info(const StoreAside& a) {
        FftuneStoreAside info{};
        const auto ts = a.target.strides();
        long long offset = 0;
        for (int i = 0; i < 3; ++i) {
            const int axis = a.out.order[i];
            info.lo[i] = static_cast<unsigned>(a.box.lo[axis] - a.out.box.lo[axis]);
            info.hi[i] = static_cast<unsigned>(a.box.hi[axis] - a.out.box.lo[axis]);
            info.stride[i] = ts[axis];
            offset += (a.out.box.lo[axis] - a.target.box.lo[axis]) * ts[axis];
        }
        info.e1 = static_cast<unsigned>(a.out.box.extent(a.out.order[1]));
        info.e2 = static_cast<unsigned>(a.out.box.extent(a.out.order[2]));
        info.offset = offset;
        return info;
    }
#else
    void* aside_ = nullptr;
#endif
    std::size_t in_elem_ = 0, out_elem_ = 0;
    std::size_t work_ = 0;
};

// The cuFFT calls of one stage. A multi-axis c2c whose innermost axis (the last
// dim, which cuFFT's layout nests fastest) is strided on both sides runs as one
// 1D pass per axis (the first in -> out, the rest in place on out): one
// multi-axis plan over that strided axis was several times slower. Where one
// side has that axis contiguous (realigned layouts) one plan stays: there the
// first pass would transpose while it transforms, and passes were mostly
// slower. Measurements: variants/backends/README.md.
std::vector<FftDescriptor> cufft_passes(const FftDescriptor& d) {
    const bool complex = d.kind == FftKind::c2c_forward || d.kind == FftKind::c2c_backward;
    const FftDim& fastest = d.dims.back();
    if (!complex || d.dims.size() < 2 || fastest.in_stride == 1 || fastest.out_stride == 1) return {d};
    std::vector<FftDescriptor> passes;
    for (std::size_t k = 0; k < d.dims.size(); ++k) {
        const bool first = k == 0;
        auto side = [&](FftDim dim) { return first ? dim : FftDim{dim.n, dim.out_stride, dim.out_stride}; };
        FftDescriptor p = d;
        p.dims = {side(d.dims[k])};
        p.batch.clear();
        for (const FftDim& b : d.batch) p.batch.push_back(side(b));
        for (std::size_t j = 0; j < d.dims.size(); ++j)
            if (j != k) p.batch.push_back(side(d.dims[j]));
        // advanced_layout merges neighbours in slow -> fast order.
        std::sort(p.batch.begin(), p.batch.end(), [](const FftDim& a, const FftDim& b) {
            return a.in_stride != b.in_stride ? a.in_stride > b.in_stride : a.out_stride > b.out_stride;
        });
        if (!first) p.in_elements = d.out_elements;
        passes.push_back(std::move(p));
    }
    return passes;
}

// A stage whose output orders the axes differently from its input (the
// realigned layouts) can be slow as one cuFFT plan, which then reads or writes
// a transposed, strided array. Such a stage goes through a scratch array and a
// tiled strided copy instead:
// - r2c and multi-axis c2c: FFT into scratch in the input's axis order, then
//   copy into the output order (up to several times faster than one plan).
// - c2r: copy the input into the output's axis order first, then the c2r, whose
//   halved axis is then contiguous (FFT + copy in input order was slower than
//   one plan). A 1D c2r gains only from length 1024 on; at lengths 512-896 one
//   strided plan was as fast or faster, whatever the stride.
// 1D c2c stages stay one plan: the copy costs more than cuFFT's order change.
// Measurements on an H200: variants/backends/README.md.
struct Reorder {
    FftDescriptor fft;            // the stage reading (c2r) or writing (others) the scratch array
    bool copy_first() const { return fft.kind == FftKind::c2r; }  // copy in -> scratch, then FFT scratch -> out
    CopyRegion scratch{}, data{};  // the copy's two sides, axes slow -> fast in input order;
                                  // data is the stage's output (or, copy_first, its input)
    std::size_t elem_bytes = 0;
    std::size_t scratch_bytes = 0;
};

std::optional<Reorder> reorder(const FftDescriptor& d) {
    if (d.dims.size() < 2 && (d.kind == FftKind::c2r ? d.dims[0].n < 1024 : d.kind != FftKind::r2c))
        return std::nullopt;  // see above
    std::vector<FftDim> axes = d.dims;
    axes.insert(axes.end(), d.batch.begin(), d.batch.end());
    // A length-1 axis has no order, and dense strides would not nest with it:
    // such (degenerate) stages stay one plan.
    if (axes.size() > 3 || std::any_of(axes.begin(), axes.end(), [](const FftDim& a) { return a.n == 1; }))
        return std::nullopt;
    const bool real = d.kind == FftKind::r2c || d.kind == FftKind::c2r;
    // Extent per axis on the complex side: the halved one (last of dims) holds n/2+1.
    std::vector<long long> extent;
    for (std::size_t k = 0; k < axes.size(); ++k)
        extent.push_back(real && k + 1 == d.dims.size() ? axes[k].n / 2 + 1 : axes[k].n);
    std::vector<std::size_t> by_in(axes.size()), by_out(axes.size());
    std::iota(by_in.begin(), by_in.end(), 0);
    std::iota(by_out.begin(), by_out.end(), 0);
    std::stable_sort(by_in.begin(), by_in.end(), [&](auto i, auto j) { return axes[i].in_stride > axes[j].in_stride; });
    std::stable_sort(by_out.begin(), by_out.end(), [&](auto i, auto j) { return axes[i].out_stride > axes[j].out_stride; });
    if (by_in == by_out) return std::nullopt;
    Reorder r;
    r.fft = d;
    r.elem_bytes = 2 * (d.precision == Precision::single ? 4 : 8);  // the complex side
    // Dense strides (fastest last) over the complex extents, in the order of the
    // side the scratch array stands in for.
    const std::vector<std::size_t>& scratch_order = r.copy_first() ? by_out : by_in;
    std::vector<long long> dense(axes.size(), 0);
    long long stride = 1;
    for (auto it = scratch_order.rbegin(); it != scratch_order.rend(); ++it) dense[*it] = stride, stride *= extent[*it];
    r.scratch_bytes = static_cast<std::size_t>(stride) * r.elem_bytes;
    for (std::size_t k = 0; k < axes.size(); ++k) {
        FftDim& dim = k < d.dims.size() ? r.fft.dims[k] : r.fft.batch[k - d.dims.size()];
        (r.copy_first() ? dim.in_stride : dim.out_stride) = dense[k];
    }
    (r.copy_first() ? r.fft.in_elements : r.fft.out_elements) = stride;
    const std::size_t pad = 3 - by_in.size();  // leading extent-1 dimensions of the 3D copy
    for (std::size_t i = 0; i < 3; ++i) {
        r.scratch.extent[i] = r.data.extent[i] = 1;
        r.scratch.stride[i] = r.data.stride[i] = 0;
    }
    // In input order, so the copy kernel reads its source along the fastest axis.
    for (std::size_t i = 0; i < by_in.size(); ++i) {
        const std::size_t k = by_in[i];
        r.scratch.extent[pad + i] = r.data.extent[pad + i] = extent[k];
        r.scratch.stride[pad + i] = dense[k];
        r.data.stride[pad + i] = r.copy_first() ? axes[k].in_stride : axes[k].out_stride;
    }
    r.scratch.offset = r.data.offset = 0;
    return r;
}

// cuFFT passes that plans let go of, for the process's next plan that asks
// for the same pass on the same device. Making one costs 0.2-0.5 ms (the
// "plans" part of a point's set-up: 1.5-1.8 ms for the 4-6 passes of a slab
// or pencil plan on an H200), and a sweep's points make the same passes again
// for the other direction and for every transport of one size. The newest
// kKept stay; an allocation that fails lets them all go and tries again
// (CudaBackend::allocate). Never destroyed by static destructors, which may
// run after the CUDA runtime is gone: the process's end frees them.
class PassPool {
public:
    static PassPool& instance() {
        static auto* pool = new PassPool;
        return *pool;
    }
    std::shared_ptr<CufftPass> take(const FftDescriptor& d, int device) {
        std::lock_guard lock(mutex_);
        for (auto it = kept_.rbegin(); it != kept_.rend(); ++it)
            if ((*it)->serves(d, device)) {
                auto pass = std::move(*it);
                kept_.erase(std::next(it).base());
                return pass;
            }
        return nullptr;
    }
    void give(std::shared_ptr<CufftPass> pass) {
        pass->detach();
        std::lock_guard lock(mutex_);
        kept_.push_back(std::move(pass));
        if (kept_.size() > kKept) kept_.erase(kept_.begin());
    }
    // Whether there was any to let go of.
    bool clear() {
        std::lock_guard lock(mutex_);
        const bool any = !kept_.empty();
        kept_.clear();
        return any;
    }
    std::size_t size() {
        std::lock_guard lock(mutex_);
        return kept_.size();
    }

private:
    static constexpr std::size_t kKept = 32;
    std::mutex mutex_;
    std::vector<std::shared_ptr<CufftPass>> kept_;  // oldest first
};

class CufftPlan final : public FftPlan {
public:
    CufftPlan(const FftDescriptor& d, cudaStream_t stream)
        : kind_(d.kind), direction_(d.kind == FftKind::c2c_backward ? CUFFT_INVERSE : CUFFT_FORWARD), stream_(stream) {
        std::optional<Reorder> r = reorder(d);
        const std::vector<FftDescriptor> passes = cufft_passes(r ? r->fft : d);
        // A store aside goes with the last pass where it writes the output
        // itself, else with the reordering copy out of the scratch array.
        const bool aside = d.store_aside && !r;
        if (d.store_aside && r && !r->copy_first()) pieces_ = store_aside_pieces(*d.store_aside, *r);
        int device = -1;
        check(cudaGetDevice(&device), "cudaGetDevice");
        for (std::size_t i = 0; i < passes.size(); ++i) {
            const bool stores_aside = aside && i + 1 == passes.size();
            auto pooled = stores_aside ? nullptr : PassPool::instance().take(passes[i], device);
            if (pooled) pooled->attach(stream);
            passes_.push_back(pooled ? std::move(pooled)
                                     : std::make_shared<CufftPass>(passes[i], stream,
                                                                   stores_aside ? d.store_aside : std::nullopt));
            cufft_work_ = std::max(cufft_work_, passes_.back()->work_bytes());
        }
        reorder_ = std::move(r);
    }
    ~CufftPlan() override {
        for (auto& p : passes_)  // the last of a plan and its reversed twin gives them back
            if (p.use_count() == 1 && p->reusable()) PassPool::instance().give(std::move(p));
    }
    // Its twin holds the same passes (a c2c pass runs either direction) and
    // the same reordering copies, which do not depend on the direction.
    std::unique_ptr<FftPlan> reversed() const override {
        if (!is_c2c(kind_) || stores_aside()) return nullptr;
        auto twin = std::unique_ptr<CufftPlan>(new CufftPlan(*this));
        twin->kind_ = kind_ == FftKind::c2c_forward ? FftKind::c2c_backward : FftKind::c2c_forward;
        twin->direction_ = direction_ == CUFFT_FORWARD ? CUFFT_INVERSE : CUFFT_FORWARD;
        twin->scratch_ = nullptr;
        twin->has_area_ = false;
        return twin;
    }
    bool stores_aside() const override { return !pieces_.empty() || passes_.back()->stores_aside(); }
    void set_store_arrays(void* output, void* target) override {
        if (!stores_aside()) throw std::logic_error("this cuFFT plan stores nothing aside");
        if (pieces_.empty()) passes_.back()->set_store_arrays(output, target);
        store_output_ = output;
        store_target_ = target;
    }

    // cuFFT's area, then (reordering stages) the scratch array, 256-byte aligned.
    std::size_t work_bytes() const override {
        return reorder_ ? scratch_offset() + reorder_->scratch_bytes : cufft_work_;
    }
    // The passes run one after another on one stream, so they share one area;
    // a pass that asked for none gets none (cuFFT then never sees the scratch).
    void set_work_area(void* area) override {
        for (auto& p : passes_)
            if (p->work_bytes() > 0) p->set_work_area(area);
        if (reorder_) scratch_ = static_cast<char*>(area) + scratch_offset();
        has_area_ = true;
    }

    void execute(void* in, void* out) override {
        if (work_bytes() > 0 && !has_area_) throw std::logic_error("cuFFT plan executed before set_work_area()");
        if (stores_aside() && out != store_output_)
            throw std::logic_error("cuFFT plan that stores aside executed into another array than set_store_arrays named");
        if (reorder_ && reorder_->copy_first()) {
            check(cuda_copy_region(scratch_, reorder_->scratch, in, reorder_->data, reorder_->elem_bytes, stream_),
                  "reordering copy");
            in = scratch_;
        }
        void* target = reorder_ && !reorder_->copy_first() ? scratch_ : out;
        passes_.front()->execute(in, target, direction_);
        for (std::size_t i = 1; i < passes_.size(); ++i) passes_[i]->execute(target, target, direction_);
        if (reorder_ && !reorder_->copy_first() && pieces_.empty())
            check(cuda_copy_region(out, reorder_->data, scratch_, reorder_->scratch, reorder_->elem_bytes, stream_),
                  "reordering copy");
        for (const Piece& p : pieces_)
            check(cuda_copy_region(p.aside ? store_target_ : out, p.dst, scratch_, p.src, reorder_->elem_bytes, stream_),
                  "reordering copy");
    }

private:
    // The reordering copy in pieces: the block aside into the target, the rest
    // of the output (at most 6 boxes) into it, each read from the scratch
    // array along its fastest axis (the input's order). Nothing where the
    // scratch array is not that layout (then the plan copies whole and the
    // transport copies the block).
    struct Piece {
        CopyRegion dst, src;
        bool aside;
    };
    static std::vector<Piece> store_aside_pieces(const StoreAside& a, const Reorder& r) {
        const AxisOrder& order = a.in_order;
        const Layout scratch{a.out.box, order};
        auto region = [&](const Layout& l, const Box3& b) {
            CopyRegion c{};
            const auto st = l.strides();
            for (int i = 0; i < 3; ++i) c.extent[i] = b.extent(order[i]), c.stride[i] = st[order[i]];
            c.offset = l.offset_of(b.lo);
            return c;
        };
        const CopyRegion whole = region(scratch, a.out.box);
        for (int i = 0; i < 3; ++i)
            if (whole.extent[i] != r.scratch.extent[i] || whole.stride[i] != r.scratch.stride[i]) return {};
        std::vector<Piece> pieces{{region(a.target, a.box), region(scratch, a.box), true}};
        for (const Box3& b : subtract(a.out.box, a.box)) pieces.push_back({region(a.out, b), region(scratch, b), false});
        return pieces;
    }
    CufftPlan(const CufftPlan&) = default;  // reversed()'s start
    std::size_t scratch_offset() const { return (cufft_work_ + 255) / 256 * 256; }
    FftKind kind_;
    int direction_;  // CUFFT_FORWARD or CUFFT_INVERSE, for its c2c passes
    cudaStream_t stream_;
    std::vector<std::shared_ptr<CufftPass>> passes_;
    std::optional<Reorder> reorder_;
    std::size_t cufft_work_ = 0;
    void* scratch_ = nullptr;
    void* store_output_ = nullptr;  // the output array the store-aside callback decodes offsets in
    void* store_target_ = nullptr;
    std::vector<Piece> pieces_;     // a reordering stage's store aside
    bool has_area_ = false;
};

// Accumulates the GPU time between start/stop pairs recorded on the stream.
class EventClock final : public PhaseClock {
public:
    explicit EventClock(cudaStream_t s) : stream_(s) {}
    ~EventClock() override {
        for (auto& [a, b] : events_) cudaEventDestroy(a), cudaEventDestroy(b);
    }
    void start() override {
        if (used_ == events_.size()) {
            cudaEvent_t a, b;
            check(cudaEventCreate(&a), "cudaEventCreate");
            check(cudaEventCreate(&b), "cudaEventCreate");
            events_.push_back({a, b});
        }
        check(cudaEventRecord(events_[used_].first, stream_), "cudaEventRecord");
    }
    void stop() override { check(cudaEventRecord(events_[used_++].second, stream_), "cudaEventRecord"); }
    double elapsed_ms() override {
        double total = 0;
        for (std::size_t i = 0; i < used_; ++i) {
            check(cudaEventSynchronize(events_[i].second), "cudaEventSynchronize");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, events_[i].first, events_[i].second), "cudaEventElapsedTime");
            total += ms;
        }
        return total;
    }
    void reset() override { used_ = 0; }

private:
    cudaStream_t stream_;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events_;
    std::size_t used_ = 0;
};

// Device arrays freed by this process's backends, kept for its next
// allocations of the same size (core/platform/block_pool.hpp). Each device
// keeps at most FFTUNE_DEVICE_POOL_MIB (default a sixteenth of its memory):
// room enough for a 256^3-512^3 point's arrays, where allocating them cost
// a sixth of the point, and little to take from the largest plans, which
// let the pool go when an allocation fails. Never destroyed (see PassPool).
BlockPool& device_blocks() {
    static auto* pool = new BlockPool;
    return *pool;
}

// f() with `device` current, then the caller's device again.
template <class F>
auto on_device(int device, F f) {
    int current = -1;
    cudaGetDevice(&current);
    if (device != current) cudaSetDevice(device);
    auto r = f();
    if (device != current) cudaSetDevice(current);
    return r;
}

void free_blocks(const std::vector<BlockPool::Block>& blocks) {
    for (const auto& b : blocks)
        if (b.device < 0) cudaFree(b.ptr);  // not the pool's: on the caller's device, as it was
        else on_device(b.device, [&] { return cudaFree(b.ptr); });
}

// The cap of `device`, set once: the setting, or a sixteenth of its memory.
void cap_device_blocks(int device) {
    if (device < 0 || device_blocks().has_cap(device)) return;
    std::size_t cap = 0;
    if (const auto mib = device_pool_mib_setting()) cap = *mib << 20;
    else if (cudaDeviceProp p{}; cudaGetDeviceProperties(&p, device) == cudaSuccess) cap = p.totalGlobalMem / 16;
    device_blocks().set_cap(device, cap);
}

// Pinned host arrays freed by this process's backends (the host staging of
// MPI transports), kept for its next allocations of the same size: at 256^3
// on 2 ranks cudaMallocHost took 15-44 ms of a host-staged point's set-up and
// cudaFreeHost 5-10 ms of its release, 0.4 s a GiB (one H200 shared by 2
// ranks, results/h200x1-2026-11-29-host-pool). At most
// FFTUNE_HOST_POOL_MIB, by default a thirty-second of the host's memory
// (idle pinned memory cannot be paged out). BlockPool's device key 0 is the host.
BlockPool& host_blocks() {
    static auto* pool = new BlockPool;
    return *pool;
}
void cap_host_blocks() {
    if (host_blocks().has_cap(0)) return;
    std::size_t cap = 0;
    if (const auto mib = host_pool_mib_setting()) cap = *mib << 20;
    else if (const auto host = host_memory_info()) cap = host->total / 32;
    host_blocks().set_cap(0, cap);
}
void free_host_blocks(const std::vector<BlockPool::Block>& blocks) {
    for (const auto& b : blocks) cudaFreeHost(b.ptr);
}

class CudaBackend final : public Backend {
public:
    CudaBackend() {
        device_ = select_device();
        if (device_ >= 0) check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        cap_device_blocks(device_);
        cap_host_blocks();
    }
    ~CudaBackend() override {
        if (check_scratch_) cudaFree(check_scratch_);
        for (auto e : queue_events_)
            if (e) cudaEventDestroy(e);
        for (auto s : side_streams_)
            if (s) cudaStreamDestroy(s);
        if (stream_) cudaStreamDestroy(stream_);
    }
    std::string name() const override { return "cuda"; }
    std::vector<std::pair<std::string, std::string>> versions() const override {
        int rt = 0, drv = 0, cufft = 0;
        cudaRuntimeGetVersion(&rt);
        cudaDriverGetVersion(&drv);
        cufftGetVersion(&cufft);
        std::vector<std::pair<std::string, std::string>> v{{"cuda_runtime", std::to_string(rt)},
                                                           {"cuda_driver", std::to_string(drv)},
                                                           {"cufft", std::to_string(cufft)}};
        if (device_ >= 0) {
            cudaDeviceProp p{};
            cudaGetDeviceProperties(&p, device_);
            v.push_back({"gpu", fmt::format("{} (sm_{}{}, {} MiB)", p.name, p.major, p.minor, p.totalGlobalMem >> 20)});
        }
        return v;
    }
    bool device_memory() const override { return true; }
    // Every visible device of the node counts (4xH200 and 2xH200 are different machines).
    DeviceInfo device_info() const override {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return {};
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, device_ >= 0 ? device_ : 0) != cudaSuccess) return {"unknown", count};
        return {std::string(p.name), count};
    }
    std::optional<std::string> unavailable() const override {
        if (device_ < 0) return std::string("no CUDA device is visible to this process");
        return std::nullopt;
    }
    std::optional<DeviceMemory> device_memory_info() const override {
        if (device_ < 0) return std::nullopt;
        bind();
        DeviceMemory m;
        char bus[32] = {};
        check(cudaDeviceGetPCIBusId(bus, sizeof bus, device_), "cudaDeviceGetPCIBusId");
        m.device = bus;
        check(cudaMemGetInfo(&m.free, &m.total), "cudaMemGetInfo");
        m.free += device_blocks().idle_bytes(device_);  // the pool's: this process's next allocations take them
        return m;
    }
    // Out of memory says how much was asked and how much was free, so a
    // point that passed the plan's memory check and failed here shows the gap.
    // A block of exactly this size that this process freed on the device
    // serves first (contents undefined, as cudaMalloc's).
    void* allocate(std::size_t bytes) override {
        bytes = std::max<std::size_t>(bytes, 1);
        int device = -1;
        check(cudaGetDevice(&device), "cudaGetDevice");
        if (void* kept = device_blocks().take(device, bytes)) return kept;
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, bytes);
        if (e == cudaErrorMemoryAllocation) {  // the pooled arrays' and passes' memory, then again
            const auto idle = device_blocks().clear(device);
            free_blocks(idle);
            if (PassPool::instance().clear() || !idle.empty()) {
                cudaGetLastError();
                e = cudaMalloc(&p, bytes);
            }
        }
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            std::size_t free_bytes = 0, total_bytes = 0;
            cudaMemGetInfo(&free_bytes, &total_bytes);
            check(e, fmt::format("cudaMalloc of {:.2f} GiB ({} bytes; {:.2f} of {:.2f} GiB free)",
                                 double(bytes) / (1 << 30), bytes, double(free_bytes) / (1 << 30),
                                 double(total_bytes) / (1 << 30))
                         .c_str());
        }
        check(e, "cudaMalloc");
        device_blocks().adopt(p, device, bytes);
        return p;
    }
    // Kept for the next allocation of its size once its device is idle (what
    // cudaFree waits for too: the next holder may write it at once); freed
    // where that wait fails (a lost device).
    void deallocate(void* p) override {
        const int device = device_blocks().device_of(p);
        const bool idle = device >= 0 && on_device(device, [] { return cudaDeviceSynchronize(); }) == cudaSuccess;
        if (!idle) cudaGetLastError();
        free_blocks(device_blocks().give(p, idle));
    }
    // On H100 (driver 580) cudaIpcOpenMemHandle of a cudaMalloc of at least
    // 512 MiB that is a whole number of 2 MiB took 18.8-19.6 ms, of one a MiB
    // smaller or larger 3.9-4.2 ms (bench/probes/ipc_open, results/
    // h100x2-2026-11-28-kept-arrays): such an array gets a MiB more.
    std::size_t mapped_array_bytes(std::size_t bytes) const override {
        constexpr std::size_t mib = std::size_t(1) << 20;
        return bytes >= 512 * mib && bytes % (2 * mib) == 0 ? bytes + mib : bytes;
    }
    // A pinned block of exactly this size that this process freed serves first.
    void* allocate_host(std::size_t bytes) override {
        bytes = std::max<std::size_t>(bytes, 1);
        if (void* kept = host_blocks().take(0, bytes)) return kept;
        void* p = nullptr;
        cudaError_t e = cudaMallocHost(&p, bytes);
        if (e != cudaSuccess) {  // the idle pinned blocks' memory, then again
            const auto idle = host_blocks().clear();
            if (!idle.empty()) {
                cudaGetLastError();
                free_host_blocks(idle);
                e = cudaMallocHost(&p, bytes);
            }
        }
        check(e, "cudaMallocHost");
        host_blocks().adopt(p, 0, bytes);
        return p;
    }
    // Kept once this backend's device is idle: its copies may still read or
    // write the block (cudaFreeHost waits for them too).
    void deallocate_host(void* p) override {
        const bool idle = device_ < 0 || on_device(device_, [] { return cudaDeviceSynchronize(); }) == cudaSuccess;
        if (!idle) cudaGetLastError();
        free_host_blocks(host_blocks().give(p, idle));
    }
    // Registering memory the caller already touched: 0.37 s per 8 GiB on an
    // H200 host, where cudaMallocHost of fresh memory took 3.3 s.
    std::function<void(void*)> pin_host(void* p, std::size_t bytes) override {
        if (device_ < 0 || bytes == 0) return {};
        bind();
        if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
            cudaGetLastError();  // not pinned: copies stay correct, only slower
            return {};
        }
        return [](void* q) { cudaHostUnregister(q); };
    }
    // Both sides may be device or pinned host memory (unified addressing): the
    // kernel writes packed blocks straight into host staging buffers.
    void copy_region(void* dst, const StridedRegion& d, const void* src, const StridedRegion& s,
                     std::size_t elem_bytes) override {
        copy_region_on(0, dst, d, src, s, elem_bytes);
    }
    void copy_region_on(int q, void* dst, const StridedRegion& d, const void* src, const StridedRegion& s,
                        std::size_t elem_bytes) override {
        if (s.count() == 0) return;
        if (d.extent != s.extent) throw std::logic_error("copy_region: extents differ");
        bind();  // callers may be other threads (the p2p_streams packer)
        const cudaStream_t st = queue(q);
        if (d.contiguous() && s.contiguous()) {
            check(cudaMemcpyAsync(static_cast<char*>(dst) + d.offset * elem_bytes,
                                  static_cast<const char*>(src) + s.offset * elem_bytes, s.count() * elem_bytes,
                                  cudaMemcpyDefault, st),
                  "cudaMemcpyAsync");
            return;
        }
        auto plain = [](const StridedRegion& r) {
            return CopyRegion{{r.extent[0], r.extent[1], r.extent[2]}, {r.stride[0], r.stride[1], r.stride[2]}, r.offset};
        };
        check(cuda_copy_region(dst, plain(d), src, plain(s), elem_bytes, st), "copy_region kernel");
    }
    // Rows of at least 4 KiB go through copy engines (cudaMemcpy2DAsync per
    // plane; many planes of rows take the kernel, which one launch covers).
    void peer_copy_region_on(int q, void* dst, const StridedRegion& d, const void* src, const StridedRegion& s,
                             std::size_t elem_bytes) override {
        constexpr std::size_t kMinEngineRow = 4096, kMaxEnginePlanes = 64;
        const auto c = s.count() > 0 ? pitched_copy(d, s, elem_bytes, kMinEngineRow) : std::nullopt;
        if (!c || c->planes > kMaxEnginePlanes) return copy_region_on(q, dst, d, src, s, elem_bytes);
        bind();
        const cudaStream_t st = queue(q);
        for (std::size_t p = 0; p < c->planes; ++p) {
            char* to = static_cast<char*>(dst) + c->dst_offset + p * c->dst_plane;
            const char* from = static_cast<const char*>(src) + c->src_offset + p * c->src_plane;
            if (c->rows == 1)
                check(cudaMemcpyAsync(to, from, c->row_bytes, cudaMemcpyDefault, st), "cudaMemcpyAsync (peer)");
            else
                check(cudaMemcpy2DAsync(to, c->dst_pitch, from, c->src_pitch, c->row_bytes, c->rows, cudaMemcpyDefault, st),
                      "cudaMemcpy2DAsync (peer)");
        }
    }
    void multiply_real(void* data, const void* factor, index_t n, Precision precision) override {
        bind();
        check(cuda_multiply_real(data, factor, n, complex_bytes(precision), queue(0)), "multiply_real kernel");
    }
    // The tables (a few KiB) go over; the field is written where it lives.
    void fill_separable(void* out, const Layout& layout, const SeparableTerms& terms, Precision precision) override {
        const Box3& b = layout.box;
        if (b.empty() || terms.axis.empty()) return Backend::fill_separable(out, layout, terms, precision);
        bind();
        std::vector<double2> host;
        for (const auto& t : terms.axis)
            for (int a = 0; a < 3; ++a) {
                if (t[a].size() != static_cast<std::size_t>(b.extent(a)))
                    throw std::invalid_argument("fill_separable: a table does not span the box");
                for (const auto& c : t[a]) host.push_back({c.real(), c.imag()});
            }
        auto* tables = static_cast<double2*>(check_scratch(host.size() * sizeof(double2)));
        const long long extent[3] = {b.extent(layout.order[0]), b.extent(layout.order[1]), b.extent(layout.order[2])};
        const int axis_of[3] = {layout.order[0], layout.order[1], layout.order[2]};
        const long long box_extent[3] = {b.extent(0), b.extent(1), b.extent(2)};
        cudaError_t e = cudaMemcpyAsync(tables, host.data(), host.size() * sizeof(double2), cudaMemcpyHostToDevice, queue(0));
        if (e == cudaSuccess)
            e = cuda_fill_separable(out, real_bytes(precision), extent, axis_of, box_extent,
                                    static_cast<int>(terms.axis.size()), tables, queue(0));
        if (e == cudaSuccess) e = cudaStreamSynchronize(queue(0));  // the tables are free again after it
        check(e, "fill_separable kernel");
    }
    std::array<double, 2> max_difference(const void* a, double scale, const void* b, index_t count,
                                         Precision precision) override {
        std::array<double, 2> out{0, 0};
        if (count <= 0) return out;
        bind();
        const int blocks = int(std::min<index_t>((count + 255) / 256, 1024));
        auto* partials = static_cast<double*>(check_scratch(std::size_t(blocks) * 2 * sizeof(double)));
        std::vector<double> host(std::size_t(blocks) * 2);
        cudaError_t e = cuda_max_difference(a, scale, b, count, real_bytes(precision), partials, blocks, queue(0));
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(host.data(), partials, host.size() * sizeof(double), cudaMemcpyDeviceToHost, queue(0));
        if (e == cudaSuccess) e = cudaStreamSynchronize(queue(0));  // the partials are free again after it
        check(e, "max_difference kernel");
        for (int k = 0; k < blocks; ++k)
            out[0] = std::max(out[0], host[2 * std::size_t(k)]), out[1] = std::max(out[1], host[2 * std::size_t(k) + 1]);
        return out;
    }
    // Queue 0 is the backend's stream; side queues are streams created on first use.
    int queue_count() const override { return 1 + kSideQueues; }
    int overlap_queue() const override { return 1 + kSideQueues; }
    void queue_wait(int q, int after) override {
        if (q == after) return;
        bind();
        // One event per source queue: cudaStreamWaitEvent takes its latest record
        // (the lock keeps each record and its wait together).
        std::lock_guard lock(queue_mutex_);
        check(cudaEventRecord(queue_event(after), queue(after)), "cudaEventRecord");
        check(cudaStreamWaitEvent(queue(q), queue_event(after), 0), "cudaStreamWaitEvent");
    }
    void when_done(int q, std::function<void()> done) override {
        bind();
        auto* fn = new std::function<void()>(std::move(done));
        const cudaError_t e = cudaLaunchHostFunc(
            queue(q),
            [](void* p) {
                std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(p));
                (*f)();
            },
            fn);
        if (e != cudaSuccess) delete fn;
        check(e, "cudaLaunchHostFunc");
    }
    void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override {
        check(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync D2H");
        synchronize();
    }
    void copy_from_host(void* dst, const void* host_src, std::size_t bytes) override {
        check(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync H2D");
        synchronize();
    }
    void zero(void* p, std::size_t bytes) override {
        bind();
        check(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
    }
    void synchronize() override {
        bind();
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }
    std::optional<std::string> store_aside_unavailable() const override {
#if FFTUNE_CUFFT_STORE_ASIDE
        return std::nullopt;
#else
        return std::string("this cuda backend was built without cuFFT LTO store callbacks (CUDA 13 or later)");
#endif
    }
    void warm_up(Precision precision) override { warm_up_every_kind(*this, precision); }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        return std::make_unique<CufftPlan>(desc, queue(desc.queue));
    }
    std::unique_ptr<PhaseClock> make_clock() override { return std::make_unique<EventClock>(stream_); }
    std::unique_ptr<PhaseClock> make_clock_on(int q) override { return std::make_unique<EventClock>(queue(q)); }
    void* native_stream() override { return stream_; }
    void* native_stream_of(int q) override {
        bind();
        return queue(q);
    }
    std::optional<std::string> device_fault() override {
        if (device_ < 0) return std::nullopt;
        (void)cudaGetLastError();  // a failed call's own error, which later calls do not repeat
        // A sticky one they all return; the stream carries its device (no cudaSetDevice, which could throw).
        const cudaError_t e = cudaStreamQuery(stream_);
        if (e == cudaSuccess || e == cudaErrorNotReady) return std::nullopt;
        return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
    }
    // cufftXt over every GPU of the process, on this backend's stream (cufftxt.cpp).
    std::optional<std::string> multi_device_unavailable(const std::array<index_t, 3>& n,
                                                        Precision precision) const override {
        if (auto why = unavailable()) return why;
        return cufftxt_unavailable(n, precision);
    }
    std::unique_ptr<MultiDeviceFft> make_multi_device_fft(const std::array<index_t, 3>& n,
                                                          Precision precision) override {
        if (auto why = unavailable()) throw Unsupported(*why);
        bind();
        // cufftXt allocates on every GPU itself and measures their free memory: the pool's go first.
        free_blocks(device_blocks().clear());
        return make_cufftxt(n, precision, *this, stream_, device_);
    }

private:
    // Device memory for the tables and partial results of the checks' kernels
    // (fill_separable, max_difference), which synchronise before they return:
    // one allocation per backend, grown when a call needs more, instead of a
    // cudaMalloc/cudaFree pair per call (the sampled check's round trip made
    // four, about 1.3 ms at 256^3: results/h200x2-2026-11-28-job-start).
    void* check_scratch(std::size_t bytes) {
        if (bytes > check_scratch_bytes_) {
            if (check_scratch_) cudaFree(check_scratch_);
            check_scratch_ = nullptr;
            check_scratch_bytes_ = 0;
            const std::size_t want = std::max<std::size_t>(bytes, std::size_t{64} << 10);
            check(cudaMalloc(&check_scratch_, want), "cudaMalloc (check scratch)");
            check_scratch_bytes_ = want;
        }
        return check_scratch_;
    }
    void* check_scratch_ = nullptr;
    std::size_t check_scratch_bytes_ = 0;
    static constexpr int kSideQueues = 3;  // for transports; one more stream is the overlap queue
    cudaStream_t queue(int q) {
        if (q < 0 || q > kSideQueues + 1) throw std::out_of_range(fmt::format("cuda backend: no queue {}", q));
        if (q == 0) return stream_;
        create_side_queues();
        return side_streams_[q - 1];
    }
    cudaEvent_t queue_event(int q) {
        queue(q);
        create_side_queues();
        return queue_events_[q];
    }
    void create_side_queues() {
        std::call_once(side_once_, [&] {
            for (auto& s : side_streams_) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
            for (auto& e : queue_events_) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        });
    }
    std::once_flag side_once_;
    std::mutex queue_mutex_;
    std::array<cudaStream_t, kSideQueues + 1> side_streams_{};
    std::array<cudaEvent_t, kSideQueues + 2> queue_events_{};
    void bind() const {
        int current = -1;
        if (cudaGetDevice(&current) != cudaSuccess || current != device_) check(cudaSetDevice(device_), "cudaSetDevice");
    }
    int device_ = -1;
    cudaStream_t stream_ = nullptr;
};

const bool registered = register_variant<Backend, CudaBackend>("cuda");

}  // namespace
}  // namespace fftune
