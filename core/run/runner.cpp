#include "core/run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "core/base/registry.hpp"
#include "core/engine/kept_arrays.hpp"
#include "core/platform/collective_try.hpp"
#include "core/platform/device_fault.hpp"
#include "core/platform/host_scratch.hpp"
#include "core/platform/job_process.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/records/json_lines.hpp"
#include "core/records/provenance.hpp"
#include "core/records/record_file.hpp"
#include "core/records/statistics.hpp"
#include "core/run/job_start.hpp"
#include "core/run/point_watchdog.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

json base_record(const Point& point, const json& machine, const RunOptions& options) {
    json r;
    r["schema"] = "fftune.result/1";
    r["point_index"] = point.index;
    r["problem"] = point.problem;
    r["config"] = point.config;
    r["key"] = point.key;
    r["machine"] = machine;
    auto backend = Registry<Backend>::instance().contains(point.backend())
                       ? Registry<Backend>::instance().create(point.backend())
                       : nullptr;
    r["provenance"] = provenance_info(options.argv, backend.get());
    return r;
}

// run_point's steps. Each step that can end the point returns false (or
// nullptr) once `rec` holds its final status, skipped or failed.

// The point's family, if it applies to this problem on every rank.
const Family* applicable_family(MPI_Comm comm, const Point& point, json& rec) {
    const Family* family = nullptr;
    std::optional<std::string> reason;
    if (auto err = collective_try(comm, [&] {
            family = &family_named(point.family());
            reason = family->not_applicable(point.problem, point.config);
        })) {
        rec["status"] = "failed";
        rec["error"] = *err;
        return nullptr;
    }
    // Rank-local evidence (a device, the GPU-aware trial) may differ: skip on every rank or none.
    reason = agree_error(comm, reason.value_or(""), /*name_rank=*/false);
    if (reason) {
        rec["status"] = "skipped";
        rec["reason"] = *reason;
        return nullptr;
    }
    return family;
}

// Free device memory before this point allocates anything (host backends: none),
// read before the barrier so that no rank sharing the device has started.
bool read_device_memory(MPI_Comm comm, const Point& point, std::optional<DeviceMemory>& mem_before, json& rec) {
    if (auto err = collective_try(comm, [&] {
            mem_before = Registry<Backend>::instance().create(point.backend())->device_memory_info();
        })) {
        rec["status"] = "failed";
        rec["error"] = "device memory query: " + *err;
        return false;
    }
    return true;
}

// The point's workload, set up; `setup_ms` is the max over ranks.
std::unique_ptr<Workload> set_up(MPI_Comm comm, const Family& family, const Point& point, double& setup_ms,
                                 json& rec) {
    std::unique_ptr<Workload> work;
    FFTUNE_MPI_CHECK(MPI_Barrier(comm));
    const auto t0 = std::chrono::steady_clock::now();
    bool unsupported = false;
    if (auto err = collective_try(comm, [&] {
            work = family.workload(point);
            work->setup(comm);
        }, &unsupported)) {
        if (unsupported) {
            rec["status"] = "skipped";
            rec["reason"] = *err;
        } else {
            rec["status"] = "failed";
            rec["error"] = "setup: " + *err;
        }
        return nullptr;
    }
    // Setup is host work (planning, allocation, communicators): host clock, max over ranks.
    // An NCCL communicator is made by the first point on its group of ranks only.
    double local_setup = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    FFTUNE_MPI_CHECK(MPI_Allreduce(&local_setup, &setup_ms, 1, MPI_DOUBLE, MPI_MAX, comm));
    return work;
}

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// What one rank measured of a point: its clocks, footprint and traffic.
struct Measurement {
    std::vector<std::string> phases;
    std::vector<double> samples;  // per iteration: total, then phases
    std::size_t stride = 0;
    unsigned long long device_used = 0;  // what this point's ranks hold on the device, measured
    Footprint footprint;
    std::vector<PhaseTraffic> traffic;
    // Where a point's wall time goes (host clock; prepare ends when its host
    // work does, so an inverse's untimed forward may finish inside `timed`).
    double wall[3] = {0, 0, 0};  // prepare, timed (warm-up included), validate
};

// Prepare, then warm-up and timed iterations, then the footprint; releases the workload.
bool measure(MPI_Comm comm, Workload& work, const RunOptions& options,
             const std::optional<DeviceMemory>& mem_before, Measurement& m, json& rec) {
    const int iters = options.iterations, warm = options.warmup;
    auto err = collective_try(comm, [&] {
        const auto t_prepare = std::chrono::steady_clock::now();
        work.prepare(comm);
        m.wall[0] = ms_since(t_prepare);
        const auto t_timed = std::chrono::steady_clock::now();
        std::unique_ptr<PhaseClock> total_clock;
        // Between the collective steps, all rank-local work is agreed;
        // each agreement is also the barrier before the next timed iteration.
        all_or_none(comm, [&] {
            total_clock = work.make_clock();
            m.phases = work.phase_names();
            m.stride = 1 + m.phases.size();
            m.samples.reserve(iters * m.stride);
            work.stage();
        });
        for (int it = 0; it < warm + iters; ++it) {
            const auto failed = unless_device_lost(work.backend(), comm, failure_of([&] {
                total_clock->start();
                work.step();
                total_clock->stop();
            }));
            // Reading the clocks is where a device fault shows.
            all_or_none(comm, failed, [&] {
                const double total = total_clock->elapsed_ms();
                total_clock->reset();
                const auto ph = work.collect_phase_times();
                if (it >= warm) {
                    m.samples.push_back(total);
                    m.samples.insert(m.samples.end(), ph.begin(), ph.end());
                }
                if (it + 1 < warm + iters) work.restage();
            });
        }
        m.wall[1] = ms_since(t_timed);
        m.footprint = work.footprint();
        m.traffic = work.traffic();
        if (m.footprint.devices > 1) {
            // The backend's device is one of several: the workload measures them all.
            if (m.footprint.measured_multi_device_bytes) m.device_used = *m.footprint.measured_multi_device_bytes;
        } else if (mem_before) {
            // What the point kept from the last one was in use already (this
            // rank's only: on a device that ranks share, theirs is left out).
            const unsigned long long before = mem_before->free + m.footprint.kept_before_bytes;
            if (const auto after = work.backend().device_memory_info(); after && after->free < before)
                m.device_used = before - after->free;
        }
        work.release();
    });
    if (err) {
        // Every later point would fail on a lost device: a fresh job goes on.
        end_job_if_device_lost(work.backend(), comm, "execution: " + *err);
        rec["status"] = "failed";
        rec["error"] = "execution: " + *err;
        return false;
    }
    return true;
}

// The record's "timing": per iteration and phase, max over ranks for the
// statistics, min and mean to show imbalance.
json timing_summary(MPI_Comm comm, Workload& work, const RunOptions& options, const Measurement& m,
                    double setup_ms) {
    const int iters = options.iterations;
    std::vector<double> vmax(m.samples.size()), vmin(m.samples.size()), vsum(m.samples.size());
    const int n = static_cast<int>(m.samples.size());
    FFTUNE_MPI_CHECK(MPI_Allreduce(m.samples.data(), vmax.data(), n, MPI_DOUBLE, MPI_MAX, comm));
    FFTUNE_MPI_CHECK(MPI_Allreduce(m.samples.data(), vmin.data(), n, MPI_DOUBLE, MPI_MIN, comm));
    FFTUNE_MPI_CHECK(MPI_Allreduce(m.samples.data(), vsum.data(), n, MPI_DOUBLE, MPI_SUM, comm));
    auto column = [&](const std::vector<double>& v, std::size_t c, double scale = 1.0) {
        std::vector<double> out;
        for (int it = 0; it < iters; ++it) out.push_back(v[it * m.stride + c] * scale);
        return out;
    };
    int world = 1;
    MPI_Comm_size(comm, &world);
    const double inv_p = 1.0 / world;
    json timing;
    timing["mode"] = work.timing_mode();
    timing["clock"] = work.backend().device_memory() ? "cuda_event" : "host_steady_clock";
    timing["devices"] = m.footprint.devices;  // per rank: 1, or every GPU of the process (reference_cufftxt)
    timing["warmup"] = options.warmup;
    timing["iterations"] = iters;
    timing["setup_ms"] = setup_ms;
    timing["total"] = summarize(column(vmax, 0));
    json ph = json::object();
    for (std::size_t k = 0; k < m.phases.size(); ++k) {
        json s = summarize(column(vmax, k + 1));
        s["rank_min_median"] = summarize(column(vmin, k + 1)).median;
        s["rank_mean_median"] = summarize(column(vsum, k + 1, inv_p)).median;
        ph[m.phases[k]] = s;
    }
    timing["phases"] = ph;
    timing["phase_order"] = m.phases;
    return timing;
}

// Memory (backend, workspace, device, host staging) and floor traffic per phase, max over ranks.
void record_memory_and_traffic(MPI_Comm comm, const Measurement& m, const std::optional<DeviceMemory>& mem_before,
                               json& rec) {
    // Memory: the largest per-rank footprint in backend memory (caller's in/out
    // there, plus workspace).
    unsigned long long mem[2] = {m.footprint.backend_bytes, m.footprint.workspace_bytes};
    unsigned long long mem_max[2];
    FFTUNE_MPI_CHECK(MPI_Allreduce(mem, mem_max, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    rec["memory_bytes"] = mem_max[0];
    rec["workspace_bytes"] = mem_max[1];
    if (mem_before) {
        // Driver-reported, the most on one device: includes what the library
        // allocates on its own (cuFFT plans, NCCL buffers) and, on a device that
        // ranks share, all of theirs; for a rank driving several devices
        // (cufftXt), the fullest of them. NCCL communicators live for the
        // process (one per group of ranks), so only the first point on a group
        // counts theirs.
        unsigned long long device_used = m.device_used, used_max = 0;
        FFTUNE_MPI_CHECK(MPI_Allreduce(&device_used, &used_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
        rec["device_memory"] = {{"measured_bytes", used_max},
                                {"devices_per_rank", m.footprint.devices},
                                {"ranks_on_device", m.footprint.ranks_on_device},
                                {"total_bytes", mem_before->total}};
    }
    unsigned long long host = m.footprint.host_staging_bytes, host_max = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&host, &host_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    rec["host_staging_bytes"] = host_max;
    // Floor traffic per phase, max over ranks; ranks that report fewer phases count 0 for the rest.
    std::vector<PhaseTraffic> traffic = m.traffic;
    unsigned long long reported = traffic.size(), most_reported = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&reported, &most_reported, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    traffic.resize(most_reported);
    if (!traffic.empty()) {
        std::vector<unsigned long long> bytes, most(3 * traffic.size());
        for (const auto& t : traffic) bytes.insert(bytes.end(), {t.device_bytes, t.sent_bytes, t.received_bytes});
        FFTUNE_MPI_CHECK(MPI_Allreduce(bytes.data(), most.data(), static_cast<int>(most.size()),
                                       MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
        json tr = json::object();
        for (std::size_t k = 0; k < traffic.size() && k < m.phases.size(); ++k)
            tr[m.phases[k]] = {{"device_bytes", most[3 * k]}, {"sent_bytes", most[3 * k + 1]}, {"received_bytes", most[3 * k + 2]}};
        rec["traffic"] = tr;
    }
}

// Validation (unless turned off), the wall times and the workload's own
// annotations; sets the point's final status.
void validate_and_annotate(MPI_Comm comm, Workload& work, const RunOptions& options, Measurement& m,
                           double setup_ms, json& rec) {
    auto record_wall = [&] {
        double most[3];
        FFTUNE_MPI_CHECK(MPI_Allreduce(m.wall, most, 3, MPI_DOUBLE, MPI_MAX, comm));
        rec["timing"]["wall_ms"] = {{"setup", setup_ms}, {"prepare", most[0]}, {"timed", most[1]}, {"validate", most[2]}};
    };
    if (options.validate) {
        ValidationResult v;
        const auto t_validate = std::chrono::steady_clock::now();
        auto verr = collective_try(comm, [&] { v = work.validate(comm); });
        m.wall[2] = ms_since(t_validate);
        record_wall();
        if (verr) {
            end_job_if_device_lost(work.backend(), comm, "validation: " + *verr);
            rec["status"] = "failed";
            rec["error"] = "validation: " + *verr;
            return;
        }
        rec["validation"] = v;
        if (auto aerr = collective_try(comm, [&] { work.annotate(comm, rec); })) {
            rec["status"] = "failed";
            rec["error"] = "record: " + *aerr;
            return;
        }
        if (!v.passed()) {
            std::string what;
            for (const auto& c : v.checks)
                if (!c.passed) what += fmt::format("{}{} error {:.3g} > tolerance {:.3g}", what.empty() ? "" : "; ", c.method, c.max_rel_error, c.tolerance);
            rec["status"] = "failed";
            rec["error"] = "validation failed: " + what;
            return;
        }
    } else {
        record_wall();
        rec["validation"] = json{{"method", "none"}, {"passed", nullptr}};
        if (auto aerr = collective_try(comm, [&] { work.annotate(comm, rec); })) {
            rec["status"] = "failed";
            rec["error"] = "record: " + *aerr;
            return;
        }
    }
    rec["status"] = "ok";
}

}  // namespace

json run_point(MPI_Comm comm, const Point& point, const RunOptions& options, const json& machine) {
    json rec = base_record(point, machine, options);
    if (!options.job.is_null()) rec["job"] = options.job;
    rec["problem"]["ranks_per_node"] = options.ranks_per_node > 0 ? options.ranks_per_node : ranks_per_node(comm);
    const Family* family = applicable_family(comm, point, rec);
    if (!family) return rec;
    std::optional<DeviceMemory> mem_before;
    if (!read_device_memory(comm, point, mem_before, rec)) return rec;
    double setup_ms = 0;
    const auto work = set_up(comm, *family, point, setup_ms, rec);
    if (!work) return rec;
    Measurement m;
    if (!measure(comm, *work, options, mem_before, m, rec)) return rec;
    rec["timing"] = timing_summary(comm, *work, options, m, setup_ms);
    record_memory_and_traffic(comm, m, mem_before, rec);
    validate_and_annotate(comm, *work, options, m, setup_ms, rec);
    // What the workload kept and the next point will not want goes here,
    // timed as part of this point (a failed point's goes with the next one's set-up).
    const auto t_end = std::chrono::steady_clock::now();
    if (auto err = collective_try(comm, [&] { work->end(comm, options.next); })) {
        rec["status"] = "failed";
        rec["error"] = "end: " + *err;
    }
    double end_ms = ms_since(t_end), most = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&end_ms, &most, 1, MPI_DOUBLE, MPI_MAX, comm));
    rec["timing"]["wall_ms"]["release"] = most;
    return rec;
}

PointSelection load_point_selection(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot read the point selection");
    PointSelection s;
    try {
        const json j = json::parse(in);
        for (const auto& [ranks, list] : j.at("points").items()) {
            auto& v = s.points[std::stoi(ranks)];
            v = list.get<std::vector<int>>();
            std::sort(v.begin(), v.end());
        }
        s.warmup = j.at("warmup").get<int>();
        s.iterations = j.at("iterations").get<int>();
        s.deadline_unix_ms = j.value("deadline_unix_ms", 0ll);
        s.validate = j.value("validate", true);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": not a point selection: " + e.what());
    }
    if (s.warmup < 0 || s.iterations < 1) throw std::runtime_error(path + ": warmup must be >= 0 and iterations >= 1");
    return s;
}

void save_point_selection(const PointSelection& s, const std::string& path) {
    json j{{"points", json::object()}, {"warmup", s.warmup}, {"iterations", s.iterations}};
    if (s.deadline_unix_ms > 0) j["deadline_unix_ms"] = s.deadline_unix_ms;
    if (!s.validate) j["validate"] = false;
    for (const auto& [ranks, list] : s.points) j["points"][std::to_string(ranks)] = list;
    std::ofstream(path) << j.dump() << "\n";
}

long long unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

int run_job(MPI_Comm comm, const Testcase& tc, const std::string& out_file, int start_index,
            const std::vector<std::string>& argv, const std::vector<int>* only, bool append,
            long long deadline_unix_ms) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const auto points = tc.points(size);
    const json machine = machine_info();
    // The points' plans may keep their arrays for the next point; let go at the end.
    KeptArrays::Job keep_arrays(comm);
    set_device_fault_note(out_file);
    RunOptions opts{tc.warmup, tc.iterations, tc.validate, argv, ranks_per_node(comm)};
    std::optional<RecordFile> out;
    if (rank == 0) {
        // A note a job that died left here has been read (core/run/sweep.cpp): it
        // is not this job's.
        std::filesystem::remove(device_fault_note_path(out_file));
        append = append || start_index > 0;
        // Held for the job: a torn last line (a job killed mid-write) is cut off,
        // and no other job writes here meanwhile (it waits for this one to end).
        out.emplace(out_file, append ? RecordFile::Mode::append : RecordFile::Mode::truncate);
        std::ofstream(job_started_path(out_file)) << "started\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    int failed = 0;
    const int total = static_cast<int>(points.size());
    PointWatchdog watchdog(comm, tc.point_timeout_s);
    const auto selected = [&](int i) { return !only || std::binary_search(only->begin(), only->end(), i); };
    int todo = 0, done = 0;
    std::vector<const Point*> chosen;
    for (int i = std::max(0, start_index); i < total; ++i)
        if (selected(i)) chosen.push_back(&points[i]);
    todo = static_cast<int>(chosen.size());
    // What the points share (NCCL's communicator), made once before the first.
    watchdog.arm(fmt::format("the job's start-up ({} ranks)", size));
    opts.job = start_job(comm, chosen);
    watchdog.disarm();
    if (rank == 0 && !opts.job["parts_ms"].empty()) {
        std::string parts;
        for (const auto& [name, ms] : opts.job["parts_ms"].items())
            parts += fmt::format("{}{} {:.0f} ms", parts.empty() ? "" : ", ", name, ms.get<double>());
        for (const auto& [name, err] : opts.job.value("failed", json::object()).items())
            parts += fmt::format("; {} did not start: {}", name, err.get<std::string>());
        std::cerr << fmt::format("[{} ranks] job start-up: {}\n", size, parts);
    }
    for (int i = std::max(0, start_index); i < total; ++i) {
        if (!selected(i)) continue;
        if (deadline_unix_ms > 0) {  // rank 0's clock decides for all
            int spent = rank == 0 && unix_ms_now() >= deadline_unix_ms;
            FFTUNE_MPI_CHECK(MPI_Bcast(&spent, 1, MPI_INT, 0, comm));
            if (spent) {
                if (rank == 0) std::ofstream(budget_spent_path(out_file)) << "budget spent before point " << i + 1 << "\n";
                break;
            }
        }
        ++done;
        watchdog.arm(fmt::format("point {} of {} ({} ranks: {})", i + 1, total, size, points[i].label));
        opts.next = nullptr;
        for (int n = i + 1; n < total && !opts.next; ++n)
            if (selected(n)) opts.next = &points[n];
        const json rec = run_point(comm, points[i], opts, machine);
        watchdog.disarm();
        if (rec["status"] == "failed") ++failed;
        if (rank != 0) continue;
        try {
            out->append(rec);  // stored before its progress line says so
        } catch (const RecordWriteError& e) {
            end_job(comm, e.what(), job_status_store_failed, /*write_note=*/false, /*may_abort=*/true);
        }
        // A sweep's launcher killed (kill -9): its job stops here instead of
        // running on until mpirun's own clean-up ends it.
        if (launcher_ended())
            end_job(comm, "the sweep that started this job has ended: stopping after the last stored record",
                    128 + SIGTERM, /*write_note=*/false, /*may_abort=*/true);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double eta = elapsed / done * (todo - done);
        std::string outcome = rec["status"].get<std::string>();
        if (outcome == "ok")
            outcome += fmt::format(" {:.4g} ms, error {:.2g}", rec["timing"]["total"]["median"].get<double>(),
                                   rec["validation"].value("max_rel_error", 0.0));
        else if (outcome == "failed")
            outcome += ": " + rec["error"].get<std::string>();
        else if (outcome == "skipped" && rec.contains("reason"))
            outcome += ": " + rec["reason"].get<std::string>();
        std::cerr << fmt::format("[{} ranks {}/{}] {}: {} | elapsed {:.0f}s ETA {:.0f}s\n", size, i + 1, total,
                                 points[i].label, outcome, elapsed, eta);
    }
    release_host_scratch();  // unpinned while the device runtime is still up, not at exit
    if (rank == 0) std::filesystem::remove(job_started_path(out_file));
    return failed;
}

std::string job_started_path(const std::string& result_file) { return result_file + ".started"; }
std::string budget_spent_path(const std::string& result_file) { return result_file + ".budget-spent"; }

json died_point_record(const Point& point, const std::string& error) {
    return json{{"schema", "fftune.result/1"},
                {"status", "failed"},
                {"point_index", point.index},
                {"problem", point.problem},
                {"config", point.config},
                {"key", point.key},
                {"error", error},
                {"machine", machine_info()},
                {"provenance", {{"fftune_version", fftune_version()}, {"timestamp", utc_timestamp()}}}};
}

void append_record(const std::string& path, const json& record) {
    RecordFile(path, RecordFile::Mode::append).append(record);
}

std::vector<json> read_records(const std::string& path) {
    std::vector<json> out;
    for_each_line(path, [&](std::string_view line) {
        if (line.empty()) return;
        try {
            out.push_back(json::parse(line));
        } catch (const json::parse_error&) {
            // A torn last line of a job that died mid-write: nothing to recover.
        }
    });
    return out;
}

}  // namespace fftune
