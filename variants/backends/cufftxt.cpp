// cufftXt single-process multi-GPU 3D R2C/C2R (D2Z/Z2D in double): one plan
// per direction over every visible GPU (cufftXtSetGPUs, cufftMakePlan3d), the
// data in cufftXt descriptors (cufftXtMalloc), moved with cufftXtMemcpy and
// transformed with cufftXtExecDescriptor.
//
// Data (cuFFT "Multiple GPU data organization"): a single (batch 1) multi-GPU
// transform runs in place only. A descriptor holds the in-place padded array,
// Nx * Ny * (Nz/2+1) complex = Nx * Ny * 2(Nz/2+1) reals, split over the GPUs
// along x. The forward transform leaves the spectrum split along y instead
// (subformat CUFFT_XT_FORMAT_INPLACE_SHUFFLED); cufftXtMemcpy and
// cufftXtExecDescriptor track that order from the descriptor, so a copy to
// the host returns natural order and the inverse takes either order. The
// caller's arrays are pinned host memory (Plan::allocate_input). Complex ones
// go to and from the descriptors as they are; real ones are dense (Nz per
// row), so the copy in pads rows to 2(Nz/2+1) in a pinned host array and the
// copy out strips the padding from there (row copies on the host threads).
// None of these copies is timed (MultiDeviceFft).
//
// Every execution overwrites its input, so load() keeps the loaded data in a
// second descriptor and reload() copies it back (a device copy per GPU)
// before each timed run: 2 descriptors + the plans' work areas.
//
// Timing: both plans run on the backend's stream (cufftSetStream; since cuFFT
// 10.4 a multi-GPU execution waits for that stream before it starts and makes
// it wait for every GPU when it ends). The clock records on that stream and
// also, on every GPU, on the legacy default stream (which waits for all
// blocking streams of its device), and takes the longest interval: the time
// until the last GPU is done, whichever way cuFFT orders its internal
// streams. reload() leaves every GPU idle, so the starts coincide.
#include "core/platform/cuda_check.hpp"
#include "variants/backends/cufftxt.hpp"

#include <cufftXt.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/platform/host_scratch.hpp"
#include "core/platform/parallel.hpp"

namespace fftune {
namespace {

const char* cufft_error_name(cufftResult r) {
    switch (r) {
        case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
        case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
        case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
        case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
        case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
        case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
        case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
        case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
        case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
        case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
        case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
        case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
        case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
        case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
        default: return "cuFFT error";
    }
}

std::string cufft_error(cufftResult r) { return fmt::format("{} ({})", cufft_error_name(r), static_cast<int>(r)); }

using fftune::check;
void check(cufftResult r, const char* what) {
    if (r != CUFFT_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", what, cufft_error(r)));
}

// Makes `device` current for a scope and restores the caller's device.
class DeviceGuard {
public:
    explicit DeviceGuard(int device) {
        if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
        if (device != previous_) check(cudaSetDevice(device), "cudaSetDevice");
    }
    ~DeviceGuard() {
        if (previous_ >= 0) cudaSetDevice(previous_);
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;
};

// Accumulates, per start/stop pair, the longest of several event intervals:
// one on the plan's stream and one on each GPU's legacy default stream.
class AllDeviceClock final : public PhaseClock {
public:
    AllDeviceClock(const std::vector<int>& gpus, int stream_device, cudaStream_t stream) {
        devices_.push_back(stream_device);
        streams_.push_back(stream);
        for (int g : gpus) {
            devices_.push_back(g);
            streams_.push_back(cudaStreamLegacy);
        }
    }
    ~AllDeviceClock() override {
        for (auto& [a, b] : marks_)
            for (std::size_t k = 0; k < devices_.size(); ++k) {
                cudaSetDevice(devices_[k]);  // events are destroyed on their device
                if (a[k]) cudaEventDestroy(a[k]);
                if (b[k]) cudaEventDestroy(b[k]);
            }
        if (previous_device_ >= 0) cudaSetDevice(previous_device_);
    }
    void start() override {
        if (used_ == marks_.size()) marks_.push_back({create(), create()});
        record(marks_[used_].first);
    }
    void stop() override { record(marks_[used_++].second); }
    double elapsed_ms() override {
        double total = 0;
        for (std::size_t i = 0; i < used_; ++i) {
            double longest = 0;
            for (std::size_t k = 0; k < devices_.size(); ++k) {
                DeviceGuard on(devices_[k]);
                check(cudaEventSynchronize(marks_[i].second[k]), "cudaEventSynchronize");
                float ms = 0;
                check(cudaEventElapsedTime(&ms, marks_[i].first[k], marks_[i].second[k]), "cudaEventElapsedTime");
                longest = std::max(longest, static_cast<double>(ms));
            }
            total += longest;
        }
        return total;
    }
    void reset() override { used_ = 0; }

private:
    std::vector<cudaEvent_t> create() {
        if (previous_device_ < 0) cudaGetDevice(&previous_device_);
        std::vector<cudaEvent_t> events(devices_.size(), nullptr);
        for (std::size_t k = 0; k < devices_.size(); ++k) {
            DeviceGuard on(devices_[k]);
            check(cudaEventCreate(&events[k]), "cudaEventCreate");
        }
        return events;
    }
    void record(const std::vector<cudaEvent_t>& events) {
        for (std::size_t k = 0; k < devices_.size(); ++k) {
            DeviceGuard on(devices_[k]);
            check(cudaEventRecord(events[k], streams_[k]), "cudaEventRecord");
        }
    }
    std::vector<int> devices_;
    std::vector<cudaStream_t> streams_;
    std::vector<std::pair<std::vector<cudaEvent_t>, std::vector<cudaEvent_t>>> marks_;
    std::size_t used_ = 0;
    int previous_device_ = -1;
};

class CufftXt final : public MultiDeviceFft {
public:
    CufftXt(const std::array<index_t, 3>& n, Precision precision, Backend& backend, cudaStream_t stream,
            int stream_device, std::vector<int> gpus)
        : n_(n), precision_(precision), backend_(backend), stream_(stream), stream_device_(stream_device),
          gpus_(std::move(gpus)) {
        try {
            for (int g : gpus_) free_when_made_.push_back(memory_on(g).free);
            create();
        } catch (...) {
            release();
            throw;
        }
    }
    ~CufftXt() override {
        int previous = -1;
        cudaGetDevice(&previous);
        for (int g : gpus_) {  // nothing may still run on memory about to be freed
            cudaSetDevice(g);
            cudaDeviceSynchronize();
        }
        release();
        if (previous >= 0) cudaSetDevice(previous);
    }

    void load(Direction d, const void* in) override {
        DeviceGuard on(stream_device_);
        void* src = const_cast<void*>(in);  // cufftXtMemcpy only reads it
        if (d == Direction::forward) {
            copy_rows(padded_.data(), padded_row(), in, n_[2]);  // the pad is never read
            src = padded_.data();
        }
        sync_all();
        check(cufftXtMemcpy(plan(d), loaded_, src, CUFFT_COPY_HOST_TO_DEVICE), "cufftXtMemcpy host to device");
        reload(d);
    }

    void reload(Direction d) override {
        (void)d;
        sync_all();
        // Both descriptors come from one plan with one format: the same slab per
        // GPU, so a byte copy per GPU restores the data, and resetting subFormat
        // tells cuFFT the order is again the loaded one (execution shuffles it).
        // cufftXtMemcpy is not used here: its device-to-device copy is meant for
        // reordering a shuffled descriptor, not for duplicating one.
        const cudaXtDesc& dst = *data_->descriptor;
        const cudaXtDesc& src = *loaded_->descriptor;
        for (int i = 0; i < src.nGPUs; ++i) {
            DeviceGuard on(src.GPUs[i]);
            check(cudaMemcpy(dst.data[i], src.data[i], src.size[i], cudaMemcpyDeviceToDevice), "cudaMemcpy reload");
        }
        data_->subFormat = loaded_->subFormat;
        sync_all();  // every GPU idle: the timed execution starts from a clean slate
    }

    void execute(Direction d) override {
        DeviceGuard on(stream_device_);
        // The direction argument is ignored for real transforms; the plan's type decides.
        check(cufftXtExecDescriptor(plan(d), data_, data_, d == Direction::forward ? CUFFT_FORWARD : CUFFT_INVERSE),
              "cufftXtExecDescriptor");
    }

    void store(Direction d, void* out) override {
        DeviceGuard on(stream_device_);
        sync_all();  // the execution is queued on the stream; cufftXtMemcpy does not wait for it
        // Natural order on the host whatever order the descriptor is in (cuFFT unshuffles).
        void* dst = d == Direction::forward ? out : padded_.data();
        check(cufftXtMemcpy(plan(d), dst, data_, CUFFT_COPY_DEVICE_TO_HOST), "cufftXtMemcpy device to host");
        if (d == Direction::inverse) copy_rows(out, n_[2], padded_.data(), padded_row());
    }

    std::unique_ptr<PhaseClock> make_clock() override {
        return std::make_unique<AllDeviceClock>(gpus_, stream_device_, stream_);
    }
    int devices() const override { return static_cast<int>(gpus_.size()); }
    std::size_t device_bytes() const override { return 2 * storage_bytes_ + work_area_bytes_; }
    std::size_t host_bytes() const override { return storage_bytes_; }
    std::optional<std::size_t> measured_device_bytes() const override {
        std::size_t most = 0;
        for (std::size_t i = 0; i < gpus_.size(); ++i) {
            const std::size_t now = memory_on(gpus_[i]).free;
            if (now < free_when_made_[i]) most = std::max(most, free_when_made_[i] - now);
        }
        return most;
    }

private:
    struct Memory {
        std::size_t free = 0, total = 0;
    };
    static Memory memory_on(int gpu) {
        DeviceGuard on(gpu);
        Memory m;
        check(cudaMemGetInfo(&m.free, &m.total), "cudaMemGetInfo");
        return m;
    }

    cufftHandle plan(Direction d) const { return plans_[static_cast<int>(d)]; }

    // Reals per row of the padded in-place array.
    index_t padded_row() const { return 2 * (n_[2] / 2 + 1); }
    // Nz reals of each of the Nx*Ny rows, between host arrays of the given row lengths.
    void copy_rows(void* dst, index_t dst_row, const void* src, index_t src_row) const {
        const std::size_t e = real_bytes(precision_), len = static_cast<std::size_t>(n_[2]) * e;
        auto* d = static_cast<char*>(dst);
        const auto* s = static_cast<const char*>(src);
        parallel_for(0, n_[0] * n_[1], [&](std::int64_t lo, std::int64_t hi) {
            for (auto r = lo; r < hi; ++r) std::memcpy(d + r * dst_row * e, s + r * src_row * e, len);
        }, host_threads(), std::int64_t{1} << 12);
    }

    void create() {
        const bool single = precision_ == Precision::single;
        const int count = static_cast<int>(gpus_.size());
        const std::string what = fmt::format("{}x{}x{} {} on {} GPUs", n_[0], n_[1], n_[2], to_string(precision_), count);
        for (Direction d : {Direction::forward, Direction::inverse}) {
            cufftHandle& h = plans_[static_cast<int>(d)];
            check(cufftCreate(&h), "cufftCreate");
            have_plan_[static_cast<int>(d)] = true;
            check(cufftSetStream(h, stream_), "cufftSetStream");
            const cufftResult set = cufftXtSetGPUs(h, count, gpus_.data());
            if (set != CUFFT_SUCCESS)
                throw Unsupported(fmt::format("cufftXt cannot use the GPUs for {}: cufftXtSetGPUs returned {}", what,
                                              cufft_error(set)));
            const cufftType type = d == Direction::forward ? (single ? CUFFT_R2C : CUFFT_D2Z)
                                                           : (single ? CUFFT_C2R : CUFFT_Z2D);
            std::vector<std::size_t> work(gpus_.size(), 0);
            const cufftResult made = cufftMakePlan3d(h, static_cast<int>(n_[0]), static_cast<int>(n_[1]),
                                                     static_cast<int>(n_[2]), type, work.data());
            if (made != CUFFT_SUCCESS)
                throw Unsupported(fmt::format("cufftXt refuses the {} transform {}: cufftMakePlan3d returned {}",
                                              d == Direction::forward ? "r2c" : "c2r", what, cufft_error(made)));
            for (std::size_t w : work) work_area_bytes_ += w;
        }
        storage_bytes_ = static_cast<std::size_t>(n_[0] * n_[1] * (n_[2] / 2 + 1)) * complex_bytes(precision_);
        require_fit(what);
        // Both plans share the descriptors: the same x-split of the same padded array.
        for (cudaLibXtDesc** desc : {&data_, &loaded_}) {
            const cufftResult r = cufftXtMalloc(plans_[0], desc, CUFFT_XT_FORMAT_INPLACE);
            if (r == CUFFT_ALLOC_FAILED)  // what require_fit could not foresee (fragmentation)
                throw Unsupported(fmt::format("does not fit in device memory: cufftXtMalloc of {} failed ({})", what,
                                              cufft_error(r)));
            check(r, "cufftXtMalloc");
        }
        DeviceGuard on(stream_device_);
        padded_ = host_scratch(ScratchRole::multi_device_staging).lend(storage_bytes_, backend_);
    }

    // Refuses, before allocating, descriptors that cannot fit: each GPU holds
    // its x-slab (ceil(Nx / GPUs) planes at most) of both, beside the work
    // areas the plans have already allocated (so they are out of the free memory).
    void require_fit(const std::string& what) const {
        const auto count = static_cast<index_t>(gpus_.size());
        const std::size_t share = static_cast<std::size_t>((n_[0] + count - 1) / count) *
                                  static_cast<std::size_t>(n_[1] * (n_[2] / 2 + 1)) * complex_bytes(precision_);
        for (int g : gpus_) {
            const Memory m = memory_on(g);
            if (2 * share > m.free)
                throw Unsupported(fmt::format(
                    "does not fit in device memory: cufftXt's two descriptors for {} need {:.2f} GiB on GPU {}, "
                    "{:.2f} GiB of its {:.2f} GiB are free after the plans' work areas",
                    what, 2 * share / double(1ull << 30), g, m.free / double(1ull << 30), m.total / double(1ull << 30)));
        }
    }

    void release() {
        if (data_) cufftXtFree(data_);
        if (loaded_) cufftXtFree(loaded_);
        data_ = loaded_ = nullptr;
        for (int i = 0; i < 2; ++i)
            if (have_plan_[i]) cufftDestroy(plans_[i]);
        have_plan_[0] = have_plan_[1] = false;
        padded_ = Buffer();
    }

    // Waits for the backend's stream and everything on every GPU.
    void sync_all() {
        for (int g : gpus_) {
            DeviceGuard on(g);
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        }
    }

    std::array<index_t, 3> n_;
    Precision precision_;
    Backend& backend_;
    cudaStream_t stream_;
    int stream_device_;
    std::vector<int> gpus_;
    std::vector<std::size_t> free_when_made_;  // per GPU, before any allocation of ours
    cufftHandle plans_[2]{};
    bool have_plan_[2]{false, false};
    cudaLibXtDesc* data_ = nullptr;    // transformed in place
    cudaLibXtDesc* loaded_ = nullptr;  // what load() put there, for reload()
    Buffer padded_;                    // pinned host memory, one padded real array (lent)
    std::size_t storage_bytes_ = 0;    // one descriptor, all GPUs together
    std::size_t work_area_bytes_ = 0;  // both plans, all GPUs
};

std::vector<int> visible_gpus() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error
        count = 0;
    }
    std::vector<int> gpus(count);
    for (int g = 0; g < count; ++g) gpus[g] = g;
    return gpus;
}

}  // namespace

std::optional<std::string> cufftxt_unavailable(const std::array<index_t, 3>& n, Precision precision) {
    (void)n;
    (void)precision;
    const auto gpus = visible_gpus();
    if (gpus.empty()) return std::string("no CUDA device is visible to this process");
    if (gpus.size() < 2)
        return std::string("cufftXt spreads one transform over several GPUs; only 1 is visible to this process");
    if (gpus.size() > 16)
        return fmt::format("cufftXt drives at most 16 GPUs; {} are visible to this process", gpus.size());
    // cuFFT's multi-GPU requirement: one CUDA architecture on every GPU.
    auto arch = [](int g) {
        int major = 0, minor = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, g);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, g);
        return 10 * major + minor;
    };
    for (int g : gpus)
        if (arch(g) != arch(gpus[0]))
            return fmt::format("cufftXt needs one CUDA architecture on every GPU; GPU {} is sm_{}, GPU {} sm_{}",
                               gpus[0], arch(gpus[0]), g, arch(g));
    return std::nullopt;
}

std::unique_ptr<MultiDeviceFft> make_cufftxt(const std::array<index_t, 3>& n, Precision precision, Backend& backend,
                                             cudaStream_t stream, int stream_device) {
    if (auto why = cufftxt_unavailable(n, precision)) throw Unsupported(*why);
    for (int a = 0; a < 3; ++a)
        if (n[a] > std::numeric_limits<int>::max())
            throw Unsupported(fmt::format("cufftMakePlan3d takes int sizes; axis {} has {}", a, n[a]));
    return std::make_unique<CufftXt>(n, precision, backend, stream, stream_device, visible_gpus());
}

}  // namespace fftune
