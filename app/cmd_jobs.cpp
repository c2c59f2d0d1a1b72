// fftune jobs slurm|submit|status|resubmit: SLURM job arrays (jobs/README.md).
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "core/platform/log.hpp"
#include "core/run/testcase.hpp"
#include "jobs/cluster_profile.hpp"
#include "jobs/slurm_arrays.hpp"

namespace fftune::cli {
namespace {

struct JobsOptions {
    std::string testcase, cluster_profile, dir, db;
    bool submit = false, status_json = false, resubmit_failed = false;
};

int write_arrays(const JobsOptions& o) {
    const auto tc = load_testcase(o.testcase);
    const auto profile = load_cluster_profile(o.cluster_profile);
    const auto arrays = write_job_dir(tc, profile, {o.testcase, o.dir, o.db});
    std::size_t tasks = 0;
    for (const auto& a : arrays) {
        tasks += a.tasks.size();
        std::cout << fmt::format("array {}: {} tasks\n", a.name, a.tasks.size());
    }
    std::cout << fmt::format("{} arrays, {} tasks written to {}\n", arrays.size(), tasks, o.dir);
    if (o.submit)
        std::cout << submit_job_dir(std::filesystem::weakly_canonical(std::filesystem::absolute(o.dir)).string());
    return 0;
}

int print_status(const JobsOptions& o) {
    const auto states = job_dir_status(o.dir);
    if (o.status_json)
        for (const auto& s : states)
            std::cout << nlohmann::json{{"array", s.array}, {"task", s.task}, {"state", s.state},
                                        {"detail", s.detail}, {"points", s.points}, {"recorded", s.recorded},
                                        {"failed_points", s.failed_points}}.dump()
                      << "\n";
    else
        std::cout << format_status(states, o.dir);
    return 0;
}

}  // namespace

int jobs_errors_reported(const std::function<int()>& action) {
    try {
        return action();
    } catch (const TestcaseError& e) {
        logging::error(std::string("invalid testcase: ") + e.what());
        return 2;
    } catch (const ProfileError& e) {
        logging::error(e.what());
        return 2;
    } catch (const std::exception& e) {
        logging::error(e.what());
        return 1;
    }
}

void add_jobs(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<JobsOptions>();
    auto* jobs = app.add_subcommand("jobs", "SLURM job arrays: generate and submit, status, resubmit (jobs/README.md)");
    jobs->require_subcommand(1);
    auto* slurm = jobs->add_subcommand("slurm", "write job arrays (one per resource shape) and a merge job for a testcase");
    slurm->add_option("testcase", o->testcase, "testcase JSON file")->required()->check(CLI::ExistingFile);
    slurm->add_option("--cluster", o->cluster_profile, "cluster profile JSON (fftune init-site writes one)")
        ->required()->check(CLI::ExistingFile);
    slurm->add_option("--out", o->dir, "job directory (scripts, manifest, results, logs)")->required();
    slurm->add_option("--db", o->db, "database the merge job ingests into (default: fftune's default location)");
    slurm->add_flag("--submit", o->submit, "submit with sbatch and print the job ids");
    auto* submit = jobs->add_subcommand("submit", "submit a job directory written without --submit");
    submit->add_option("dir", o->dir, "job directory")->required()->check(CLI::ExistingDirectory);
    auto* status = jobs->add_subcommand("status", "done / failed / running / pending per array task");
    status->add_option("dir", o->dir, "job directory")->required()->check(CLI::ExistingDirectory);
    status->add_flag("--json", o->status_json, "one JSON object per task");
    auto* resubmit = jobs->add_subcommand("resubmit", "resubmit only the failed tasks, and a new merge job");
    resubmit->add_option("dir", o->dir, "job directory")->required()->check(CLI::ExistingDirectory);
    resubmit->add_flag("--failed", o->resubmit_failed, "the failed tasks (required: says what is resubmitted)")
        ->required();

    commands.push_back({slurm, [o] { return jobs_errors_reported([&] { return write_arrays(*o); }); }});
    commands.push_back({submit, [o] {
                            return jobs_errors_reported([&] {
                                std::cout << submit_job_dir(o->dir);
                                return 0;
                            });
                        }});
    commands.push_back({status, [o] { return jobs_errors_reported([&] { return print_status(*o); }); }});
    commands.push_back({resubmit, [o] {
                            return jobs_errors_reported([&] {
                                std::cout << resubmit_failed(o->dir);
                                return 0;
                            });
                        }});
}

}  // namespace fftune::cli
