// fftune::Plan — a distributed 3D real-to-complex FFT for one configuration.
//
//   fftune::Plan plan(MPI_COMM_WORLD, problem, config);
//   auto in = plan.allocate_input();  auto out = plan.allocate_output();
//   // fill in.as<double>() over plan.input_layout().box (z fastest) ...
//   plan.forward(in.data(), out.data());   // out: plan.output_layout(), complex
//   plan.inverse(out.data(), in.data());   // unnormalised: scales by Nx*Ny*Nz
//
// Input is real, output complex with Nz/2+1 entries along z; both are stored
// z-contiguous (x slowest). Buffers live where the backend keeps data (host for
// fftw, device for cuda). A plan is a flat list of named stages; each stage is
// timed into a PhaseTimer (fft.yz, pack.0, exchange.0, unpack.0, fft.x, ...).
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/platform/backend.hpp"
#include "core/engine/config.hpp"
#include "core/engine/kept_arrays.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/phase_timer.hpp"

namespace fftune {

// Collective, before allocating: throws Unsupported (on every rank, naming the
// device and the sizes) when the ranks sharing a device need more than its
// free memory, `need` bytes each. Returns the most ranks sharing one device
// (1 on host backends, which report no device memory).
int require_device_memory(MPI_Comm comm, const Backend& backend, std::size_t need);
// The same question without refusing: true on every rank when the ranks
// sharing each device fit `need` bytes each in its free memory; false when any
// does not, or a backend reports no memory. Collective.
bool fits_in_device_memory(MPI_Comm comm, const Backend& backend, std::size_t need);

// Why `config` cannot solve `problem` on this build, or nothing. A pure
// function of its arguments, so every rank reaches the same answer; with
// `placement`, also whether its transports run as this job placed its ranks
// (Transport::not_runnable_here: rank-local, for a point about to run, not for
// enumerating points). Throws std::invalid_argument for names that are not registered.
std::optional<std::string> check_applicable(const Problem& problem, const Config& config, bool placement = true);

// What inverse() may do to its input. `preserve`: the caller's spectrum is kept,
// so a c2r reading it (cuFFT's and FFTW's overwrite their input) reads a copy
// (phase copy.in). `destroy`: it reads the caller's array in place, as
// FFTW_DESTROY_INPUT; for callers that discard the spectrum (a convolution).
enum class InverseInput { preserve, destroy };

// Whether the plan's own arrays (work arrays, FFT work area, staging buffers)
// are freed with it (`plan`) or, inside a job (KeptArrays::Job), kept with
// the peers' mappings of them for the job's next plan, which reuses them
// where it wants the same sizes (`kept`; core/engine/kept_arrays.hpp).
enum class ArrayLifetime { plan, kept };

class Plan {
public:
    // Collective over `comm`, whose size must equal problem.ranks. Throws
    // std::invalid_argument when the configuration does not apply.
    Plan(MPI_Comm comm, const Problem& problem, const Config& config,
         InverseInput inverse_input = InverseInput::preserve, ArrayLifetime arrays = ArrayLifetime::plan);
    ~Plan();
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    const Problem& problem() const { return problem_; }
    const Config& config() const { return config_; }
    InverseInput inverse_input() const { return inverse_input_; }
    const Layout& input_layout() const;   // real data, forward input / inverse output
    const Layout& output_layout() const;  // complex data, forward output / inverse input
    index_t input_count() const { return input_layout().box.count(); }
    index_t output_count() const { return output_layout().box.count(); }
    std::size_t input_bytes() const;
    std::size_t output_bytes() const;
    // Device (or host, for host backends) bytes the plan allocates besides the
    // caller's input and output: work arrays, the FFT work area, staging buffers.
    // A plan that would not fit in its device's free memory (the ranks sharing a
    // device counted together, input and output included) throws Unsupported,
    // on every rank, before allocating.
    std::size_t workspace_bytes() const;
    // Most ranks of this plan that share one device (1 on host backends).
    int ranks_on_device() const { return ranks_on_device_; }
    // This rank's host wall time of each part of the constructor, in order:
    // "backend_and_comms" (the backend, the chain, the phase communicators),
    // "plans" (FFT plans and reshape plans, both directions), "memory_check",
    // "allocate" (work arrays, FFT work area, staging buffers) and
    // "transports" (their setup: handles, mappings, communicators).
    const std::vector<std::pair<std::string, double>>& setup_parts_ms() const { return setup_parts_ms_; }
    // ArrayLifetime::kept: this rank's backend memory (not host) kept from the
    // last plan when this one was made, and how much of it this one reuses
    // (the rest was let go); 0 for plans that keep nothing.
    std::size_t kept_before_bytes() const { return kept_before_bytes_; }
    std::size_t kept_reused_bytes() const { return kept_reused_bytes_; }
    // Pinned host memory for staging MPI traffic (GPU backends without GPU-aware
    // MPI), or for a transform over every device its host arrays: the caller's
    // input and output and its padded copy.
    std::size_t host_staging_bytes() const;

    // The plan's footprint in backend memory: workspace_bytes(), plus the
    // caller's input and output unless they are host memory on a device backend.
    std::size_t backend_bytes() const;

    Backend& backend() { return *backend_; }
    MPI_Comm comm() const { return comm_.get(); }
    // The caller's arrays, in the plan's input and output layouts. Backend
    // memory, except for a transform over every device of the process
    // (reference_cufftxt): there they are pinned host memory, since the whole
    // grid does not fit on one device beside the library's own storage (2048^3
    // double on 4 H200s: 128 GiB of arrays, 64 GiB of cufftXt storage per GPU).
    // Those are lent from process-wide host arrays (core/platform/host_scratch.hpp), so
    // that a sweep pins them once, and one of each may exist at a time.
    Buffer allocate_input();
    Buffer allocate_output();
    // True when allocate_input/allocate_output return host memory (host
    // backends; transforms over every device): host code may read them directly.
    bool buffers_on_host() const;

    // Collective. `out` must not alias `in`. `in` is preserved, except by
    // inverse() on a plan made with InverseInput::destroy.
    void forward(const void* in, void* out);
    void inverse(const void* in, void* out);

    // Timed execution, as the runner measures it. forward()/inverse() are
    // complete transforms of the caller's buffers. A plan that transforms data
    // in storage of its own (reference_cufftxt: cufftXt descriptors spread over
    // every GPU, transformed in place) splits that up so that only the
    // transform is timed: stage(d, in) copies the input there, restage(d)
    // restores it before each timed run (untimed), and run_staged(d, in, out)
    // transforms it and leaves the result there (`out` is not written; the
    // copy out is part of forward()/inverse() only). For every other plan
    // stage() and restage() do nothing and run_staged() is forward()/inverse().
    void stage(Direction d, const void* in);
    void restage(Direction d);
    void run_staged(Direction d, const void* in, void* out);
    // Clock for whole transforms: the backend's; for a plan spanning several
    // devices, one whose interval covers the work on all of them.
    std::unique_ptr<PhaseClock> make_clock();
    // Devices one rank's transform runs on: 1, or every GPU of the process
    // for a transform over all devices (reference_cufftxt).
    int devices() const;
    // For a transform over every device, the most memory it took on any one of
    // them (MultiDeviceFft::measured_device_bytes); nothing otherwise.
    std::optional<std::size_t> measured_multi_device_bytes() const;

    // The least traffic of each phase on this rank, in phase_names() order:
    // bytes read + written on its device (one pass over an FFT's input and
    // output; scattered blocks packed or unpacked; the self block copied), and
    // bytes sent to and received from other ranks (core/engine/reshape.hpp traffic()).
    // Floors come from these over measured bandwidths (plotting/report.py).
    using PhaseTraffic = fftune::PhaseTraffic;
    std::vector<PhaseTraffic> phase_traffic(Direction d) const;

    // Per-phase times accumulated since the last collect, in phase_names() order.
    const std::vector<std::string>& phase_names(Direction d) const;
    std::vector<double> collect_phase_times(Direction d);

private:
    struct Stage;
    struct Reshape;
    struct Overlap;
    struct Pipeline;
    struct Builder;  // build's steps (plan.cpp)
    // The forward's c2c plans by descriptor: the inverse's stages of the same
    // transform run them reversed (FftPlan::reversed).
    using MadePlans = std::vector<std::pair<FftDescriptor, const FftPlan*>>;
    void build(Direction d, MadePlans& forward_c2c);
    // What the pipelines need beside the caller's arrays: each work slot the
    // largest array a stage of either direction keeps there (none for a
    // one-step chain), one FFT work area for every stage (they run one after
    // another), and packed staging buffers for the largest reshape using them.
    static constexpr int work_slots = 3;  // the third only for overlapped pencils (build)
    struct WorkSizes {
        std::size_t slot_bytes[work_slots] = {0, 0, 0};
        std::size_t fft_area = 0;
        index_t send_elems = 0, recv_elems = 0;
    };
    WorkSizes work_sizes() const;
    // The plan's own arrays, one request each in owned_arrays()'s order (size
    // 0: none): work slots, FFT work area, packed send and receive buffers,
    // then pinned host staging (packed send and receive, array mirrors).
    std::vector<ArrayRequest> array_requests(const WorkSizes& sizes) const;
    std::vector<Buffer*> owned_arrays();
    // Whether MPI moves this reshape's data through pinned host staging.
    bool host_staged(const Reshape& r) const;
    // Allocates (or takes the kept) arrays and wires them into every stage
    // and reshape context. Rank-local.
    void allocate_buffers(const std::vector<ArrayRequest>& wanted);
    // Closes every mapping of a peer's buffer (Transport::maps_peer_memory),
    // then waits for every rank to have done so before any buffer is freed.
    // Collective where a transport maps peers' memory; nothing otherwise.
    // A plan that keeps its arrays hands the mappings on with them instead.
    void release_peer_mappings();
    // The first failure of a rank-local stage (an FFT, a copy) of a transform.
    // The stages after it that are rank-local are skipped, but its reshapes
    // still run (on whatever the buffers hold): the peers, which know nothing
    // of the failure, wait in them for this rank's blocks. The failure is
    // thrown at the end of the transform, where the caller agrees it
    // (all_or_none). A reshape that fails itself still leaves its peers there;
    // if it fails after a local failure (as a device's sticky error fails
    // both), the local one is the cause and its message comes first.
    class LocalFailure {
    public:
        template <class F>
        void unless_failed(F&& f) {
            if (error_) return;
            try {
                f();
            } catch (...) {
                error_ = std::current_exception();
            }
        }
        template <class F>
        void reshape(F&& f) {
            if (!error_) return f();
            try {
                f();
            } catch (const std::exception& later) {
                rethrow_with(later.what());
            } catch (...) {
                rethrow_with("unknown error");
            }
        }
        void rethrow() const {
            if (error_) std::rethrow_exception(error_);
        }

    private:
        // The first failure, of its kind, its message followed by the later one's.
        [[noreturn]] void rethrow_with(const std::string& later) const;
        std::exception_ptr error_;
    };
    void run(Direction d, const void* in, void* out);
    // `tail_out`: where a parted tail (Config::exchange_parts) writes.
    void run_overlap(Stage& s, PhaseTimer& timer, const void* in, void* mid, void* out, void* tail_out,
                     LocalFailure& failed);
    std::size_t layout_bytes(const Layout& layout, std::size_t index) const;
    // The caller's arrays are pinned host memory on a device backend (a
    // transform over every device): not in its memory, but in the host's.
    bool caller_arrays_pinned() const { return multi_ && backend_->device_memory(); }

    Problem problem_;
    Config config_;
    InverseInput inverse_input_ = InverseInput::preserve;
    bool keeps_arrays_ = false;
    std::size_t kept_before_bytes_ = 0, kept_reused_bytes_ = 0;
    Communicator comm_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<MultiDeviceFft> multi_;  // a chain of one all-devices step; destroyed before backend_
    std::vector<Layout> layouts_;  // this rank's forward chain
    std::vector<std::unique_ptr<Communicator>> phase_comms_;
    Datatype element_;
    Buffer work_[work_slots];
    int ranks_on_device_ = 1;
    std::vector<std::pair<std::string, double>> setup_parts_ms_;
    Buffer fft_area_;  // shared by every FFT stage (FftPlan::work_bytes)
    Buffer send_, recv_;
    Buffer host_send_, host_recv_, host_src_, host_dst_;  // pinned staging for host-only MPI
    std::unique_ptr<Pipeline> pipelines_[2];
};

}  // namespace fftune
