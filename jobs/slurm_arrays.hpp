// SLURM job arrays for a testcase (jobs/README.md):
//   plan:     the testcase's points, grouped by resource shape (ranks, nodes,
//             tasks per node, GPUs per node), cut into tasks of points_per_task,
//             split into arrays of at most MaxArraySize tasks;
//   write:    DIR/{testcase.json, profile.json, manifest.jsonl, jobs.json,
//             scripts/*.sbatch, results/, logs/, markers/};
//   submit:   sbatch --parsable per array, then a merge job
//             (--dependency=afterany:...) that runs `fftune ingest`;
//   status:   per task done / failed / running / pending, from the result files
//             (a task is done when every point of its manifest chunk has a
//             record), task markers and squeue/sacct;
//   resubmit: only the failed indices, plus a new merge job.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/run/testcase.hpp"
#include "jobs/cluster_profile.hpp"

namespace fftune {

struct ResourceShape {
    int ranks = 1, nodes = 1, tasks_per_node = 1, gpus_per_node = 0, cpus_per_task = 1;
    std::string partition;  // ClusterProfile::partition_for
    std::string name() const;  // r4-n1x4-g4 (GPU) or r2-n1x2 (CPU)
    auto operator<=>(const ResourceShape&) const = default;
};

struct JobArray {
    std::string name;      // shape name, plus -a<k> when split at MaxArraySize
    ResourceShape shape;
    std::vector<std::vector<int>> tasks;  // point indices (at shape.ranks) per array index
};

// Throws ProfileError when a shape cannot be placed on the profile's partition.
std::vector<JobArray> plan_job_arrays(const Testcase& tc, const ClusterProfile& profile);

struct JobsOptions {
    std::string testcase_path;
    std::string out_dir;
    std::string database;  // for the merge job; empty = fftune's default location
};

// The generated scripts (pure: tested for their content).
std::string array_script(const JobArray& array, const ClusterProfile& profile, const std::string& dir,
                         const std::string& fftune, const std::string& testcase_name);
std::string merge_script(const ClusterProfile& profile, const std::string& dir, const std::string& fftune,
                         const std::string& database, const std::string& testcase_name);
// "0-9%4", "1,3,7%4": Slurm's --array value.
std::string array_range(const std::vector<int>& indices, int throttle);

// Writes the job directory; returns the arrays written. Refuses a directory that
// already holds jobs (never overwrite results).
std::vector<JobArray> write_job_dir(const Testcase& tc, const ClusterProfile& profile, const JobsOptions& options);

// Submits every array, then the merge job; records the job ids in jobs.json.
// Returns a printable summary (job ids).
std::string submit_job_dir(const std::string& dir);

struct TaskState {
    std::string array;
    int task = 0;
    std::string state;   // done | failed | running | pending | unsubmitted
    std::string detail;  // Slurm state, markers, log file
    int points = 0, recorded = 0, failed_points = 0;
};
std::vector<TaskState> job_dir_status(const std::string& dir);
std::string format_status(const std::vector<TaskState>& states, const std::string& dir);

// Resubmits the failed tasks (only those) and a new merge job. Summary text.
std::string resubmit_failed(const std::string& dir);

// For `fftune run --manifest M --task ARRAY:INDEX`: the point indices of that
// task, checked against the testcase (same point at the same index) and the
// world size. Throws with a clear message on any mismatch.
std::vector<int> manifest_task_points(const std::string& manifest, const std::string& task, const Testcase& tc,
                                      int world_size);

}  // namespace fftune
