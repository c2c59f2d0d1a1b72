// Parent mode of `fftune run`: one launcher job per rank count, resumed past
// any point on which a job died, results merged into one JSON-lines file.
// What can stop it, and what it leaves (README, "When a job dies"):
//  - a job that dies on a point: that point is recorded as failed, the next job goes on after it;
//  - a job that fails before its first point, a record that cannot be
//    stored, SIGINT/SIGTERM/SIGHUP: the sweep stops, every stored record kept;
//  - the launcher killed (kill -9): its job ends with it (core/platform/job_process.hpp).
// Run again, it continues after the last stored record of each rank count.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/platform/device_fault.hpp"
#include "core/platform/folder_lock.hpp"
#include "core/platform/job_process.hpp"
#include "core/platform/log.hpp"
#include "core/platform/process.hpp"
#include "core/records/provenance.hpp"
#include "core/records/record_file.hpp"
#include "core/run/resume.hpp"
#include "core/run/runner.hpp"

namespace fftune {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// No shell: the launcher name comes from the testcase.
bool is_open_mpi(const std::string& launcher) {
    const auto r = run_capture({launcher, "--version"});
    return r.output.find("Open MPI") != std::string::npos || r.output.find("OpenRTE") != std::string::npos;
}

std::string joined(const std::vector<std::string>& cmd) {
    std::string s;
    for (const auto& a : cmd)
        s += (s.empty() ? "" : " ") + (a.find_first_of(" '\"$`\\") == std::string::npos ? a : shell_quote(a));
    return s;
}

std::string indented(const std::string& text) {
    std::string s = "  ";
    for (char c : text) s += c == '\n' ? std::string("\n  ") : std::string(1, c);
    return s;
}

// Why a sweep stopped before its end, and its exit code.
struct Stop {
    std::string message;
    int code = 1;
    bool merge = true;  // the merged file is still written (not after a write error)
};

Stop interrupted(int sig, const std::string& out_dir) {
    return {fmt::format("interrupted by {}: the sweep stopped; every record stored in {} is kept (the point that was "
                        "running has none). Run the same command again to continue after them",
                        signal_name(sig), out_dir),
            128 + sig};
}

// A job that ended before running its first point: what it said, and what to do.
Stop failed_before_first_point(int ranks, const std::string& launcher, const std::vector<std::string>& cmd,
                               const JobRun& job) {
    std::string hint;
    if (job.output_tail.find("run as root") != std::string::npos ||
        job.output_tail.find("allow-run-as-root") != std::string::npos)
        hint = "; as root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment";
    return {fmt::format("the {}-rank job failed before its first point ({} exited with status {}), so the sweep "
                        "stopped; nothing was recorded for it. {}\n"
                        "The command was: {}\n"
                        "Check the launcher and its arguments (--launcher, --launcher-arg, the testcase's \"launcher\"){}, "
                        "then run the same command again: the sweep continues after its last stored record",
                        ranks, launcher, job.status,
                        job.output_tail.empty() ? "It said nothing." : "It said:\n" + indented(job.output_tail),
                        joined(cmd), hint),
            1};
}

// A job whose rank 0 could not store a record (job_status_store_failed).
Stop store_failed(int ranks, const std::string& part, const JobRun& job) {
    // The job's own line (RecordWriteError), among the launcher's: "PATH: cannot store a record: REASON; ..."
    std::string reason;
    const std::string marker = ": cannot store a record: ";
    if (const auto at = job.output_tail.rfind(marker); at != std::string::npos) {
        const auto from = at + marker.size();
        reason = job.output_tail.substr(from, job.output_tail.find_first_of(";\n", from) - from);
    }
    return {fmt::format("the {}-rank job could not store a record in {} ({}), so the sweep stopped; the file ends after "
                        "its last whole record. Free space on its file system (or raise the quota or file-size limit) "
                        "and run the same command again: it continues after that record",
                        ranks, part, reason.empty() ? "its message is above" : reason),
            1, false};
}

// The merged file, replaced whole: written beside it, then renamed over it.
void write_merged(const std::string& merged, const std::vector<json>& records) {
    const std::string tmp = merged + ".tmp";
    try {
        {
            RecordFile out(tmp, RecordFile::Mode::truncate);
            for (const auto& r : records) out.append(r);
        }
        fs::rename(tmp, merged);
    } catch (const std::exception& e) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        const auto* write = dynamic_cast<const RecordWriteError*>(&e);
        throw RecordWriteError(fmt::format("{}: cannot write the merged results ({}); it is left as it was, and the "
                                           "per-rank files beside it hold every record: free space on its file system "
                                           "and run the same command again to merge them",
                                           merged, write && !write->reason().empty() ? write->reason() : e.what()));
    }
}

}  // namespace

bool allow_open_mpi_as_root() {
    if (geteuid() != 0) return false;
    const char* allow = std::getenv("OMPI_ALLOW_RUN_AS_ROOT");
    const char* confirm = std::getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
    if (allow && confirm) return false;  // set by the user: as they are
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    static bool said = false;
    if (!std::exchange(said, true))
        logging::info("running as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 for mpirun "
                      "(Open MPI refuses root without them; export them yourself to silence this)");
    return true;
}

std::vector<std::string> job_command(const std::string& launcher, int ranks, const std::vector<std::string>& extra,
                                     const std::vector<std::string>& args) {
    static std::map<std::string, bool> open_mpi;  // asking the launcher once is enough
    if (!open_mpi.count(launcher)) open_mpi[launcher] = is_open_mpi(launcher);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::string> cmd{launcher, "-n", std::to_string(ranks)};
    if (open_mpi[launcher] && static_cast<unsigned>(ranks) > cores) cmd.push_back("--oversubscribe");
    if (open_mpi[launcher]) allow_open_mpi_as_root();
    // Open MPI binds each rank to one core by default (np <= 2), which would put
    // a rank's host threads (test fields, validation: core/platform/parallel.hpp) on that
    // one core. Unbound unless the caller chose a binding or mapping.
    const bool placed = std::any_of(extra.begin(), extra.end(), [](const std::string& a) {
        return a.starts_with("--bind-to") || a.starts_with("--map-by") || a.starts_with("--rankfile") ||
               a.starts_with("-rf") || a.starts_with("--cpu-set");
    });
    if (open_mpi[launcher] && !placed) cmd.insert(cmd.end(), {"--bind-to", "none"});
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    cmd.push_back(self_executable());
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
}

int launch_self(const std::string& launcher, int ranks, const std::vector<std::string>& extra,
                const std::vector<std::string>& args) {
    return run_supervised(job_command(launcher, ranks, extra, args)).status;
}

int run_sweep(const Testcase& tc, const SweepOptions& opt) {
    fs::create_directories(opt.out_dir);
    const FolderLock owner(opt.out_dir, "fftune run " + opt.testcase_path);
    if (!owner.taken_over().empty())
        logging::info(fmt::format("{}: took over the lock of {}, which has ended", opt.out_dir, owner.taken_over()));
    const InterruptGuard interrupts;
    const std::string base = sanitize_filename(tc.name);
    const std::string merged = (fs::path(opt.out_dir) / (base + ".jsonl")).string();
    auto part_of = [&](int ranks) {
        return (fs::path(opt.out_dir) / fmt::format("{}-r{}.jsonl", base, ranks)).string();
    };
    const std::string launcher = opt.launcher.empty() ? tc.launcher : opt.launcher;
    std::vector<std::string> extra = tc.launcher_args;
    extra.insert(extra.end(), opt.launcher_args.begin(), opt.launcher_args.end());
    const std::vector<int> merge_ranks = opt.merge_ranks.empty() ? tc.ranks : opt.merge_ranks;
    const auto running = [&](int r) { return std::find(tc.ranks.begin(), tc.ranks.end(), r) != tc.ranks.end(); };

    // Every result file that is continued or merged must be of this testcase, before anything runs.
    std::set<int> all(merge_ranks.begin(), merge_ranks.end());
    all.insert(tc.ranks.begin(), tc.ranks.end());
    for (int r : all)
        if (opt.resume || !running(r)) (void)read_stored(part_of(r), tc.points(r));
    if (!opt.resume)
        for (int r : tc.ranks) RecordFile(part_of(r), RecordFile::Mode::truncate);

    std::optional<PointSelection> selection;
    if (!opt.selection_path.empty()) selection = load_point_selection(opt.selection_path);
    std::optional<Stop> stop;
    // A selection's deadline (fftune tune --budget): no job starts after it, and
    // a job that reached it mid-way leaves budget_spent_path; what is stored stays.
    bool budget_spent = false;
    const auto out_of_budget = [&] {
        return budget_spent || (selection && selection->deadline_unix_ms > 0 && unix_ms_now() >= selection->deadline_unix_ms);
    };
    for (int ranks : tc.ranks) {
        if (stop || out_of_budget()) break;
        const std::string part = part_of(ranks);
        const auto points = tc.points(ranks);
        const int npoints = static_cast<int>(points.size());
        const std::vector<int>* only = nullptr;
        if (selection) {
            auto it = selection->points.find(ranks);
            if (it == selection->points.end() || it->second.empty()) continue;
            only = &it->second;
        }
        // The next point to run at or after index i.
        auto next_selected = [&](int i) {
            if (!only) return i;
            auto it = std::lower_bound(only->begin(), only->end(), i);
            return it == only->end() ? npoints : *it;
        };
        // What is stored, read while `hold` holds the file: a rank of an
        // earlier job still writing is waited for, a torn last line cut off.
        auto stored = [&](std::optional<RecordFile>& hold) {
            hold.emplace(part, RecordFile::Mode::append);
            return read_stored(part, points);
        };
        int start = 0;
        {
            std::optional<RecordFile> hold;
            const auto have = stored(hold);
            start = next_selected(have.next);
            if (!have.records.empty())
                logging::info(start >= npoints
                                  ? fmt::format("{} ranks: all {} points are stored in {}", ranks, npoints, part)
                                  : fmt::format("{} ranks: {} records stored in {}; continuing at point {}", ranks,
                                                have.records.size(), part, start + 1));
        }
        while (start < npoints && !out_of_budget()) {
            if (const int sig = InterruptGuard::received()) {
                stop = interrupted(sig, opt.out_dir);
                break;
            }
            std::vector<std::string> args{"run", opt.testcase_path, "--out", opt.out_dir, "--no-launch",
                                          "--start-index", std::to_string(start)};
            if (selection) args.insert(args.end(), {"--select", opt.selection_path});
            logging::info(fmt::format("{} ranks: points {}..{} of {}", ranks, start + 1, npoints, npoints));
            // Whatever an earlier job left here is not this one's.
            fs::remove(job_started_path(part));
            fs::remove(budget_spent_path(part));
            fs::remove(device_fault_note_path(part));
            const auto cmd = job_command(launcher, ranks, extra, args);
            const JobRun job = run_supervised(cmd);
            // The job and all it started have ended (run_supervised): what is in the file is final.
            const bool started = fs::exists(job_started_path(part)) || fs::exists(device_fault_note_path(part));
            fs::remove(job_started_path(part));
            if (fs::remove(budget_spent_path(part))) {
                budget_spent = true;
                logging::info(fmt::format("{} ranks: the tuning budget is spent; the points not run are left out", ranks));
                break;
            }
            if (job.status == job_status_store_failed) {
                stop = store_failed(ranks, part, job);
                break;
            }
            std::optional<RecordFile> hold;
            const int next = next_selected(stored(hold).next);
            if (next >= npoints) break;
            if (job.interrupted_by) {
                stop = interrupted(job.interrupted_by, opt.out_dir);
                break;
            }
            if (!started) {
                stop = failed_before_first_point(ranks, launcher, cmd, job);
                break;
            }
            // The job died: the first point without a record is the one it died on.
            hold->append(died_point_record(points[next],
                                           fmt::format("the MPI job exited with status {} while running this point{}; "
                                                       "the sweep resumed after it",
                                                       job.status, take_job_end_note(part))));
            hold.reset();
            logging::warn(fmt::format("{} ranks: job died (status {}) on point {}; resuming", ranks, job.status, next + 1));
            start = next_selected(next + 1);
        }
    }

    // The merged file: every stored record of the testcase's rank counts.
    int failed = 0;
    std::vector<json> records;
    for (int r : merge_ranks)
        for (auto& rec : read_records(part_of(r))) {
            if (running(r) && rec.value("status", "") == "failed") ++failed;
            records.push_back(std::move(rec));
        }
    if (stop && !stop->merge) {
        logging::error(stop->message);
        return stop->code;
    }
    write_merged(merged, records);
    if (stop) {
        std::cout << fmt::format("\n{} records stored: {}\n", records.size(), merged);
        logging::error(stop->message);
        return stop->code;
    }
    std::cout << summarize_records(records);
    std::cout << fmt::format("\nResults: {}\n", merged);
    return failed > 0 ? 1 : 0;
}

}  // namespace fftune
