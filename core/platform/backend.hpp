// Backend: memory, copies, timers and batched FFT plans. Nothing else.
// The distributed logic (boxes, reshapes, transports, stage order, timing) is
// backend-agnostic and lives in core/.
#pragma once

#include "core/base/registry.hpp"

#include <array>
#include <complex>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/base/box.hpp"
#include "core/base/names.hpp"

namespace fftune {

enum class FftKind { r2c, c2r, c2c_forward, c2c_backward };
inline bool is_c2c(FftKind k) { return k == FftKind::c2c_forward || k == FftKind::c2c_backward; }

// One transformed or batched dimension in guru form (FFTW guru64, cuFFT advanced layout).
// Strides are in elements of the respective array type (real or complex).
struct FftDim {
    index_t n = 1;
    index_t in_stride = 1;
    index_t out_stride = 1;
};

// Part of an FFT stage's complex output stored in another array instead (the
// self block of the reshape after the stage, at its place in the reshape's
// destination, so that the reshape need not copy it): output elements inside
// `box` (global coordinates) of the output array laid out as `out` go to the
// array set by FftPlan::set_store_arrays(), laid out as `target`.
struct StoreAside {
    Layout out;
    Box3 box;
    Layout target;
    AxisOrder in_order = order_xyz;  // the stage input's memory order (where a plan reorders through scratch)
};

// For r2c/c2r the last entry of `dims` is the halved dimension, n is its real length.
struct FftDescriptor {
    Precision precision = Precision::double_;
    FftKind kind = FftKind::c2c_forward;
    std::vector<FftDim> dims;
    std::vector<FftDim> batch;
    index_t in_elements = 0;   // size of the input array the plan may touch
    index_t out_elements = 0;  // size of the output array
    int queue = 0;             // backend queue the plan runs on (Backend::overlap_queue for slices)
    // Asked for, not promised: FftPlan::stores_aside() says whether the plan does it.
    std::optional<StoreAside> store_aside;
};

class FftPlan {
public:
    virtual ~FftPlan() = default;
    // Out-of-place, or in place (in == out) for a c2c plan whose in and out
    // strides are equal. A c2r plan may overwrite its input (FFTW and cuFFT both do).
    virtual void execute(void* in, void* out) = 0;
    // Scratch the plan needs while it executes, in backend memory, provided by
    // the caller through set_work_area() before the first execute(). Plans that
    // never run at the same time can share one area (a Plan's stages run in
    // order on one queue), so a distributed transform holds the largest, not the sum.
    virtual std::size_t work_bytes() const { return 0; }
    virtual void set_work_area(void* area) { (void)area; }
    // Whether execute() stores the descriptor's StoreAside block into `target`
    // instead of its output. Given before the first execute(), whose `out`
    // must then be `output`.
    virtual bool stores_aside() const { return false; }
    // The same c2c transform the other way, sharing this plan's library plans
    // (cuFFT: one plan runs both directions), or nothing: the caller makes a
    // plan of its own (FFTW's plans hold their sign). The two must run one
    // after another on this plan's queue and be given the same work area, as
    // a distributed Plan's forward and inverse stages are.
    virtual std::unique_ptr<FftPlan> reversed() const { return nullptr; }
    virtual void set_store_arrays(void* output, void* target) {
        (void)output, (void)target;
        throw std::logic_error("this FFT plan stores nothing aside");
    }
};

// Measures the time of one phase; start/stop may be called several times per
// iteration and accumulate. elapsed_ms() waits for the measured work.
class PhaseClock {
public:
    virtual ~PhaseClock() = default;
    virtual void start() = 0;
    virtual void stop() = 0;
    virtual double elapsed_ms() = 0;
    virtual void reset() = 0;
};

// Thrown while setting a configuration up when the library refuses it for a
// reason the harness could not rule out beforehand (cufftXt plan creation for
// a size it does not support). The runner records the point as skipped, with
// this message as the reason, instead of failed.
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One whole 3D real transform (r2c forward, c2r inverse) spread over every
// device the process drives: cufftXt on the cuda backend (reference_cufftxt).
// Its data lives in storage of its own (cufftXt descriptors, one slab per GPU)
// and is transformed there in place, so a transform is split into untimed
// copies in and out and the timed execute():
//   load(d, in)   caller's buffer -> storage, ready for execute (and kept for reload)
//   reload(d)     storage := what load() put there (execute overwrote it)
//   execute(d)    the transform, in place; the only timed part
//   store(d, out) storage -> caller's buffer
// The caller's buffers are pinned host memory (Plan::allocate_input: the whole
// grid need not fit on one device) in the plan's layouts: real (Nx, Ny, Nz)
// and complex (Nx, Ny, Nz/2+1), z contiguous, x slowest.
class MultiDeviceFft {
public:
    virtual ~MultiDeviceFft() = default;
    virtual void load(Direction d, const void* in) = 0;
    virtual void reload(Direction d) = 0;
    virtual void execute(Direction d) = 0;
    virtual void store(Direction d, void* out) = 0;
    // A clock for execute(): its interval covers the work on every device.
    virtual std::unique_ptr<PhaseClock> make_clock() = 0;
    virtual int devices() const = 0;
    // Device memory it holds (storage and library work areas, all devices),
    // and pinned host memory it stages copies through.
    virtual std::size_t device_bytes() const = 0;
    virtual std::size_t host_bytes() const = 0;
    // The most device memory it took on any one of its devices, as the driver
    // reports it (free when it was made - free now, library allocations
    // included); nothing where that cannot be read.
    virtual std::optional<std::size_t> measured_device_bytes() const { return std::nullopt; }
};

// Memory of the device a backend allocates on, as the driver reports it now.
struct DeviceMemory {
    std::string device;  // on this node, e.g. the PCI bus id: ranks with the same one share the memory
    std::size_t free = 0;
    std::size_t total = 0;
};

// The accelerators of this node as a backend sees them (machine fingerprint).
struct DeviceInfo {
    std::string model;  // e.g. "NVIDIA H200"
    int count = 0;      // devices visible on this node
};

// A real field that is a sum of separable terms over a box (a test input,
// core/engine/validation.hpp): f(x, y, z) = sum_m Re(axis[m][0][x - lo_x] *
// axis[m][1][y - lo_y] * axis[m][2][z - lo_z]).
struct SeparableTerms {
    std::vector<std::array<std::vector<std::complex<double>>, 3>> axis;  // per term, per axis, over the box
};

class Backend {
public:
    static constexpr const char* kind = "backend";
    virtual ~Backend() = default;

    virtual std::string name() const = 0;
    // Library versions for provenance, e.g. {"fftw", "fftw-3.3.10-sse2"}.
    virtual std::vector<std::pair<std::string, std::string>> versions() const = 0;
    // True when buffers from allocate() live in device memory.
    virtual bool device_memory() const = 0;
    // Why the backend cannot run here (e.g. no GPU), or nothing.
    virtual std::optional<std::string> unavailable() const { return std::nullopt; }
    // GPUs of this node (model, count) for the machine class; host backends have none.
    virtual DeviceInfo device_info() const { return {}; }

    // The device memory allocate() draws from; nothing for host backends, whose
    // footprint is not checked before a plan allocates.
    virtual std::optional<DeviceMemory> device_memory_info() const { return std::nullopt; }
    // An error that has left the device unusable for the rest of the process
    // (a sticky CUDA error, e.g. an illegal address: every later call returns
    // it), or nothing. Asked after a failure; never waits for the device.
    virtual std::optional<std::string> device_fault() { return std::nullopt; }

    virtual void* allocate(std::size_t bytes) = 0;
    // Bytes to allocate for an array of `bytes` that other processes map
    // (Transport::maps_peer_memory): a backend may pad it where mapping a
    // padded one costs less.
    virtual std::size_t mapped_array_bytes(std::size_t bytes) const { return bytes; }
    virtual void deallocate(void* p) = 0;
    // Host memory for staging MPI traffic (pinned on GPU backends).
    virtual void* allocate_host(std::size_t bytes) = 0;
    virtual void deallocate_host(void* p) = 0;
    // Page-locks host memory that the caller keeps (test arrays reused across
    // points) so that copies between it and backend memory run at full rate: on
    // an H200 55 GB/s either way, against 9 (to the device) and 16 (from it) from
    // pageable memory. Returns what undoes it, which must not need this backend
    // object; empty where nothing was done (host backends, a refusing driver).
    virtual std::function<void(void*)> pin_host(void* p, std::size_t bytes) {
        (void)p, (void)bytes;
        return {};
    }

    // dst[dst_region] = src[src_region]; both regions have the same extents.
    // Either side may be backend memory or host staging memory.
    virtual void copy_region(void* dst, const StridedRegion& dst_region, const void* src,
                             const StridedRegion& src_region, std::size_t elem_bytes) = 0;
    virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
    virtual void copy_from_host(void* dst, const void* host_src, std::size_t bytes) = 0;
    // Wait for all queued work (a no-op on synchronous backends).
    virtual void synchronize() = 0;
    // p[0, bytes) = 0 in backend memory, queued. The default copies zeros from
    // the host in chunks of at most 64 MiB; device backends set it in place.
    virtual void zero(void* p, std::size_t bytes);
    // data[i] *= factor[i] for i < n: complex data, real factors, both in
    // backend memory and of `precision` (a solver's spectral kernel).
    virtual void multiply_real(void* data, const void* factor, index_t n, Precision precision) {
        (void)data, (void)factor, (void)n, (void)precision;
        throw Unsupported(name() + " has no multiply_real kernel");
    }

    // out (backend memory laid out as `layout`) = the field over layout.box,
    // rounded to `precision` (real). The default evaluates it on the host and
    // copies it over; device backends write it with a kernel (no host array,
    // no copy: a point's input at 1024^3 without 2 GB through PCIe).
    virtual void fill_separable(void* out, const Layout& layout, const SeparableTerms& terms, Precision precision);
    // {max_i |a[i]·scale − b[i]| (a NaN counts as infinity), max_i |b[i]|}
    // over `count` reals of `precision`, both in backend memory: a check of an
    // array against a reference where both live. The default reads them back
    // in chunks; device backends reduce in place.
    virtual std::array<double, 2> max_difference(const void* a, double scale, const void* b, index_t count,
                                                 Precision precision);

    virtual std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) = 0;
    // Pays, once per process and precision, what would otherwise land in the
    // set-up and check of the first point that uses it: a library's first
    // plan of a precision and type, and the first launch of the backend's
    // kernels. The job's start calls it for each backend and precision its
    // points name (core/run/job_start.hpp). Default: nothing (FFTW plans
    // cost the same each time); GPU backends run warm_up_every_kind().
    virtual void warm_up(Precision precision) { (void)precision; }
    // Why this backend's FFTs cannot store part of their output aside
    // (FftDescriptor::store_aside), or nothing: some of its plans can.
    virtual std::optional<std::string> store_aside_unavailable() const {
        return "backend " + name() + " has no FFT that stores part of its output in another array";
    }
    // Why this backend cannot run a whole n-point transform over every device
    // of the process (too few devices, no such library), or nothing. The
    // library may still refuse the size at creation (throws Unsupported).
    virtual std::optional<std::string> multi_device_unavailable(const std::array<index_t, 3>& n,
                                                                Precision precision) const {
        (void)n;
        (void)precision;
        return "backend " + name() + " has no transform spread over several devices";
    }
    virtual std::unique_ptr<MultiDeviceFft> make_multi_device_fft(const std::array<index_t, 3>& n,
                                                                  Precision precision) {
        (void)n;
        (void)precision;
        throw std::logic_error("backend " + name() + " has no transform spread over several devices");
    }
    // The queue backend work runs on (a cudaStream_t on GPU backends, else null),
    // for device-direct transports that enqueue their own communication.
    virtual void* native_stream() { return nullptr; }
    // The same for queue `q` (queue_count): transports that order their queues
    // on another process's events (cudaIpcOpenEventHandle) wait on it there.
    virtual void* native_stream_of(int q) { return q == 0 ? native_stream() : nullptr; }

    // Work queues for transports that overlap packing, transfer and unpacking
    // (thesis 4.5.1). Queue 0 is the main one: FFTs, clocks, copy_region and
    // synchronize() use it; queues 1 .. queue_count()-1 run beside it (CUDA
    // streams). A backend that runs work at once has only queue 0, and the calls
    // below then reduce to doing the work now.
    virtual int queue_count() const { return 1; }
    // Work submitted to queue `q` from now on starts after the work submitted so
    // far to queue `after` (an event on GPU backends).
    virtual void queue_wait(int q, int after) {
        (void)q;
        (void)after;
    }
    // copy_region on queue `q`.
    virtual void copy_region_on(int q, void* dst, const StridedRegion& dst_region, const void* src,
                                const StridedRegion& src_region, std::size_t elem_bytes) {
        (void)q;
        copy_region(dst, dst_region, src, src_region, elem_bytes);
    }
    // copy_region_on where one side is another device's memory mapped into this
    // process (CUDA IPC): GPU backends move it with copy engines where the
    // regions are rows of a pitch (PitchedCopy), leaving the SMs to the FFTs
    // that run beside it.
    virtual void peer_copy_region_on(int q, void* dst, const StridedRegion& dst_region, const void* src,
                                     const StridedRegion& src_region, std::size_t elem_bytes) {
        copy_region_on(q, dst, dst_region, src, src_region, elem_bytes);
    }
    // A queue beside 0 .. queue_count()-1 that transports never use: the FFT
    // slices of an overlapped stage run there while the reshape of the slice
    // before runs on the others. 0 on backends that run work at once.
    virtual int overlap_queue() const { return 0; }
    // Calls `done` once the work submitted so far to queue `q` has finished:
    // now, or from a thread of the backend (cudaLaunchHostFunc), in which case
    // `done` must not call the backend or MPI (set a flag and return).
    virtual void when_done(int q, std::function<void()> done) {
        (void)q;
        done();
    }
    virtual std::unique_ptr<PhaseClock> make_clock() = 0;
    // A clock of the work on queue `q` (the overlapped FFT slices).
    virtual std::unique_ptr<PhaseClock> make_clock_on(int q) {
        (void)q;
        return make_clock();
    }
};
FFTUNE_DECLARE_REGISTRY(Backend);

// Buffer owned through a backend, or memory lent to it by an owner that
// `give_back` returns it to when the Buffer ends (core/platform/host_scratch.hpp).
class Buffer {
public:
    Buffer() = default;
    Buffer(Backend& backend, std::size_t bytes, bool host = false);
    Buffer(void* lent, std::size_t bytes, std::function<void()> give_back)
        : ptr_(lent), bytes_(bytes), give_back_(std::move(give_back)) {}
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { swap(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        Buffer tmp(std::move(o));
        swap(tmp);
        return *this;
    }
    ~Buffer();

    void* data() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }
    template <class T>
    T* as() const { return static_cast<T*>(ptr_); }

private:
    void swap(Buffer& o) noexcept {
        std::swap(backend_, o.backend_);
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
        std::swap(host_, o.host_);
        std::swap(give_back_, o.give_back_);
    }
    Backend* backend_ = nullptr;
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
    bool host_ = false;
    std::function<void()> give_back_;  // set: lent memory, not the backend's
};

// An FFT plan for use on its own (tests, the probe): make_fft's plan holding a
// work area of its own, when it needs one.
std::unique_ptr<FftPlan> make_standalone_fft(Backend& backend, const FftDescriptor& desc);

// The tiny transforms a warm-up makes and runs: every FftKind at ranks 1-3,
// n = 8 per axis, 2 batches, row-major (z fastest), in `precision`.
std::vector<FftDescriptor> warm_up_descriptors(Precision precision);
// Makes and runs each of warm_up_descriptors() once on tiny arrays, then a
// strided copy, a fill, a zero and a max_difference, and waits for them. On
// an H200 cuFFT's first plan of a precision costs 2-4 ms in a job, a plan
// after an 8-point one of its type 0.3 ms
// (results/h200x1-2026-11-29-first-of-kind).
void warm_up_every_kind(Backend& backend, Precision precision);

}  // namespace fftune
