// fftune probe [--ranks 1,2,4] [--out F.jsonl] [--db PATH]: cost-model microbenchmarks (core/run/probe.hpp).
// In the parent, one MPI job per world size, their parts merged into --out; in a job, the probes at its size.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "core/platform/device_fault.hpp"
#include "core/platform/log.hpp"
#include "core/run/probe.hpp"
#include "core/run/runner.hpp"
#ifdef FFTUNE_HAVE_TUNER
#include "app/tuner_options.hpp"
#endif

namespace fftune::cli {
namespace {

struct ProbeCommandOptions {
    ProbeOptions probe;
    std::string out = "fftune-probe.jsonl", launcher = "mpirun";
    std::vector<int> ranks;
    std::vector<std::string> launcher_args;
    bool no_launch = false;
    std::string db_path;
    CLI::App* app = nullptr;
};

// Probe inside one MPI job: rank 0 writes every record to `out` as it is measured.
int probe_in_job(const ProbeOptions& options, const std::string& out, int* rank_out) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);  // p2p_streams needs it
    int rank = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *rank_out = rank;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    logging::set_rank(rank, size);
    try {
        std::ofstream file;
        if (rank == 0) {
            if (std::filesystem::path(out).has_parent_path())
                std::filesystem::create_directories(std::filesystem::path(out).parent_path());
            file.open(out, std::ios::trunc);
            if (!file) throw std::runtime_error("cannot write " + out);
        }
        set_device_fault_note(out);  // a probe past --timeout says so there (core/run/point_watchdog.hpp)
        failed = run_probe(MPI_COMM_WORLD, options, [&](const nlohmann::json& r) { file << r.dump() << '\n' << std::flush; });
    } catch (const std::exception& e) {
        logging::error(e.what());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return failed > 0 ? 1 : 0;
}

// Parent mode: one MPI job per world size (default 1, 2, 4, ... up to the
// cores), their parts merged into `out`. Returns the exit status; -1 when a
// job could not be launched at all (the caller stops at once).
int launch_probe_jobs(ProbeCommandOptions& o) {
    if (o.ranks.empty())
        for (unsigned r = 1; r <= std::max(2u, std::thread::hardware_concurrency()); r *= 2) o.ranks.push_back(r);
    auto join = [](const auto& v) { return fmt::format("{}", fmt::join(v, ",")); };
    const ProbeOptions& p = o.probe;
    int rc = 0;
    std::vector<std::string> parts;
    for (int r : o.ranks) {
        const std::string part = fmt::format("{}.r{}", o.out, r);
        std::vector<std::string> child{"probe", "--no-launch", "--out", part, "--sizes"};
        for (auto m : p.bytes_per_peer) child.push_back(std::to_string(m));
        child.push_back("--fft-sizes");
        for (auto n : p.fft_lengths) child.push_back(std::to_string(n));
        child.insert(child.end(), {"--fft-points", std::to_string(p.fft_points), "--iterations",
                                   std::to_string(p.iterations), "--warmup", std::to_string(p.warmup), "--timeout",
                                   fmt::format("{}", p.timeout_s)});
        if (!p.backends.empty()) child.insert(child.end(), {"--backend", join(p.backends)});
        if (!p.transports.empty()) child.insert(child.end(), {"--transport", join(p.transports)});
        logging::info(fmt::format("probe: {} ranks", r));
        (void)take_job_end_note(part);  // an earlier run's
        try {
            if (const int job = launch_self(o.launcher, r, o.launcher_args, child); job != 0) {
                logging::error(fmt::format("probe: the {}-rank job exited with status {}{}", r, job,
                                           take_job_end_note(part)));
                rc = 1;
            }
        } catch (const std::exception& e) {
            logging::error(std::string("probe: ") + e.what());
            return -1;
        }
        parts.push_back(part);
    }
    std::ofstream all(o.out, std::ios::trunc);
    int records = 0, failed = 0;
    for (const auto& part : parts) {
        for (const auto& r : read_records(part)) {
            all << r.dump() << '\n';
            ++records;
            failed += r.value("status", "") != "ok";
        }
        std::filesystem::remove(part);
    }
    std::cout << fmt::format("probe: {} records ({} failed) at {} ranks: {}\n", records, failed, join(o.ranks), o.out);
    return rc;
}

int probe_command(ProbeCommandOptions& o) {
    // Bad options exit 2 before anything runs.
    if (o.probe.bytes_per_peer.empty()) o.probe.bytes_per_peer = default_probe_bytes();
    if (o.probe.fft_lengths.empty()) o.probe.fft_lengths = default_probe_fft_lengths();
    if (const auto why = check_probe_options(o.probe); !why.empty()) {
        logging::error("probe: " + why);
        return 2;
    }
    for (int r : o.ranks)
        if (r < 1) {
            logging::error(fmt::format("probe: --ranks {}: world sizes must be 1 or more", r));
            return 2;
        }
    std::string ingest_into;
#ifdef FFTUNE_HAVE_TUNER
    if (o.app->count("--db") > 0) ingest_into = o.db_path;
#endif
    const bool in_job = o.no_launch || under_launcher();
    if (in_job && !o.ranks.empty()) {
        logging::error("probe: --ranks launches one job per world size; under a launcher (or with "
                       "--no-launch) the probe runs at the job's own size");
        return 2;
    }
    int rc = 0;
    if (in_job) {
        int rank = 0;
        rc = probe_in_job(o.probe, o.out, &rank);
        if (rank != 0) return rc;  // rank 0 wrote the file and ingests it
    } else {
        rc = launch_probe_jobs(o);
        if (rc < 0) return 1;
    }
#ifdef FFTUNE_HAVE_TUNER
    if (!ingest_into.empty()) {
        try {
            Database db(ingest_into, false);
            if (!print_ingest(db, db.ingest({o.out}))) rc = 1;
        } catch (const std::exception& e) {
            logging::error(e.what());
            return 1;
        }
    }
#endif
    return rc;
}

}  // namespace

void add_probe(CLI::App& app, const Argv& argv, Commands& commands) {
    auto o = std::make_shared<ProbeCommandOptions>();
    o->probe.argv = argv;
    auto* probe_app = app.add_subcommand(
        "probe", "calibrate the cost model: MPI exchanges and batched FFTs per backend (JSON lines)");
    o->app = probe_app;
    ProbeOptions& p = o->probe;
    probe_app->add_option("--out", o->out, "JSON-lines file for the probe records");
    probe_app->add_option("--ranks", o->ranks, "world sizes, one MPI job each (default: 1, 2, 4, ... up to the cores)")
        ->delimiter(',');
    probe_app->add_option("--sizes", p.bytes_per_peer, "exchange bytes per peer (default 8 B to 16 MiB by factors of 8)");
    probe_app->add_option("--fft-sizes", p.fft_lengths, "1D transform lengths (default 4 to 4096 by factors of 2)");
    probe_app->add_option("--fft-points", p.fft_points, "points per batched transform call (default 2^20)");
    probe_app->add_option("--iterations", p.iterations, "timed iterations per probe (default 20)");
    probe_app->add_option("--warmup", p.warmup, "warm-up iterations per probe (default 5)");
    probe_app->add_option("--timeout", p.timeout_s,
                          "seconds one probe may run before its job is ended (default 600; 0: no limit)");
    probe_app->add_option("--backend", p.backends, "backends (default: every available one)")->delimiter(',');
    probe_app->add_option("--transport", p.transports, "redistribution methods (default: every one that applies)")
        ->delimiter(',');
    probe_app->add_option("--launcher", o->launcher, "MPI launcher (default mpirun)");
    probe_app->add_option("--launcher-arg", o->launcher_args, "extra launcher argument")->allow_extra_args(false);
    probe_app->add_flag("--no-launch", o->no_launch, "probe in this process at its MPI world size");
#ifdef FFTUNE_HAVE_TUNER
    add_db_option(probe_app, o->db_path);
#endif
    commands.push_back({probe_app, [o] { return probe_command(*o); }, true});
}

}  // namespace fftune::cli
