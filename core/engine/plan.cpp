#include "core/engine/plan.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "core/engine/decomposition.hpp"
#include "core/engine/fft_descriptor.hpp"
#include "core/engine/kept_arrays.hpp"
#include "core/platform/gpu_aware.hpp"
#include "core/platform/host_memory.hpp"
#include "core/platform/host_scratch.hpp"
#include "core/base/registry.hpp"
#include "core/engine/reshape.hpp"
#include "core/engine/transport.hpp"

namespace fftune {

namespace {

enum Slot { user_in = 0, user_out = 1, work_a = 2, work_b = 3, work_c = 4 };

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", bytes / double(1ull << 30)); }

std::string fft_stage_name(const std::vector<int>& axes) {
    std::string s = "fft.";
    for (int a : axes) s += axis_name(a);
    return s;
}

// The axis along which chain step i, an FFT followed by a reshape, can be
// sliced for overlap: one it does not transform that is the slowest in memory
// of both its layouts, so that each slice is one contiguous range of either
// array. Nothing when step i is not such an FFT or has no such axis.
std::optional<int> overlap_axis(const Chain& chain, std::size_t i) {
    if (i + 1 >= chain.steps.size()) return std::nullopt;
    const ChainStep& fft = chain.steps[i];
    if (fft.kind != ChainStep::Kind::fft || fft.all_devices || chain.steps[i + 1].kind != ChainStep::Kind::reshape)
        return std::nullopt;
    const int axis = chain.layouts[i].order[0];
    if (chain.layouts[i + 1].order[0] != axis) return std::nullopt;
    if (std::find(fft.axes.begin(), fft.axes.end(), axis) != fft.axes.end()) return std::nullopt;
    return axis;
}

// The axis along which the FFT at chain step i can run in parts: the slowest
// of its input that it does not transform (slab_2d1d's fft.x: y). Nothing
// when step i is no single-device FFT.
std::optional<int> tail_axis(const Chain& chain, std::size_t i) {
    const ChainStep& fft = chain.steps[i];
    if (fft.kind != ChainStep::Kind::fft || fft.all_devices) return std::nullopt;
    for (int a : chain.layouts[i].order)
        if (std::find(fft.axes.begin(), fft.axes.end(), a) == fft.axes.end()) return a;
    return std::nullopt;
}

// Planes per slice boundary for slicing layouts a and b (the two arrays of an
// FFT) along `axis`: the fewest that keep every slice's start 16-byte aligned
// in both, since cuFFT refuses real data not aligned as its complex type
// (CUFFT_INVALID_VALUE from a D2Z on 168-byte planes).
index_t slice_granule(const Layout& a, std::size_t a_elem, const Layout& b, std::size_t b_elem, int axis) {
    constexpr std::size_t align = 16;
    auto plane = [&](const Layout& l, std::size_t e) {
        const index_t n = l.box.extent(axis);
        return n > 0 ? static_cast<std::size_t>(l.box.count() / n) * e : 0;
    };
    const std::size_t pa = plane(a, a_elem), pb = plane(b, b_elem);
    index_t g = 1;
    while ((g * pa) % align || (g * pb) % align) ++g;
    return g;
}


// Plan::build's walk over this rank's chain. Walk position k: forward walks
// steps 0..n-1 from layouts[i] to layouts[i+1]; inverse walks back. Arrays
// alternate between the work slots.
struct Walk {
    bool fwd = true;
    std::size_t nsteps = 0;
    std::vector<bool> skip;      // at k: no stage (a reshape of a block onto itself)
    std::vector<bool> pair_at;   // at k: the first of an overlapped FFT + reshape pair
    std::vector<bool> aside_at;  // at k: an FFT that stores the next reshape's self block aside
    std::vector<bool> tail_at;   // at k: the pair at k also runs the FFT at k + 2, in parts (parted_tails)
    std::vector<Slot> array;     // array[t]: the slot between walk positions t - 1 and t

    std::size_t step(std::size_t k) const { return fwd ? k : nsteps - 1 - k; }
    std::size_t from(std::size_t k) const { return fwd ? step(k) : step(k) + 1; }
    std::size_t to(std::size_t k) const { return fwd ? step(k) + 1 : step(k); }
    Slot slot_in(std::size_t k) const { return array[k]; }
    Slot slot_out(std::size_t k) const { return array[k + 1]; }
};

bool transport_runs_alone(const Config& config, int phase) {
    return Registry<Transport>::instance().create(config.redistribution[phase])->runs_alone();
}

// A reshape that only this rank takes part in, between equal layouts, would
// copy its own block onto itself (one rank; a phase of one rank in a 1 x P
// grid): it is no stage, the next one reads the array in place. Not at the
// ends, where it would have to move the caller's array into the other, nor
// for a transport that runs alone (Transport::runs_alone).
std::vector<bool> skipped_reshapes(const Walk& w, const Chain& mine, const std::vector<bool>& self,
                                   const Config& config) {
    std::vector<bool> skip(w.nsteps, false);
    for (std::size_t k = 1; k + 1 < w.nsteps; ++k) {
        const std::size_t i = w.step(k);
        skip[k] = self[i] && !transport_runs_alone(config, mine.steps[i].phase);
    }
    return skip;
}

// Overlap pairs: chain step j, an FFT, and the reshape j + 1 after it, walked
// forward as FFT then reshape (positions k, k + 1), inverse as reshape then FFT.
std::vector<bool> overlap_pairs(const Walk& w, const Chain& mine, const Config& config) {
    std::vector<bool> pair_at(w.nsteps + 1, false);
    for (std::size_t k = 0; config.overlap > 1 && k + 1 < w.nsteps; ++k) {
        const std::size_t i = w.step(k);
        pair_at[k] = w.fwd ? overlap_axis(mine, i).has_value() && !w.skip[k + 1]
                           : mine.steps[i].kind == ChainStep::Kind::reshape && i >= 1 &&
                                 overlap_axis(mine, i - 1).has_value() && !w.skip[k];
        if (pair_at[k]) ++k;
    }
    return pair_at;
}

// Parted tails (Config::exchange_parts): forward, the overlapped pair right
// before the last stage, an FFT with a tail_axis. That FFT runs in parts along
// the axis, and each slice of the pair is reshaped part by part.
std::vector<bool> parted_tails(const Walk& w, const Chain& mine, const Config& config) {
    std::vector<bool> tail_at(w.nsteps + 1, false);
    if (!w.fwd || !config.parted() || w.nsteps < 3) return tail_at;
    const std::size_t k = w.nsteps - 3;
    tail_at[k] = w.pair_at[k] && tail_axis(mine, w.step(k + 2)).has_value();
    return tail_at;
}

// FFT stages that store the self block of the reshape after them into its
// destination (Config::fft_stores_kept): asked of the backend for each FFT
// at walk position k followed by a reshape that runs on its own.
std::vector<bool> ffts_storing_aside(const Walk& w, const Chain& mine, const Config& config) {
    std::vector<bool> aside_at(w.nsteps + 1, false);
    for (std::size_t k = 0; config.fft_stores_kept && k + 1 < w.nsteps; ++k)
        aside_at[k] = mine.steps[w.step(k)].kind == ChainStep::Kind::fft && !mine.steps[w.step(k)].all_devices &&
                      mine.steps[w.step(k + 1)].kind == ChainStep::Kind::reshape && !w.skip[k + 1] && !w.pair_at[k] &&
                      !(k >= 1 && w.pair_at[k - 1]);
    return aside_at;
}

// Array t lies between walk positions t - 1 and t: the caller's input and
// output at the ends, work slots between. Neighbours differ, and a pair's
// three arrays all differ (its slices read one while writing another), so
// a pair whose first and last array would share a slot takes a third one;
// so does an FFT that stores aside into the array after the next (it
// writes there while it reads its input).
std::vector<Slot> array_slots(const Walk& w) {
    std::vector<Slot> array(w.nsteps + 1, user_in);
    array[w.nsteps] = user_out;
    for (std::size_t t = 1; t < w.nsteps; ++t) {
        if (w.skip[t - 1]) {  // no stage between t - 1 and t: the same array
            array[t] = array[t - 1];
            continue;
        }
        for (Slot s : {work_a, work_b, work_c})
            if (s != array[t - 1] && !(t >= 2 && (w.pair_at[t - 2] || w.aside_at[t - 2]) && s == array[t - 2])) {
                array[t] = s;
                break;
            }
    }
    return array;
}

Walk walk_of(const Chain& mine, const std::vector<bool>& self, const Config& config, bool fwd) {
    Walk w;
    w.fwd = fwd;
    w.nsteps = mine.steps.size();
    w.skip = skipped_reshapes(w, mine, self, config);
    w.pair_at = overlap_pairs(w, mine, config);
    w.aside_at = ffts_storing_aside(w, mine, config);
    w.tail_at = parted_tails(w, mine, config);
    w.array = array_slots(w);
    return w;
}

// Whether rank 0's forward walk, as Plan::build makes it, has a parted tail
// (Config::exchange_parts). Every rank's walk has the same steps.
bool forward_has_parted_tail(const Problem& problem, const Config& config) {
    const auto decomposition = Registry<Decomposition>::instance().create(config.decomposition);
    std::vector<Chain> chains;
    for (int r = 0; r < problem.ranks; ++r) chains.push_back(decomposition->chain(problem, config, r));
    settle_unexchanged_orders(chains);
    merge_unexchanged_ffts(chains, [&](int phase, bool) { return !transport_runs_alone(config, phase); });
    const Walk w = walk_of(chains[0], self_reshapes(chains)[0], config, true);
    return std::find(w.tail_at.begin(), w.tail_at.end(), true) != w.tail_at.end();
}

}  // namespace

namespace {

// Whether the ranks sharing a device (host backends: the node) fit `need`
// bytes each in its free memory: the reason they do not, on this rank (empty
// when they do), and how many ranks share its device. Collective.
struct MemoryFit {
    bool known = false;  // the backend reports its memory on every rank
    bool host = false;   // a host backend that reports no memory of its own: the node's host memory
    int sharers = 1;
    std::string error;
};

MemoryFit memory_fit(MPI_Comm comm, const Backend& backend, std::size_t need) {
    MemoryFit fit;
    std::optional<DeviceMemory> mem;
    all_or_none(comm, [&] {
        mem = backend.device_memory_info();
        if (!mem && !backend.device_memory()) mem = host_memory_info(), fit.host = true;
    });
    if (!all_ok(comm, mem.has_value())) return fit;
    fit.known = true;
    MPI_Comm node_comm = MPI_COMM_NULL;
    FFTUNE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm));
    Communicator node(node_comm);
    constexpr int id_len = 64;
    char id[id_len] = {};
    mem->device.copy(id, id_len - 1);
    const int n = node.size();
    std::vector<char> ids(static_cast<std::size_t>(n) * id_len);
    std::vector<unsigned long long> needs(n);
    unsigned long long mine = need;
    FFTUNE_MPI_CHECK(MPI_Allgather(id, id_len, MPI_CHAR, ids.data(), id_len, MPI_CHAR, node.get()));
    FFTUNE_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, needs.data(), 1, MPI_UNSIGNED_LONG_LONG, node.get()));
    unsigned long long shared_need = 0;
    fit.sharers = 0;
    for (int r = 0; r < n; ++r)
        if (std::string(&ids[static_cast<std::size_t>(r) * id_len]) == id) shared_need += needs[r], ++fit.sharers;
    if (shared_need > mem->free && fit.host)
        fit.error = fmt::format("does not fit in host memory: {} rank(s) on this node need {} (this rank {}), {} of its "
                                "{} are available",
                                fit.sharers, gib(shared_need), gib(need), gib(mem->free), gib(mem->total));
    else if (shared_need > mem->free)
        fit.error = fmt::format(
            "does not fit in device memory: {} rank(s) on device {} need {} (this rank {}: input, output, work "
            "arrays, FFT work area, staging buffers), {} of its {} are free",
            fit.sharers, mem->device, gib(shared_need), gib(need), gib(mem->free), gib(mem->total));
    return fit;
}

}  // namespace

// (plan.hpp) Refuses, on every rank and before anything is allocated, a plan whose ranks
// would together need more than the free memory of a device they share; on
// host backends, more than the node's available host memory. Returns the most
// ranks that share one device (1 on host backends). Collective.
int require_device_memory(MPI_Comm comm, const Backend& backend, std::size_t need) {
    const MemoryFit fit = memory_fit(comm, backend, need);
    if (!fit.known) return 1;
    if (auto e = agree_error(comm, fit.error)) throw Unsupported(*e);
    if (fit.host) return 1;
    int most = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&fit.sharers, &most, 1, MPI_INT, MPI_MAX, comm));
    return most;
}

// (plan.hpp)
bool fits_in_device_memory(MPI_Comm comm, const Backend& backend, std::size_t need) {
    const MemoryFit fit = memory_fit(comm, backend, need);
    return all_ok(comm, fit.known && fit.error.empty());
}

struct Plan::Reshape {
    ReshapePlan plan;
    ReshapeContext ctx;
    std::unique_ptr<Transport> transport;
    ReshapePhases phases;
};

// Two chain steps run slice by slice (Config::overlap): an FFT and the reshape
// next to it, through the array `mid`. Forward: slice c is transformed on the
// overlap queue and then reshaped on queue 0 while slice c + 1 is transformed.
// Inverse: slice c is reshaped, then transformed on the overlap queue while
// slice c + 1 is reshaped.
struct Plan::Overlap {
    struct Slice {
        std::shared_ptr<FftPlan> fft;  // null for an empty slice; equal slices share one
        std::size_t fft_in = 0, fft_out = 0;  // byte offsets of the slice in the FFT's arrays
        std::unique_ptr<Reshape> reshape;     // null where the slice moves in parts
        std::vector<std::unique_ptr<Reshape>> parts;  // part p: what the tail's part p reads
    };
    bool fft_first = true;
    int queue = 0;  // backend queue of the FFT slices
    Slot mid = work_a;
    std::size_t mid_bytes = 0;
    std::vector<Slice> slices;
    // Config::exchange_parts: the next stage's FFT in parts (fft and offsets
    // only), each on the overlap queue into `tail_out`, timed as `tail_phase`.
    // Empty: none.
    std::vector<Slice> tail;
    Slot tail_out = user_out;
    int tail_phase = -1;
    // The moves (slice, part) in the order they run: by slice + part, the
    // lower part first on a tie, so that part p of the last slice moves before
    // part p + 1 of the slices before it.
    std::vector<std::pair<std::size_t, std::size_t>> parted_order;
};

struct Plan::Stage {
    std::string name;
    std::unique_ptr<FftPlan> fft;  // null for reshapes and for empty boxes
    int fft_phase = -1;
    std::unique_ptr<Reshape> reshape;
    std::unique_ptr<Overlap> overlap;  // an overlapped FFT + reshape (fft_phase times its FFT slices)
    index_t copy_elems = 0;  // > 0: a plain copy stage (complex elements)
    Slot in = user_in, out = user_out;
    std::size_t in_bytes = 0, out_bytes = 0;  // of the arrays it reads and writes
    // The work slot the FFT stores the next reshape's self block into (FftPlan::stores_aside).
    std::optional<Slot> store_target;

    template <class F>
    void for_each_fft(F&& f) {
        if (fft) f(*fft);
        if (overlap)
            for (auto* list : {&overlap->slices, &overlap->tail})
                for (auto& c : *list)
                    if (c.fft) f(*c.fft);
    }
    // The array its reshapes read: the FFT slices' output forward, else its input.
    Slot reshape_source() const { return overlap && overlap->fft_first ? overlap->mid : in; }
    // The array its reshapes write: the FFT slices' input inverse, else its output.
    Slot reshape_destination() const { return overlap && !overlap->fft_first ? overlap->mid : out; }

    template <class F>
    void for_each_reshape(F&& f) {
        if (reshape) f(*reshape);
        if (overlap)
            for (auto& c : overlap->slices) {
                if (c.reshape) f(*c.reshape);
                for (auto& r : c.parts) f(*r);
            }
    }
};

struct Plan::Pipeline {
    explicit Pipeline(Backend& b) : timer(b) {}
    std::vector<Stage> stages;
    PhaseTimer timer;
    std::vector<PhaseTraffic> traffic;  // by phase index

    void add_traffic(int phase, std::size_t device, std::size_t sent = 0, std::size_t received = 0) {
        if (phase < 0) return;
        if (traffic.size() <= static_cast<std::size_t>(phase)) traffic.resize(phase + 1);
        PhaseTraffic& t = traffic[phase];
        t.device_bytes += device, t.sent_bytes += sent, t.received_bytes += received;
    }
    // One reshape's floor traffic, in the phase that does the work: transports that
    // pack inside the exchange get it all there, and one without a receive buffer
    // (cuda_ipc) writes incoming blocks into place during the exchange.
    void add_traffic(const Reshape& r) {
        const auto t = fftune::phase_traffic(r.plan, *r.transport, r.phases);
        add_traffic(r.phases.pack, t.pack.device_bytes);  // no pack phase: nothing added here
        add_traffic(r.phases.unpack, t.unpack.device_bytes);
        add_traffic(r.phases.exchange, t.exchange.device_bytes, t.exchange.sent_bytes, t.exchange.received_bytes);
    }
};

std::optional<std::string> check_applicable(const Problem& problem, const Config& config, bool placement) {
    if (problem.kind != "fft3d")
        throw std::invalid_argument("problem kind '" + problem.kind + "' is not fft3d");
    for (int a = 0; a < 3; ++a)
        if (problem.size[a] < 1)
            throw std::invalid_argument("size " + size_string(problem.size) + " has an empty axis");
    const auto decomposition = Registry<Decomposition>::instance().create(config.decomposition);
    const auto backend = Registry<Backend>::instance().create(config.backend);
    if (static_cast<int>(config.redistribution.size()) != decomposition->redistribution_phases())
        throw std::invalid_argument(fmt::format(
            "{} has {} redistribution phase(s) but {} method(s) were given", config.decomposition,
            decomposition->redistribution_phases(), config.redistribution.size()));
    if (auto why = backend->unavailable()) return why;
    if (config.gpu_aware && !backend->device_memory())
        return fmt::format("gpu_aware applies to device buffers; backend {} keeps data in host memory",
                           config.backend);
    if (config.gpu_aware)
        if (auto why = gpu_aware_unavailable(*backend)) return why;
    if (config.overlap < 1)
        throw std::invalid_argument(fmt::format("overlap {} is not a chunk count (allowed: 1 for none, or more)", config.overlap));
    if (config.exchange_parts < 1)
        throw std::invalid_argument(
            fmt::format("exchange_parts {} is not a part count (allowed: 1 for none, or more)", config.exchange_parts));
    if (auto why = decomposition->not_applicable(problem, config)) return why;
    const Chain chain0 = decomposition->chain(problem, config, 0);
    const auto& steps = chain0.steps;
    if (config.overlap > 1) {
        bool any = false;
        for (std::size_t i = 0; i < steps.size(); ++i) any = any || overlap_axis(chain0, i).has_value();
        if (!any)
            return fmt::format("overlap needs an FFT stage next to a reshape whose slowest axis it does not "
                               "transform; {}/{} has none",
                               config.decomposition, to_string(config.layout));
    }
    if (config.overlap > 1 && problem.ranks == 1 &&
        std::none_of(config.redistribution.begin(), config.redistribution.end(), [](const std::string& m) {
            return Registry<Transport>::instance().contains(m) && Registry<Transport>::instance().create(m)->runs_alone();
        }))
        return "overlap needs a reshape between ranks; at one rank the plan has none (each rank's block stays in place)";
    if (config.parted() && problem.direction == Direction::inverse)
        return "exchange_parts is built for the forward only (its last FFT in parts behind the exchange); the inverse "
               "would part its first FFT instead";
    if (config.parted() && !forward_has_parted_tail(problem, config))
        return fmt::format("exchange_parts needs an overlapped FFT + reshape between ranks right before the last "
                           "stage, an FFT with an axis it does not transform; {}/{} at {}x{} has none",
                           config.decomposition, to_string(config.layout), config.process_grid[0],
                           config.process_grid[1]);
    if (std::any_of(steps.begin(), steps.end(), [](const ChainStep& s) { return s.all_devices; }))
        if (auto why = backend->multi_device_unavailable(problem.size, problem.precision)) return why;
    for (const auto& method : config.redistribution) {
        const auto transport = Registry<Transport>::instance().create(method);
        if (auto why = transport->not_applicable(*backend, config.gpu_aware)) return why;
        if (placement)
            if (auto why = transport->not_runnable_here(*backend)) return why;
    }
    if (config.fft_stores_kept) {
        if (problem.ranks == 1 || config.redistribution.empty())
            return "fft_stores_kept needs a reshape between ranks; this plan has none";
        if (config.overlap > 1) return "fft_stores_kept with overlap is not built (each FFT slice would store its part)";
        if (auto why = backend->store_aside_unavailable()) return why;
        for (const auto& method : config.redistribution)
            if (Registry<Transport>::instance().create(method)->uses_whole_arrays())
                return fmt::format("fft_stores_kept: {} moves the self block in its MPI datatypes, not by a copy "
                                   "the FFT could replace",
                                   method);
    }
    return std::nullopt;
}

Plan::Plan(MPI_Comm comm, const Problem& problem, const Config& config, InverseInput inverse_input,
           ArrayLifetime arrays)
    : problem_(problem),
      config_(config),
      inverse_input_(inverse_input),
      keeps_arrays_(arrays == ArrayLifetime::kept && KeptArrays::instance().in_job()),
      comm_(Communicator::duplicate(comm)) {
    // Rank-local work (checks, planning, allocation) is agreed before each
    // collective step, so that a rank that fails leaves with the others
    // instead of leaving them waiting in a call it never makes (all_or_none).
    const MPI_Comm comm_all = comm_.get();
    auto last = std::chrono::steady_clock::now();
    auto mark = [&](const char* part) {  // host-blocking steps: host time is their time
        const auto now = std::chrono::steady_clock::now();
        setup_parts_ms_.emplace_back(part, std::chrono::duration<double, std::milli>(now - last).count());
        last = now;
    };
    Chain chain;
    all_or_none(comm_all, [&] {
        if (comm_.size() != problem.ranks)
            throw std::invalid_argument(fmt::format("problem asks for {} ranks, communicator has {}",
                                                    problem.ranks, comm_.size()));
        // Rank-local evidence (a device, the GPU-aware trial) may differ between ranks.
        if (auto why = check_applicable(problem, config))
            throw std::invalid_argument("configuration " + config.key() + " does not apply: " + *why);
        backend_ = Registry<Backend>::instance().create(config.backend);
        chain = Registry<Decomposition>::instance().create(config.decomposition)->chain(problem, config, comm_.rank());
        layouts_ = chain.layouts;
        if (std::any_of(chain.steps.begin(), chain.steps.end(), [](const ChainStep& s) { return s.all_devices; })) {
            if (chain.steps.size() != 1)
                throw std::logic_error("a transform over every device must be the only step of its chain");
            // May throw Unsupported (the library refuses the size): the runner records a skip.
            multi_ = backend_->make_multi_device_fft(problem.size, problem.precision);
        }
        MPI_Datatype element = MPI_DATATYPE_NULL;
        FFTUNE_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(complex_bytes(problem.precision)), MPI_BYTE, &element));
        FFTUNE_MPI_CHECK(MPI_Type_commit(&element));
        element_ = Datatype(element);
    });
    // Phase communicators (collective), in chain order, before the rank-local build.
    for (const ChainStep& step : chain.steps) {
        if (step.kind != ChainStep::Kind::reshape) continue;
        if (phase_comms_.size() <= static_cast<std::size_t>(step.phase)) phase_comms_.resize(step.phase + 1);
        if (!phase_comms_[step.phase])
            phase_comms_[step.phase] = std::make_unique<Communicator>(comm_.split(step.color, comm_.rank()));
    }
    mark("backend_and_comms");

    WorkSizes sizes;
    std::vector<ArrayRequest> wanted;
    all_or_none(comm_all, [&] {
        MadePlans forward_c2c;
        build(Direction::forward, forward_c2c);
        build(Direction::inverse, forward_c2c);
        sizes = work_sizes();
        wanted = array_requests(sizes);
    });
    mark("plans");
    // The last plan's arrays, where they are what this one wants: already in
    // use by the driver's count, so not asked of the check below.
    if (keeps_arrays_) {
        kept_before_bytes_ = KeptArrays::instance().kept_bytes();
        kept_reused_bytes_ = KeptArrays::instance().prepare(comm_all, config.backend, wanted);
    }
    // A transform over every device has made its storage already (the driver's
    // free memory shows it) and keeps the caller's arrays on the host.
    std::size_t own = 0;  // the plan's own arrays in backend memory
    for (const ArrayRequest& r : wanted)
        if (!r.host) own += r.bytes;
    ranks_on_device_ = require_device_memory(
        comm_all, *backend_, (caller_arrays_pinned() ? 0 : input_bytes() + output_bytes()) + own - kept_reused_bytes_);
    mark("memory_check");
    // The check above sees only this rank's device: an allocation may still
    // fail on one rank (what libraries hold, fragmentation).
    all_or_none(comm_all, [&] { allocate_buffers(wanted); });
    mark("allocate");
    // A transport's setup may make collective calls on its phase communicator,
    // which all its members enter; what fails after them is agreed on every
    // rank before the next setup. Every rank then throws at the same setup,
    // and lets go of peers' buffers as ~Plan would (not run for a constructor
    // that throws).
    try {
        for (auto& p : pipelines_)
            for (auto& s : p->stages)
                s.for_each_reshape([&](Reshape& r) { all_or_none(comm_all, [&] { r.transport->setup(r.ctx); }); });
    } catch (...) {
        release_peer_mappings();
        throw;
    }
    mark("transports");
}

Plan::WorkSizes Plan::work_sizes() const {
    WorkSizes w;
    auto hold = [&](int slot, std::size_t bytes) {
        if (slot >= work_a) w.slot_bytes[slot - work_a] = std::max(w.slot_bytes[slot - work_a], bytes);
    };
    for (auto& p : pipelines_)
        for (auto& s : p->stages) {
            hold(s.in, s.in_bytes);
            hold(s.out, s.out_bytes);
            if (s.overlap) hold(s.overlap->mid, s.overlap->mid_bytes);
            s.for_each_fft([&](FftPlan& f) { w.fft_area = std::max(w.fft_area, f.work_bytes()); });
            s.for_each_reshape([&](Reshape& r) {
                if (!r.transport->uses_staging_buffers()) return;
                w.send_elems = std::max(w.send_elems, r.transport->send_buffer_elems(r.plan));
                if (r.transport->uses_recv_buffer())
                    w.recv_elems = std::max(w.recv_elems, r.transport->recv_buffer_elems(r.plan));
            });
        }
    return w;
}

std::vector<ArrayRequest> Plan::array_requests(const WorkSizes& w) const {
    const std::size_t cb = complex_bytes(problem_.precision);
    // Arrays peers may map (a reshape's source or destination, the packed
    // send buffer) in the size the backend maps best.
    bool mapped = false;
    for (auto& p : pipelines_)
        for (auto& s : p->stages) s.for_each_reshape([&](const Reshape& r) { mapped = mapped || r.transport->maps_peer_memory(); });
    auto shared = [&](std::size_t bytes) { return mapped && bytes > 0 ? backend_->mapped_array_bytes(bytes) : bytes; };
    std::vector<ArrayRequest> out;
    for (int k = 0; k < work_slots; ++k) out.push_back({shared(w.slot_bytes[k])});
    out.push_back({w.fft_area});
    out.push_back({shared(static_cast<std::size_t>(w.send_elems) * cb)});
    out.push_back({static_cast<std::size_t>(w.recv_elems) * cb});
    // MPI that cannot read device memory gets pinned host staging: packed
    // buffers for packing transports, array mirrors for derived-datatype ones.
    index_t hs = 0, hr = 0, hsrc = 0, hdst = 0;
    bool packed_staged = false, whole_staged = false;
    for (auto& p : pipelines_)
        for (auto& s : p->stages)
            s.for_each_reshape([&](const Reshape& r) {
                if (!host_staged(r)) return;
                const ReshapePlan& rp = r.plan;
                if (r.transport->uses_whole_arrays()) {
                    whole_staged = true;
                    hsrc = std::max(hsrc, rp.before.box.count());
                    hdst = std::max(hdst, rp.after.box.count());
                } else {
                    packed_staged = true;
                    hs = std::max(hs, rp.send_total);
                    hr = std::max(hr, rp.recv_total);
                }
            });
    // One element at least, so that a rank with nothing to send is still marked staged.
    auto host = [&](bool staged, index_t n) {
        return ArrayRequest{staged ? static_cast<std::size_t>(std::max<index_t>(n, 1)) * cb : 0, true};
    };
    for (auto r : {host(packed_staged, hs), host(packed_staged, hr), host(whole_staged, hsrc), host(whole_staged, hdst)})
        out.push_back(r);
    return out;
}

std::vector<Buffer*> Plan::owned_arrays() {
    std::vector<Buffer*> out;
    for (Buffer& b : work_) out.push_back(&b);
    for (Buffer* b : {&fft_area_, &send_, &recv_, &host_send_, &host_recv_, &host_src_, &host_dst_}) out.push_back(b);
    return out;
}

bool Plan::host_staged(const Reshape& r) const {
    return backend_->device_memory() && !config_.gpu_aware && r.transport->uses_mpi();
}

void Plan::allocate_buffers(const std::vector<ArrayRequest>& wanted) {
    std::vector<Buffer> got;
    if (keeps_arrays_) got = KeptArrays::instance().take(wanted);
    else
        for (const ArrayRequest& r : wanted) got.push_back(r.bytes == 0 ? Buffer() : Buffer(*backend_, r.bytes, r.host));
    const auto arrays = owned_arrays();
    if (got.size() != arrays.size()) throw std::logic_error("Plan: one request per owned array");
    for (std::size_t i = 0; i < got.size(); ++i) *arrays[i] = std::move(got[i]);
    for (auto& p : pipelines_)
        for (auto& s : p->stages)
            if (s.store_target) {
                if (*s.store_target < work_a || s.out < work_a)
                    throw std::logic_error("an FFT stores aside from or into a caller's array");
                s.fft->set_store_arrays(work_[s.out - work_a].data(), work_[*s.store_target - work_a].data());
            }
    if (fft_area_.data())
        for (auto& p : pipelines_)
            for (auto& s : p->stages)
                s.for_each_fft([&](FftPlan& f) {
                    if (f.work_bytes() > 0) f.set_work_area(fft_area_.data());
                });
    for (auto& p : pipelines_)
        for (auto& s : p->stages)
            s.for_each_reshape([&](Reshape& r) {
                ReshapeContext& c = r.ctx;
                c.send_buffer = send_.data();
                c.recv_buffer = recv_.data();
                c.source_array = r.plan.source_owned ? work_[s.reshape_source() - work_a].data() : nullptr;
                c.destination_array = r.plan.destination_owned ? work_[s.reshape_destination() - work_a].data() : nullptr;
                if (host_staged(r)) {
                    if (r.transport->uses_whole_arrays()) {
                        c.host_src_mirror = host_src_.data();
                        c.host_dst_mirror = host_dst_.data();
                    } else {
                        c.host_send = host_send_.data();
                        c.host_recv = host_recv_.data();
                    }
                }
            });
}

Plan::~Plan() { release_peer_mappings(); }

void Plan::release_peer_mappings() {
    bool mapped = false;
    std::vector<std::shared_ptr<const void>> mappings;
    for (auto& p : pipelines_)
        if (p)
            for (auto& s : p->stages)
                s.for_each_reshape([&](Reshape& r) {
                    mapped = mapped || r.transport->maps_peer_memory();
                    for (auto& m : r.transport->peer_mappings()) mappings.push_back(std::move(m));
                });
    if (!mapped) return;
    if (keeps_arrays_) {
        // The peers' arrays outlive their plans, and so do the mappings of
        // them: nothing is freed here, so nobody waits.
        KeptArrays::instance().hold_mappings(mappings);
        pipelines_[0].reset();
        pipelines_[1].reset();
        return;
    }
    mappings.clear();
    pipelines_[0].reset();  // every mapping of a peer's buffer closed here...
    pipelines_[1].reset();
    MPI_Barrier(comm_.get());  // ...and on every rank, before the buffers are freed
}

// Plan::build's stages for one direction, in walk order, into `pipe`.
struct Plan::Builder {
    Plan& plan;
    const std::vector<Chain>& chains;  // every rank's
    const Chain& mine;
    const Walk& walk;
    Pipeline& pipe;
    int size = 0, rank = 0;
    bool fwd = true;
    std::size_t cb = 0;  // bytes of a complex element
    MadePlans& forward_c2c;  // filled by the forward's build, read by the inverse's

    FftKind fft_kind(std::size_t i) const {
        return fwd ? (i == 0 ? FftKind::r2c : FftKind::c2c_forward) : (i == 0 ? FftKind::c2r : FftKind::c2c_backward);
    }
    std::size_t element_bytes(std::size_t layout) const {
        return layout == 0 ? real_bytes(plan.problem_.precision) : cb;
    }

    // The reshape of chain step i from layouts[from] to layouts[to], among the
    // ranks of its phase communicator; `moving` restricts it to one slice of
    // every rank's before (or after) box, `moving_after` also to one part of
    // every rank's after box.
    using Moving = std::function<Box3(int, const Layout&)>;
    std::unique_ptr<Reshape> make_reshape(std::size_t i, std::size_t from, std::size_t to, const Moving& moving,
                                          bool moving_before, bool self_in_place = false,
                                          const Moving& moving_after = nullptr) {
        const ChainStep& step = mine.steps[i];  // its phase communicator: made by the constructor
        std::vector<Layout> before, after;
        std::vector<Box3> moved, moved_after;
        int self = -1;
        for (int r = 0; r < size; ++r) {
            if (chains[r].steps[i].color != step.color) continue;
            if (r == rank) self = static_cast<int>(before.size());
            before.push_back(chains[r].layouts[from]);
            after.push_back(chains[r].layouts[to]);
            if (moving) moved.push_back(moving(r, moving_before ? before.back() : after.back()));
            if (moving_after) moved_after.push_back(moving_after(r, after.back()));
        }
        auto rs = std::make_unique<Reshape>();
        rs->plan = make_reshape_plan(step.phase, self, before, after, cb, moving_before ? moved : std::vector<Box3>{},
                                     moving_after ? moved_after : moving_before ? std::vector<Box3>{} : moved);
        rs->plan.self_in_place = self_in_place;
        rs->transport = Registry<Transport>::instance().create(plan.config_.redistribution[step.phase]);
        rs->ctx.plan = &rs->plan;
        rs->ctx.comm = plan.phase_comms_[step.phase]->get();
        rs->ctx.backend = plan.backend_.get();
        rs->ctx.element = plan.element_.get();
        const std::string n = std::to_string(step.phase);
        if (rs->transport->separate_pack_phases()) rs->phases.pack = pipe.timer.phase("pack." + n);
        rs->phases.exchange = pipe.timer.phase("exchange." + n);
        if (rs->transport->separate_pack_phases()) rs->phases.unpack = pipe.timer.phase("unpack." + n);
        pipe.add_traffic(*rs);
        return rs;
    }

    // The stage at walk position k (not skipped); an overlap pair also takes k + 1.
    void add_stage(std::size_t k) {
        const std::size_t i = walk.step(k), from = walk.from(k), to = walk.to(k);
        const ChainStep& step = mine.steps[i];
        Stage stage;
        stage.in = walk.slot_in(k);
        stage.out = walk.slot_out(k);
        stage.in_bytes = plan.layout_bytes(mine.layouts[from], from);
        stage.out_bytes = plan.layout_bytes(mine.layouts[to], to);
        if (walk.pair_at[k]) {
            add_overlap_pair(k, std::move(stage));
            return;
        }
        if (step.kind == ChainStep::Kind::fft && step.all_devices) {
            // In place in the MultiDeviceFft's storage, timed by its all-device clock.
            stage.name = fft_stage_name(step.axes);
            stage.fft_phase = pipe.timer.phase(stage.name, plan.multi_->make_clock());
        } else if (step.kind == ChainStep::Kind::fft) {
            make_fft(k, stage);
        } else {
            stage.name = "reshape." + std::to_string(step.phase);
            // Where the FFT before stored the self block here already, the transport leaves it.
            stage.reshape = make_reshape(i, from, to, nullptr, true,
                                         !pipe.stages.empty() && pipe.stages.back().store_target.has_value());
            stage.reshape->plan.source_owned = stage.reshape_source() >= work_a;
            stage.reshape->plan.destination_owned = stage.reshape_destination() >= work_a;
        }
        pipe.stages.push_back(std::move(stage));
    }

    // The FFT of the stage at walk position k; before it, a copy of the
    // caller's spectrum where a c2r would overwrite it.
    void make_fft(std::size_t k, Stage& stage) {
        const std::size_t i = walk.step(k), from = walk.from(k), to = walk.to(k);
        const ChainStep& step = mine.steps[i];
        const FftKind kind = fft_kind(i);
        if (kind == FftKind::c2r && stage.in == user_in && plan.inverse_input_ == InverseInput::preserve) {
            // c2r may overwrite its input (FFTW, cuFFT): transform a copy.
            Stage copy;
            copy.name = "copy.in";
            copy.fft_phase = pipe.timer.phase(copy.name);
            copy.copy_elems = mine.layouts[from].box.count();
            copy.in = user_in;
            copy.out = work_a;
            copy.in_bytes = copy.out_bytes = stage.in_bytes;
            pipe.add_traffic(copy.fft_phase, 2 * copy.in_bytes);
            pipe.stages.push_back(std::move(copy));
            stage.in = work_a;
            if (stage.out == work_a) throw std::logic_error("copy.in would alias the stage output");
        }
        stage.name = fft_stage_name(step.axes);
        stage.fft_phase = pipe.timer.phase(stage.name);
        if (auto desc = fft_descriptor(mine.layouts[from], mine.layouts[to], step.axes, kind, plan.problem_.precision,
                                       plan.problem_.size[2])) {
            if (walk.aside_at[k]) {
                // The next reshape's self block: in both this stage's output and its destination.
                const Layout& dst = mine.layouts[walk.to(k + 1)];
                const Box3 self_block = intersect(mine.layouts[to].box, dst.box);
                if (!self_block.empty())
                    desc->store_aside = StoreAside{mine.layouts[to], self_block, dst, mine.layouts[from].order};
            }
            stage.fft = new_fft(*desc);
            if (desc->store_aside && stage.fft->stores_aside()) stage.store_target = walk.slot_out(k + 1);
        }
        pipe.add_traffic(stage.fft_phase, stage.in_bytes + stage.out_bytes);
    }

    // The FFT plan of `desc`. An inverse c2c stage whose transform the forward
    // planned already (same shape, strides and queue) runs that plan reversed
    // where the backend can: each cuFFT plan costs 0.3-0.6 ms to make, and a
    // slab's x-FFT or a pencil's x- and y-FFTs are the same both ways. Both
    // get the plan's one work area and run on one queue, one after another.
    std::unique_ptr<FftPlan> new_fft(const FftDescriptor& desc) {
        if (desc.kind == FftKind::c2c_backward) {
            FftDescriptor as_forward = desc;
            as_forward.kind = FftKind::c2c_forward;
            for (const auto& [made_desc, made] : forward_c2c)
                if (same_fft_plan(made_desc, as_forward))
                    if (auto twin = made->reversed()) return twin;
        }
        auto made = plan.backend_->make_fft(desc);
        if (fwd && desc.kind == FftKind::c2c_forward) forward_c2c.emplace_back(desc, made.get());
        return made;
    }

    // The overlapped FFT + reshape pair at walk positions k and k + 1, one stage of slices.
    void add_overlap_pair(std::size_t k, Stage stage) {
        const std::size_t i = walk.step(k), to = walk.to(k);
        const std::size_t j = fwd ? i : i - 1;  // the pair's FFT step
        const int axis = *overlap_axis(mine, j);
        const int chunks = plan.config_.overlap;
        const ChainStep& fft_step = mine.steps[j];
        // The FFT goes between layouts j and j + 1, the reshape between
        // j + 1 and j + 2; slices are cut from layout j + 1 (and j) along `axis`.
        const std::size_t fft_from = fwd ? j : j + 1, fft_to = fwd ? j + 1 : j;
        const std::size_t rs_from = fwd ? j + 1 : j + 2, rs_to = fwd ? j + 2 : j + 1;
        auto ov = std::make_unique<Overlap>();
        ov->fft_first = fwd;
        ov->queue = plan.backend_->overlap_queue();
        ov->mid = walk.slot_out(k);
        ov->mid_bytes = plan.layout_bytes(mine.layouts[to], to);
        stage.out = walk.slot_out(k + 1);
        stage.out_bytes = plan.layout_bytes(mine.layouts[walk.to(k + 1)], walk.to(k + 1));
        stage.name = "overlap." + std::to_string(mine.steps[j + 1].phase);
        // Phases in walk order: the FFT's before the reshape's forward, after them inverse.
        auto fft_phase = [&] {
            stage.fft_phase = pipe.timer.phase(fft_stage_name(fft_step.axes), plan.backend_->make_clock_on(ov->queue));
        };
        if (fwd) fft_phase();
        // Slices of rank r start on multiples of its granule of planes.
        auto granule = [&](int r) {
            return slice_granule(chains[r].layouts[j], element_bytes(j), chains[r].layouts[j + 1],
                                 element_bytes(j + 1), axis);
        };
        // Tapered: the slice whose FFT runs alone (forward the first, inverse the last) is the smallest.
        const bool tapered = plan.config_.tapered();
        auto cut = [&](const Box3& box, int c, index_t granule) {
            return slice_of(box, axis, chunks, c, granule, tapered, fwd);
        };
        const index_t g = granule(rank);
        const bool parted = walk.tail_at[k];
        // The tail's parts of rank r's boxes (parted): along the last FFT's tail_axis.
        const std::size_t t = parted ? walk.step(k + 2) : 0;
        const int parts = parted ? plan.config_.exchange_parts : 1;
        const int part_axis = parted ? *tail_axis(mine, t) : 0;
        auto part_granule = [&](int r) {
            return slice_granule(chains[r].layouts[t], element_bytes(t), chains[r].layouts[t + 1], element_bytes(t + 1),
                                 part_axis);
        };
        // Slices of one shape share a plan: they run one after another on one
        // queue, and each cuFFT plan costs about 0.3-0.6 ms to make.
        std::optional<FftDescriptor> made;
        std::shared_ptr<FftPlan> made_plan;
        for (int c = 0; c < chunks; ++c) {
            Overlap::Slice slice;
            const Layout& fa = mine.layouts[fft_from];
            const Layout& fb = mine.layouts[fft_to];
            const Layout sa{cut(fa.box, c, g), fa.order};
            const Layout sb{cut(fb.box, c, g), fb.order};
            if (auto desc = fft_descriptor(sa, sb, fft_step.axes, fft_kind(j), plan.problem_.precision,
                                           plan.problem_.size[2])) {
                desc->queue = ov->queue;
                if (!made || !same_fft_plan(*made, *desc)) {
                    made_plan = new_fft(*desc);
                    made = desc;
                }
                slice.fft = made_plan;
                slice.fft_in = static_cast<std::size_t>(fa.offset_of(sa.box.lo)) * element_bytes(fft_from);
                slice.fft_out = static_cast<std::size_t>(fb.offset_of(sb.box.lo)) * element_bytes(fft_to);
            }
            auto sliced = [&, c](int r, const Layout& l) { return cut(l.box, c, granule(r)); };
            if (!parted)
                slice.reshape = make_reshape(j + 1, rs_from, rs_to, sliced, fwd);
            for (int p = 0; p < (parted ? parts : 0); ++p)
                slice.parts.push_back(make_reshape(j + 1, rs_from, rs_to, sliced, true, false,
                                                   [&, p](int r, const Layout& l) {
                                                       return slice_of(l.box, part_axis, parts, p, part_granule(r));
                                                   }));
            if (!fwd && c == 0) fft_phase();
            ov->slices.push_back(std::move(slice));
        }
        pipe.add_traffic(stage.fft_phase, plan.layout_bytes(mine.layouts[fft_from], fft_from) +
                                              plan.layout_bytes(mine.layouts[fft_to], fft_to));
        if (parted) add_tail(k, *ov, parts, part_axis, part_granule);
        stage.overlap = std::move(ov);
        stage.for_each_reshape([&](Reshape& r) {
            r.plan.source_owned = stage.reshape_source() >= work_a;
            r.plan.destination_owned = stage.reshape_destination() >= work_a;
        });
        pipe.stages.push_back(std::move(stage));
    }

    // The parted tail of the pair at walk position k (Config::exchange_parts):
    // the FFT at k + 2 in `parts` parts along `axis`, from the pair's output
    // into the array after it. Equal parts share one plan.
    void add_tail(std::size_t k, Overlap& ov, int parts, int axis, const std::function<index_t(int)>& granule) {
        const std::size_t t = walk.step(k + 2);
        const ChainStep& fft_step = mine.steps[t];
        ov.tail_out = walk.slot_out(k + 2);
        ov.tail_phase = pipe.timer.phase(fft_stage_name(fft_step.axes), plan.backend_->make_clock_on(ov.queue));
        const Layout& fa = mine.layouts[t];
        const Layout& fb = mine.layouts[t + 1];
        std::optional<FftDescriptor> made;
        std::shared_ptr<FftPlan> made_plan;
        for (int p = 0; p < parts; ++p) {
            Overlap::Slice part;
            const Layout sa{slice_of(fa.box, axis, parts, p, granule(rank)), fa.order};
            const Layout sb{slice_of(fb.box, axis, parts, p, granule(rank)), fb.order};
            if (auto desc = fft_descriptor_of_part(fa, fb, sa.box, sb.box, fft_step.axes, fft_kind(t),
                                                   plan.problem_.precision, plan.problem_.size[2])) {
                desc->queue = ov.queue;
                if (!made || !same_fft_plan(*made, *desc)) {
                    made_plan = new_fft(*desc);
                    made = desc;
                }
                part.fft = made_plan;
                part.fft_in = static_cast<std::size_t>(fa.offset_of(sa.box.lo)) * element_bytes(t);
                part.fft_out = static_cast<std::size_t>(fb.offset_of(sb.box.lo)) * element_bytes(t + 1);
            }
            ov.tail.push_back(std::move(part));
        }
        pipe.add_traffic(ov.tail_phase, plan.layout_bytes(fa, t) + plan.layout_bytes(fb, t + 1));
        for (std::size_t c = 0; c < ov.slices.size(); ++c)
            for (std::size_t p = 0; p < std::size_t(parts); ++p) ov.parted_order.emplace_back(c, p);
        std::sort(ov.parted_order.begin(), ov.parted_order.end(), [](auto a, auto b) {
            return std::pair(a.first + a.second, a.second) < std::pair(b.first + b.second, b.second);
        });
    }
};

void Plan::build(Direction dir, MadePlans& forward_c2c) {
    const auto decomposition = Registry<Decomposition>::instance().create(config_.decomposition);
    const int size = comm_.size(), rank = comm_.rank();
    const bool fwd = dir == Direction::forward;
    std::vector<Chain> chains;
    chains.reserve(size);
    for (int r = 0; r < size; ++r) chains.push_back(decomposition->chain(problem_, config_, r));
    settle_unexchanged_orders(chains);
    // An inverse that preserves the caller's spectrum keeps its first stage
    // apart from the c2r: as one stage the c2r would read the spectrum and
    // need a copy of it first (copy.in). At one rank pencil's inverse is then
    // x + a y,z c2r, as slab's: 0.14 ms at 256^3 single on an H200, against
    // 0.18 ms for x,y + z, whose y pass loops (a CUDA graph of 129-256 cuFFT
    // calls, 2-3 ms to capture on its first run).
    merge_unexchanged_ffts(chains, [&](int phase, bool c2r_first) {
        if (c2r_first && !fwd && inverse_input_ == InverseInput::preserve) return false;
        return !transport_runs_alone(config_, phase);
    });
    const std::vector<std::vector<bool>> self = self_reshapes(chains);
    const Chain& mine = chains[rank];
    const Walk walk = walk_of(mine, self[rank], config_, fwd);
    auto pipe = std::make_unique<Pipeline>(*backend_);
    Builder builder{*this, chains, mine, walk, *pipe, size, rank, fwd, complex_bytes(problem_.precision), forward_c2c};
    for (std::size_t k = 0; k < walk.nsteps; ++k) {
        if (walk.skip[k]) continue;
        builder.add_stage(k);
        if (walk.pair_at[k]) k += walk.tail_at[k] ? 2 : 1;  // the pair's second step (and its tail) are done
    }
    pipelines_[static_cast<int>(dir)] = std::move(pipe);
}

const Layout& Plan::input_layout() const { return layouts_.front(); }
const Layout& Plan::output_layout() const { return layouts_.back(); }

std::size_t Plan::input_bytes() const {
    return static_cast<std::size_t>(input_count()) * real_bytes(problem_.precision);
}
std::size_t Plan::output_bytes() const {
    return static_cast<std::size_t>(output_count()) * complex_bytes(problem_.precision);
}
std::size_t Plan::workspace_bytes() const {
    return work_[0].bytes() + work_[1].bytes() + work_[2].bytes() + fft_area_.bytes() + send_.bytes() + recv_.bytes() +
           (multi_ ? multi_->device_bytes() : 0);
}
std::size_t Plan::backend_bytes() const {
    return (caller_arrays_pinned() ? 0 : input_bytes() + output_bytes()) + workspace_bytes();
}
bool Plan::buffers_on_host() const { return multi_ != nullptr || !backend_->device_memory(); }
Buffer Plan::allocate_input() {
    if (multi_) return host_scratch(ScratchRole::plan_input).lend(input_bytes(), *backend_);
    return Buffer(*backend_, input_bytes());
}
Buffer Plan::allocate_output() {
    if (multi_) return host_scratch(ScratchRole::plan_output).lend(output_bytes(), *backend_);
    return Buffer(*backend_, output_bytes());
}
std::size_t Plan::layout_bytes(const Layout& layout, std::size_t index) const {
    // The chain's first array is real, every later one complex.
    return static_cast<std::size_t>(layout.box.count()) *
           (index == 0 ? real_bytes(problem_.precision) : complex_bytes(problem_.precision));
}
std::size_t Plan::host_staging_bytes() const {
    return host_send_.bytes() + host_recv_.bytes() + host_src_.bytes() + host_dst_.bytes() +
           (multi_ ? multi_->host_bytes() : 0) + (caller_arrays_pinned() ? input_bytes() + output_bytes() : 0);
}

void Plan::forward(const void* in, void* out) { run(Direction::forward, in, out); }
void Plan::inverse(const void* in, void* out) { run(Direction::inverse, in, out); }

void Plan::stage(Direction d, const void* in) {
    if (multi_) multi_->load(d, in);
}

void Plan::restage(Direction d) {
    if (multi_) multi_->reload(d);
}

void Plan::run_staged(Direction d, const void* in, void* out) {
    if (!multi_) return run(d, in, out);
    Pipeline& p = *pipelines_[static_cast<int>(d)];
    PhaseScope scope(p.timer, p.stages.front().fft_phase);
    multi_->execute(d);
}

std::unique_ptr<PhaseClock> Plan::make_clock() { return multi_ ? multi_->make_clock() : backend_->make_clock(); }

int Plan::devices() const { return multi_ ? multi_->devices() : 1; }

std::optional<std::size_t> Plan::measured_multi_device_bytes() const {
    return multi_ ? multi_->measured_device_bytes() : std::nullopt;
}

void Plan::run(Direction d, const void* in, void* out) {
    if (in == out) throw std::invalid_argument("fftune::Plan: in-place transforms are not supported");
    if (multi_) {
        // Copy in, transform in place, copy out: the caller's `in` is preserved.
        multi_->load(d, in);
        run_staged(d, in, out);
        multi_->store(d, out);
        return;
    }
    Pipeline& p = *pipelines_[static_cast<int>(d)];
    void* slots[2 + work_slots] = {const_cast<void*>(in), out, work_[0].data(), work_[1].data(), work_[2].data()};
    LocalFailure failed;
    for (auto& s : p.stages) {
        void* src = slots[s.in];
        void* dst = slots[s.out];
        if (s.overlap) {
            run_overlap(s, p.timer, src, slots[s.overlap->mid], dst, slots[s.overlap->tail_out], failed);
        } else if (s.reshape) {
            failed.reshape([&] { s.reshape->transport->execute(s.reshape->ctx, src, dst, p.timer, s.reshape->phases); });
        } else if (s.copy_elems > 0) {
            failed.unless_failed([&] {
                PhaseScope scope(p.timer, s.fft_phase);
                const StridedRegion all{{1, 1, s.copy_elems}, {0, 0, 1}, 0};
                backend_->copy_region(dst, all, src, all, complex_bytes(problem_.precision));
            });
        } else {
            failed.unless_failed([&] {
                PhaseScope scope(p.timer, s.fft_phase);
                if (s.fft) s.fft->execute(src, dst);
            });
        }
    }
    failed.rethrow();
}

void Plan::LocalFailure::rethrow_with(const std::string& later) const {
    auto message = [&](const char* cause) { return fmt::format("{} (a reshape after it failed too: {})", cause, later); };
    try {
        std::rethrow_exception(error_);
    } catch (const Unsupported& cause) {  // a refusal stays a refusal (collective_try)
        throw Unsupported(message(cause.what()));
    } catch (const std::exception& cause) {
        throw std::runtime_error(message(cause.what()));
    } catch (...) {
        throw std::runtime_error(message("unknown error"));
    }
}

void Plan::run_overlap(Stage& s, PhaseTimer& timer, const void* in, void* mid, void* out, void* tail_out,
                       LocalFailure& failed) {
    Overlap& ov = *s.overlap;
    Backend& b = *backend_;
    const int q = ov.queue;
    auto fft = [&](Overlap::Slice& c, const void* src, void* dst, int phase) {
        failed.unless_failed([&] {
            PhaseScope scope(timer, phase);
            if (c.fft)
                c.fft->execute(const_cast<char*>(static_cast<const char*>(src)) + c.fft_in,
                               static_cast<char*>(dst) + c.fft_out);
        });
    };
    auto transform = [&](Overlap::Slice& c, const void* src, void* dst) { fft(c, src, dst, s.fft_phase); };
    auto move = [&](Reshape& r, const void* src, void* dst) {
        failed.reshape([&] { r.transport->execute(r.ctx, src, dst, timer, r.phases); });
    };
    auto reshape = [&](Overlap::Slice& c, const void* src, void* dst) { move(*c.reshape, src, dst); };
    const std::size_t n = ov.slices.size();
    b.queue_wait(q, 0);  // the slices read what queue 0 wrote before
    if (!ov.tail.empty()) {
        // Parted (Config::exchange_parts): moves (slice c, part p) in
        // parted_order; the tail's part p runs once its share of every slice
        // has moved (last (n - 1, p)), beside the moves of later parts
        // (results/h200x4-2026-11-28-parted-exchange).
        // Transports that land queued moves on the device (lands_slices) queue
        // them all; the others move one at a time.
        Reshape& head = *ov.slices.front().parts.front();
        const bool queued = head.transport->queues_slices(true) && head.transport->lands_slices();
        auto parted = [&] {
            transform(ov.slices[0], in, mid);
            std::size_t transformed = 0;  // slices queued on q up to here
            for (auto [c, p] : ov.parted_order) {
                if (c == transformed) {  // slice c's first move: after FFT c, and FFT c + 1 queued before it
                    b.queue_wait(0, q);
                    if (c + 1 < n) transform(ov.slices[c + 1], in, mid);
                    ++transformed;
                }
                Reshape& r = *ov.slices[c].parts[p];
                if (queued) failed.reshape([&] { r.transport->queue_slice(r.ctx, mid, out); });
                else move(r, mid, out);
                if (c + 1 == n) {
                    if (queued) failed.reshape([&] { r.transport->land_slices(r.ctx); });
                    b.queue_wait(q, 0);  // part p after every move into it
                    fft(ov.tail[p], out, tail_out, ov.tail_phase);
                }
            }
        };
        if (queued) {
            PhaseScope scope(timer, head.phases.exchange);
            failed.reshape([&] { head.transport->open_slices(head.ctx); });
            parted();
            Reshape& last = *ov.slices.back().parts.back();
            failed.reshape([&] { last.transport->close_slices(last.ctx); });
        } else {
            parted();
        }
    } else if (Transport& first = *ov.slices.front().reshape->transport; ov.fft_first && first.queues_slices(true)) {
        // Every slice's moves queued behind its FFT slice; ranks meet only
        // before the first and after the last (Transport::queues_slices).
        PhaseScope scope(timer, ov.slices.front().reshape->phases.exchange);
        transform(ov.slices[0], in, mid);
        failed.reshape([&] { first.open_slices(ov.slices.front().reshape->ctx); });
        for (std::size_t c = 0; c < n; ++c) {
            b.queue_wait(0, q);  // slice c's moves after FFT c
            if (c + 1 < n) transform(ov.slices[c + 1], in, mid);
            failed.reshape([&] { ov.slices[c].reshape->transport->queue_slice(ov.slices[c].reshape->ctx, mid, out); });
        }
        failed.reshape([&] { ov.slices.back().reshape->transport->close_slices(ov.slices.back().reshape->ctx); });
    } else if (ov.fft_first) {
        // Transports return when their slice has moved (they wait for their
        // queues), so slice c + 1 is queued before reshape c starts.
        transform(ov.slices[0], in, mid);
        for (std::size_t c = 0; c < n; ++c) {
            b.queue_wait(0, q);  // reshape c after FFT c, not after FFT c + 1
            if (c + 1 < n) transform(ov.slices[c + 1], in, mid);
            reshape(ov.slices[c], mid, out);
        }
    } else {
        for (std::size_t c = 0; c < n; ++c) {
            reshape(ov.slices[c], in, mid);
            b.queue_wait(q, 0);  // FFT c after reshape c; reshape c + 1 runs beside it
            transform(ov.slices[c], mid, out);
        }
    }
    b.queue_wait(0, q);  // the next stage, and the clocks on queue 0, see every slice
}

const std::vector<std::string>& Plan::phase_names(Direction d) const {
    return pipelines_[static_cast<int>(d)]->timer.names();
}

std::vector<Plan::PhaseTraffic> Plan::phase_traffic(Direction d) const {
    const Pipeline& p = *pipelines_[static_cast<int>(d)];
    std::vector<PhaseTraffic> t = p.traffic;
    t.resize(p.timer.names().size());
    return t;
}

std::vector<double> Plan::collect_phase_times(Direction d) {
    return pipelines_[static_cast<int>(d)]->timer.collect();
}

}  // namespace fftune
