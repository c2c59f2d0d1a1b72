// A cluster profile: what fftune needs to know to generate SLURM job arrays
// for a site (jobs/README.md documents every field). Loaded and validated like
// a testcase: an unknown key or a bad value fails before anything is written,
// naming the JSON path, the value and what is allowed.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fftune {

struct ProfileError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

struct Partition {
    int nodes = 1;
    int cpus_per_node = 1;
    int gpus_per_node = 0;
    std::string max_time;  // Slurm time format, empty = unknown
};

struct ClusterProfile {
    std::string name;
    std::map<std::string, Partition> partitions;
    std::string partition;              // the one arrays are submitted to
    std::string cpu_partition;          // CPU-only arrays and the merge job; empty = `partition`
    std::string account, qos;           // optional
    std::string time_limit = "01:00:00";  // per array task
    int max_array_size = 1001;          // Slurm's MaxArraySize: indices 0 .. max-1
    int array_throttle = 0;             // "%K": at most K tasks of an array at once; 0 = no limit
    int points_per_task = 20;           // manifest lines per array task (GPU points)
    int cpu_points_per_task = 200;      // the same for CPU points (default: points_per_task where given)
    std::string merge_time_limit = "00:30:00";  // the merge job: ingest and winners only
    std::string launcher = "srun";      // srun | mpirun
    std::string srun_mpi;               // srun --mpi=..., empty = site default
    int cores_per_gpu = 1;              // CPUs per rank on GPU points (one rank per GPU)
    int cores_per_task = 1;             // CPUs per rank on CPU points
    std::string gpu_bind = "closest";   // srun --gpu-bind
    std::string cpu_bind = "cores";     // srun --cpu-bind; mpirun --bind-to (cores -> core)
    std::vector<std::string> nics_per_gpu;  // NIC for local GPU i -> UCX_NET_DEVICES, NCCL_IB_HCA
    std::vector<std::string> modules;       // module load ...
    std::vector<std::pair<std::string, std::string>> environment;  // export NAME=value
    std::vector<std::string> setup;     // shell lines run verbatim before each task (trusted site code)
    std::vector<std::string> sbatch_args;  // extra sbatch options, each quoted
    std::string fftune;                 // fftune executable on the compute nodes; empty = this one

    const Partition& target() const { return partitions.at(partition); }
    // Where arrays of GPU or CPU points go; the merge job goes where CPU arrays do.
    const std::string& partition_for(bool gpu) const { return gpu || cpu_partition.empty() ? partition : cpu_partition; }
    const Partition& target_for(bool gpu) const { return partitions.at(partition_for(gpu)); }
    int points_per_task_for(bool gpu) const { return gpu ? points_per_task : cpu_points_per_task; }
};

ClusterProfile parse_cluster_profile(const nlohmann::json& j, const std::string& source);
ClusterProfile load_cluster_profile(const std::string& path);
nlohmann::json to_json(const ClusterProfile& p);

// A starting profile from the output of
//   sinfo -h -o '%P|%D|%c|%G|%l'     (partitions; default partition marked '*')
//   scontrol show config             (ClusterName, MaxArraySize, MpiDefault)
//   srun --mpi=list                  (pmix available -> launcher srun, else mpirun)
// Throws ProfileError when sinfo lists no partition.
ClusterProfile profile_from_slurm(const std::string& sinfo, const std::string& scontrol_config,
                                  const std::string& srun_mpi_list);

// profile_from_slurm on the output of those commands run here (fftune init-site).
ClusterProfile profile_from_this_slurm();

}  // namespace fftune
