// Parent mode of `fftune run`: one launcher job per rank count, resumed past
// any point on which a job died, results merged into one JSON-lines file.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/platform/device_fault.hpp"
#include "core/platform/process.hpp"
#include "core/platform/log.hpp"
#include "core/records/provenance.hpp"
#include "core/run/runner.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

// No shell: the launcher name comes from the testcase.
bool is_open_mpi(const std::string& launcher) {
    const auto r = run_capture({launcher, "--version"});
    return r.output.find("Open MPI") != std::string::npos || r.output.find("OpenRTE") != std::string::npos;
}

}  // namespace

int launch_self(const std::string& launcher, int ranks, const std::vector<std::string>& extra,
                const std::vector<std::string>& args) {
    static std::map<std::string, bool> open_mpi;  // asking the launcher once is enough
    if (!open_mpi.count(launcher)) open_mpi[launcher] = is_open_mpi(launcher);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::string> cmd{launcher, "-n", std::to_string(ranks)};
    if (open_mpi[launcher] && static_cast<unsigned>(ranks) > cores) cmd.push_back("--oversubscribe");
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
    return spawn_and_wait(cmd);
}

int run_sweep(const Testcase& tc, const SweepOptions& opt) {
    namespace fs = std::filesystem;
    fs::create_directories(opt.out_dir);
    const std::string base = sanitize_filename(tc.name);
    const std::string merged = (fs::path(opt.out_dir) / (base + ".jsonl")).string();
    const std::string launcher = opt.launcher.empty() ? tc.launcher : opt.launcher;
    std::vector<std::string> extra = tc.launcher_args;
    extra.insert(extra.end(), opt.launcher_args.begin(), opt.launcher_args.end());

    std::ofstream all(merged, std::ios::trunc);
    if (!all) throw std::runtime_error("cannot write " + merged);
    int failed = 0;
    std::vector<json> records;
    std::optional<PointSelection> selection;
    if (!opt.selection_path.empty()) selection = load_point_selection(opt.selection_path);
    for (int ranks : tc.ranks) {
        const std::string part = (fs::path(opt.out_dir) / fmt::format("{}-r{}.jsonl", base, ranks)).string();
        const int npoints = static_cast<int>(tc.points(ranks).size());
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
        int start = next_selected(0);
        std::vector<json> crash_records;
        while (start < npoints) {
            std::vector<std::string> args{"run", opt.testcase_path, "--out", opt.out_dir, "--no-launch",
                                          "--start-index", std::to_string(start)};
            if (selection) args.insert(args.end(), {"--select", opt.selection_path});
            logging::info(fmt::format("{} ranks: points {}..{} of {}", ranks, start + 1, npoints, npoints));
            const int rc = launch_self(launcher, ranks, extra, args);
            if (rc == 0) break;
            // The job died: the first point without a record is the one it died on.
            int next = start;
            for (const auto& r : read_records(part))
                if (r.contains("point_index")) next = std::max(next, r["point_index"].get<int>() + 1);
            next = next_selected(next);
            if (next >= npoints) break;
            const json rec = died_point_record(tc.points(ranks)[next],
                                               fmt::format("the MPI job exited with status {} while running this "
                                                           "point{}; the sweep resumed after it",
                                                           rc, take_job_end_note(part)));
            append_record(part, rec);
            logging::warn(fmt::format("{} ranks: job died (status {}) on point {}; resuming", ranks, rc, next + 1));
            start = next_selected(next + 1);
        }
        for (auto& r : read_records(part)) {
            if (r.value("status", "") == "failed") ++failed;
            all << r.dump() << '\n';
            records.push_back(std::move(r));
        }
        all.flush();
    }
    std::cout << summarize_records(records);
    std::cout << fmt::format("\nResults: {}\n", merged);
    return failed > 0 ? 1 : 0;
}

}  // namespace fftune
