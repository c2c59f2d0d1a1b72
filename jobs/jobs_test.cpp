// Cluster profiles, array planning and the generated scripts. The scripts are
// executed by bash with fake srun/mpirun/scontrol on PATH, so quoting and the
// command each rank runs are checked by a real shell, not by string search only.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/platform/backend.hpp"
#include "core/platform/process.hpp"
#include "core/base/registry.hpp"
#include "core/run/testcase.hpp"
#include "core/testing/forwarding_backend.hpp"
#include "families/fft3d/fft3d.hpp"
#include "jobs/cluster_profile.hpp"
#include "jobs/slurm_arrays.hpp"

namespace fftune {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The fftw backend claiming device memory: a GPU backend for shape planning.
class DeviceLike final : public testing::ForwardingBackend {
public:
    std::string name() const override { return "test_device"; }
    bool device_memory() const override { return true; }
};

const bool registered = register_variant<Backend, DeviceLike>("test_device");

json base_profile() {
    return json::parse(R"({"name": "site", "partitions": {"cpu": {"nodes": 2, "cpus_per_node": 4},
                           "gpu": {"nodes": 2, "cpus_per_node": 64, "gpus_per_node": 4, "max_time": "2-00:00:00"}},
                           "partition": "gpu", "cores_per_gpu": 16, "points_per_task": 3, "max_array_size": 4,
                           "array_throttle": 2, "time_limit": "00:30:00", "launcher": "srun", "srun_mpi": "pmix"})");
}

Testcase testcase(const std::string& backend, std::vector<int> ranks) {
    return parse_testcase(json{{"name", "t"}, {"problem", "fft3d"}, {"sizes", {{16, 12, 10}, {8, 8, 8}}},
                               {"ranks", ranks}, {"backend", backend}, {"precision", "double"},
                               {"direction", {"forward", "inverse"}}, {"decomposition", {"slab_2d1d", "pencil"}},
                               {"layout", "default"}, {"redistribution", {"a2a_sync", "p2p_sync"}}},
                          "test");
}

std::string profile_error(json j) {
    try {
        parse_cluster_profile(j, "p.json");
    } catch (const ProfileError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ClusterProfile, ValidProfileRoundTrips) {
    const auto p = parse_cluster_profile(base_profile(), "p.json");
    EXPECT_EQ(p.partition, "gpu");
    EXPECT_EQ(p.target().gpus_per_node, 4);
    const auto again = parse_cluster_profile(to_json(p), "again");
    EXPECT_EQ(to_json(again), to_json(p));
}

TEST(ClusterProfile, BadInputNamesPathValueAndAllowed) {
    auto j = base_profile();
    j["partiton"] = "gpu";
    EXPECT_NE(profile_error(j).find("/partiton: unknown key 'partiton' (allowed: name,"), std::string::npos);
    j = base_profile();
    j["partition"] = "big";
    EXPECT_NE(profile_error(j).find("/partition: 'big' is not among /partitions (allowed: cpu, gpu)"), std::string::npos);
    j = base_profile();
    j["launcher"] = "aprun";
    EXPECT_NE(profile_error(j).find("/launcher: unknown value 'aprun' (allowed: srun, mpirun)"), std::string::npos);
    j = base_profile();
    j["time_limit"] = "1 hour";
    EXPECT_NE(profile_error(j).find("/time_limit: '1 hour' is not a Slurm time"), std::string::npos);
    j["time_limit"] = "3-00:00:00";  // partition allows 2 days
    EXPECT_NE(profile_error(j).find("exceeds the time limit '2-00:00:00'"), std::string::npos);
    j = base_profile();
    j["max_array_size"] = 0;
    EXPECT_NE(profile_error(j).find("/max_array_size: 0 is out of range"), std::string::npos);
    j = base_profile();
    j["cores_per_gpu"] = 32;  // 4 GPUs x 32 > 64 CPUs
    EXPECT_NE(profile_error(j).find("exceed the 64 CPUs per node"), std::string::npos);
    j = base_profile();
    j["nics_per_gpu"] = {"mlx5_0"};
    EXPECT_NE(profile_error(j).find("/nics_per_gpu: 1 entries, but partition 'gpu' has 4 GPUs"), std::string::npos);
    j = base_profile();
    j["environment"] = {{"BAD-NAME", "1"}};
    EXPECT_NE(profile_error(j).find("is not an environment variable name"), std::string::npos);
    j = base_profile();
    j["sbatch_args"] = {"--exclusive\n#SBATCH --wrap=x"};
    EXPECT_NE(profile_error(j).find("is not an sbatch option"), std::string::npos);
    j = base_profile();
    j.erase("partitions");
    EXPECT_NE(profile_error(j).find("/partitions: missing"), std::string::npos);
}

TEST(ClusterProfile, ShellInNamesIsRejected) {
    for (const char* key : {"account", "qos", "partition", "gpu_bind"}) {
        auto j = base_profile();
        j[key] = "x; touch /tmp/pwned";
        EXPECT_NE(profile_error(j).find("is not a valid name"), std::string::npos) << key;
    }
    auto j = base_profile();
    j["modules"] = {"cuda $(id)"};
    EXPECT_NE(profile_error(j).find("/modules/0"), std::string::npos);
}

TEST(ClusterProfile, FromSlurmOutput) {
    const std::string sinfo = "debug|2|8|(null)|30:00\ngpu*|3|64|gpu:h200:4(S:0-1)|2-00:00:00\ngpu*|1|48|gpu:h200:4|2-00:00:00\n";
    const std::string config = "ClusterName              = hpc1\nMaxArraySize            = 501\nMpiDefault = none\n";
    const auto p = profile_from_slurm(sinfo, config, "MPI plugin types are...\n\tnone\n\tpmix\n");
    EXPECT_EQ(p.name, "hpc1");
    EXPECT_EQ(p.partition, "gpu");  // the '*' default, not the first listed
    EXPECT_EQ(p.target().nodes, 4);
    EXPECT_EQ(p.target().cpus_per_node, 48);  // the smallest node configuration
    EXPECT_EQ(p.target().gpus_per_node, 4);
    EXPECT_EQ(p.partitions.at("debug").gpus_per_node, 0);
    EXPECT_EQ(p.max_array_size, 501);
    EXPECT_EQ(p.launcher, "srun");
    EXPECT_EQ(p.srun_mpi, "pmix");
    EXPECT_EQ(p.cores_per_gpu, 12);
    EXPECT_EQ(profile_from_slurm(sinfo, config, "none\npmi2\n").launcher, "mpirun");
    EXPECT_THROW(profile_from_slurm("", config, ""), ProfileError);
}

TEST(JobArrays, ArrayRangeCompressesAndThrottles) {
    EXPECT_EQ(array_range({0, 1, 2, 3}, 0), "0-3");
    EXPECT_EQ(array_range({1, 3, 4, 5, 9}, 4), "1,3-5,9%4");
    EXPECT_EQ(array_range({7}, 0), "7");
}

TEST(JobArrays, CpuShapesChunksAndSplitAtMaxArraySize) {
    auto j = base_profile();
    j["partition"] = "cpu";
    j.erase("cores_per_gpu");
    const auto p = parse_cluster_profile(j, "p.json");
    const auto tc = testcase("fftw", {1, 2, 6});
    const auto arrays = plan_job_arrays(tc, p);
    std::map<std::string, int> tasks;
    for (const auto& a : arrays) {
        tasks[a.name] = static_cast<int>(a.tasks.size());
        EXPECT_LE(static_cast<int>(a.tasks.size()), p.max_array_size);
        for (const auto& t : a.tasks) EXPECT_LE(static_cast<int>(t.size()), p.points_per_task);
    }
    // 16 points per rank count in chunks of 3 -> 6 tasks -> arrays of 4 + 2.
    EXPECT_EQ(tasks["r1-n1x1-a0"], 4);
    EXPECT_EQ(tasks["r1-n1x1-a1"], 2);
    EXPECT_EQ(tasks["r2-n1x2-a0"], 4);
    // 6 ranks on 4-CPU nodes: 2 nodes x 3 tasks.
    EXPECT_TRUE(tasks.count("r6-n2x3-a0"));
    // Every point exactly once, in order.
    for (int r : {1, 2, 6}) {
        std::vector<int> seen;
        for (const auto& a : arrays)
            if (a.shape.ranks == r)
                for (const auto& t : a.tasks) seen.insert(seen.end(), t.begin(), t.end());
        std::vector<int> want(tc.points(r).size());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<int>(i);
        EXPECT_EQ(seen, want) << r;
    }
}

TEST(JobArrays, GpuShapesOneRankPerGpu) {
    const auto p = parse_cluster_profile(base_profile(), "p.json");
    const auto arrays = plan_job_arrays(testcase("test_device", {1, 4, 6, 8}), p);
    std::set<std::string> names;
    for (const auto& a : arrays) names.insert(a.name.substr(0, a.name.rfind("-a")));
    EXPECT_EQ(names, (std::set<std::string>{"r1-n1x1-g1", "r4-n1x4-g4", "r6-n2x3-g3", "r8-n2x4-g4"}));
    for (const auto& a : arrays) EXPECT_EQ(a.shape.cpus_per_task, 16);
    // 12 ranks need 3 nodes; the partition has 2: refused before anything is written.
    try {
        plan_job_arrays(testcase("test_device", {12}), p);
        FAIL() << "no error";
    } catch (const ProfileError& e) {
        EXPECT_NE(std::string(e.what()).find("12 ranks need 3 nodes (4 ranks per node), but partition 'gpu' has 2"),
                  std::string::npos);
    }
    auto j = base_profile();
    j["partition"] = "cpu";
    j.erase("cores_per_gpu");
    EXPECT_THROW(plan_job_arrays(testcase("test_device", {1}), parse_cluster_profile(j, "p")), ProfileError);
}

// With a CPU partition: GPU points on the GPU partition in tasks of
// points_per_task, CPU points on the CPU partition in tasks of
// cpu_points_per_task; the merge job there too, one core, its own time limit.
TEST(JobArrays, CpuPointsAndTheMergeGoToTheCpuPartition) {
    auto j = base_profile();
    j["cpu_partition"] = "cpu";
    j["cpu_points_per_task"] = 5;
    j["merge_time_limit"] = "00:10:00";
    const auto p = parse_cluster_profile(j, "p.json");
    EXPECT_EQ(parse_cluster_profile(to_json(p), "again").cpu_partition, "cpu");
    for (const auto& a : plan_job_arrays(testcase("fftw", {2}), p)) {
        EXPECT_EQ(a.shape.partition, "cpu") << a.name;
        EXPECT_EQ(a.shape.gpus_per_node, 0) << a.name;
        for (const auto& t : a.tasks) EXPECT_LE(t.size(), 5u) << a.name;
        EXPECT_NE(array_script(a, p, "/d", "/bin/fftune", "t").find("#SBATCH --partition=cpu\n"), std::string::npos);
    }
    for (const auto& a : plan_job_arrays(testcase("test_device", {4}), p)) {
        EXPECT_EQ(a.shape.partition, "gpu") << a.name;
        for (const auto& t : a.tasks) EXPECT_LE(t.size(), 3u) << a.name;
        EXPECT_NE(array_script(a, p, "/d", "/bin/fftune", "t").find("#SBATCH --partition=gpu\n"), std::string::npos);
    }
    // 16 CPU points at 2 ranks in tasks of 5: 4 tasks (3 with the GPU profile's 3).
    EXPECT_EQ(plan_job_arrays(testcase("fftw", {2}), p).front().tasks.size(), 4u);
    const std::string merge = merge_script(p, "/d", "/bin/fftune", "", "t");
    EXPECT_NE(merge.find("#SBATCH --partition=cpu\n"), std::string::npos) << merge;
    EXPECT_NE(merge.find("#SBATCH --time=00:10:00\n"), std::string::npos) << merge;
    EXPECT_NE(merge.find("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"), std::string::npos) << merge;
    EXPECT_EQ(merge.find("gpus"), std::string::npos) << merge;
    // Without one, everything goes to `partition` as before, and CPU points
    // keep the profile's points_per_task.
    const auto plain = parse_cluster_profile(base_profile(), "p.json");
    EXPECT_EQ(plain.cpu_points_per_task, 3);
    EXPECT_NE(merge_script(plain, "/d", "/bin/fftune", "", "t").find("#SBATCH --partition=gpu\n"), std::string::npos);
    // Refused: an unknown CPU partition, a merge longer than the partition allows.
    j = base_profile();
    j["cpu_partition"] = "big";
    EXPECT_NE(profile_error(j).find("/cpu_partition: 'big' is not among /partitions"), std::string::npos);
    j = base_profile();
    j["merge_time_limit"] = "3-00:00:00";
    EXPECT_NE(profile_error(j).find("/merge_time_limit: '3-00:00:00' exceeds the time limit '2-00:00:00' of partition 'gpu'"),
              std::string::npos) << profile_error(j);
}

// The example profile that ships in jobs/profiles loads and places GPU points
// at 1 to 8 ranks and CPU points on its CPU partition.
TEST(ClusterProfile, ShippedGpuClusterExampleLoadsAndPlans) {
    const auto p = load_cluster_profile(FFTUNE_SOURCE_DIR "/jobs/profiles/gpu_cluster_example.json");
    EXPECT_EQ(p.partition, "gpu");
    EXPECT_EQ(p.cpu_partition, "cpu");
    for (const auto& a : plan_job_arrays(testcase("test_device", {1, 2, 4, 8}), p)) EXPECT_EQ(a.shape.cpus_per_task, 16);
    for (const auto& a : plan_job_arrays(testcase("fftw", {1, 4}), p)) EXPECT_EQ(a.shape.partition, "cpu");
}

// A fresh scratch directory per test.
struct Scratch {
    fs::path dir;
    Scratch() {
        dir = fs::temp_directory_path() / ("fftune-jobs-test-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
};

void write(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
    fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
}

// Runs a generated array script under bash as array task `task`, with fake
// launchers on PATH that print one line per argument.
std::string run_script(const fs::path& script, const fs::path& fake_bin, int task) {
    const auto r = run_capture({"env", "PATH=" + fake_bin.string() + ":" + std::getenv("PATH"),
                                "SLURM_ARRAY_TASK_ID=" + std::to_string(task), "SLURM_ARRAY_JOB_ID=77",
                                "SLURM_JOB_NODELIST=n[1-2]", "SLURM_LOCALID=1", "bash", script.string()});
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
}

TEST(JobArrays, ScriptsRunTheManifestTaskWithBindingAndQuoting) {
    Scratch s;
    auto j = base_profile();
    j["account"] = "proj_1";
    j["environment"] = {{"SITE_VALUE", "it's $(touch " + (s.dir / "pwned").string() + ") `x`"}};
    j["modules"] = {"cuda/13.0"};
    j["nics_per_gpu"] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    j["fftune"] = (s.dir / "bin dir/fftune's").string();  // spaces and quotes survive
    j["sbatch_args"] = {"--exclusive"};
    const auto p = parse_cluster_profile(j, "p.json");
    const auto tc_path = s.dir / "tc.json";
    write(tc_path, R"({"name": "t", "problem": "fft3d", "sizes": [[16, 12, 10], [8, 8, 8]], "ranks": [1, 8],
                      "backend": "test_device", "precision": "double", "direction": ["forward", "inverse"],
                      "decomposition": ["slab_2d1d", "pencil"], "layout": "default",
                      "redistribution": ["a2a_sync", "p2p_sync"]})");
    const auto tc = load_testcase(tc_path.string());
    const auto out = s.dir / "jobs";
    const auto arrays = write_job_dir(tc, p, {tc_path.string(), out.string(), "/data/db.sqlite"});
    EXPECT_THROW(write_job_dir(tc, p, {tc_path.string(), out.string(), ""}), ProfileError);  // never overwrite

    const auto text = [](const fs::path& f) {
        std::ifstream in(f);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const auto script = out / "scripts" / "r8-n2x4-g4-a0.sbatch";
    ASSERT_TRUE(fs::exists(script));
    const auto body = text(script);
    for (const char* line : {"#SBATCH --partition=gpu\n", "#SBATCH --account=proj_1\n", "#SBATCH --time=00:30:00\n",
                             "#SBATCH --nodes=2\n", "#SBATCH --ntasks=8\n", "#SBATCH --ntasks-per-node=4\n",
                             "#SBATCH --cpus-per-task=16\n", "#SBATCH --gpus-per-node=4\n", "#SBATCH --array=0-3%2\n",
                             "#SBATCH --exclusive\n", "module load 'cuda/13.0'\n"})
        EXPECT_NE(body.find(line), std::string::npos) << line << "\n" << body;
    EXPECT_NE(text(out / "scripts" / "r8-n2x4-g4-a1.sbatch").find("#SBATCH --array=0-1%2\n"), std::string::npos);

    // Run it: the fake srun prints its arguments, then runs the rank command
    // (the NIC wrapper) with a fake fftune that prints its environment and argv.
    const auto bin = s.dir / "bin";
    fs::create_directories(bin);
    fs::create_directories(s.dir / "bin dir");
    write(bin / "module", "#!/bin/bash\necho \"module-arg:$*\"\n");
    write(bin / "srun", "#!/bin/bash\nfor a in \"$@\"; do echo \"srun-arg:$a\"; done\n"
                        "while [[ $1 == --* ]]; do shift; done\nexec \"$@\"\n");
    write(s.dir / "bin dir/fftune's", "#!/bin/bash\necho \"UCX=$UCX_NET_DEVICES HCA=$NCCL_IB_HCA\"\n"
                                      "echo \"SITE=$SITE_VALUE\"\nfor a in \"$@\"; do echo \"fftune-arg:$a\"; done\n");
    const auto output = run_script(script, bin, 1);
    for (const std::string& want : std::vector<std::string>{"srun-arg:--ntasks=8", "srun-arg:--nodes=2", "srun-arg:--ntasks-per-node=4",
                                   "srun-arg:--cpus-per-task=16", "srun-arg:--mpi=pmix", "srun-arg:--gpu-bind=closest",
                                   "srun-arg:--cpu-bind=cores", "UCX=mlx5_1:1 HCA=mlx5_1",
                                   "SITE=it's $(touch " + (s.dir / "pwned").string() + ") `x`",
                                   "fftune-arg:run", "module-arg:load cuda/13.0", "fftune-arg:" + (out / "testcase.json").string(),
                                   "fftune-arg:--no-launch", "fftune-arg:--manifest",
                                   "fftune-arg:" + (out / "manifest.jsonl").string(), "fftune-arg:--task",
                                   "fftune-arg:r8-n2x4-g4-a0:1", "fftune-arg:--out",
                                   "fftune-arg:" + (out / "results/r8-n2x4-g4-a0/1").string()})
        EXPECT_NE(output.find(want + "\n"), std::string::npos) << want << "\n" << output;
    EXPECT_FALSE(fs::exists(s.dir / "pwned"));
    const auto marker = text(out / "markers" / "r8-n2x4-g4-a0.1");
    EXPECT_TRUE(std::regex_search(marker, std::regex("^start \\S+ job 77_1 host .*\nend \\S+ job 77_1 exit 0\n$"))) << marker;

    // The manifest holds every point once, and a task's points come back for its world size only.
    std::set<std::pair<int, int>> seen;
    std::ifstream m(out / "manifest.jsonl");
    for (std::string line; std::getline(m, line);) {
        const auto l = json::parse(line);
        EXPECT_TRUE(seen.insert({l["ranks"].get<int>(), l["index"].get<int>()}).second);
    }
    EXPECT_EQ(seen.size(), tc.points(1).size() + tc.points(8).size());
    const auto pts = manifest_task_points((out / "manifest.jsonl").string(), "r8-n2x4-g4-a0:1", tc, 8);
    EXPECT_EQ(pts, (std::vector<int>{3, 4, 5}));
    EXPECT_THROW(manifest_task_points((out / "manifest.jsonl").string(), "r8-n2x4-g4-a0:1", tc, 4), std::runtime_error);
    EXPECT_THROW(manifest_task_points((out / "manifest.jsonl").string(), "r8-n2x4-g4-a0:99", tc, 8), std::runtime_error);
    EXPECT_THROW(manifest_task_points((out / "manifest.jsonl").string(), "nocolon", tc, 8), std::invalid_argument);
    // A manifest from another enumeration is refused.
    auto other = tc;
    auto swapped = std::make_shared<Fft3dAxes>(fft3d_axes(tc));
    std::swap(swapped->sizes[0], swapped->sizes[1]);
    other.axes = swapped;
    EXPECT_THROW(manifest_task_points((out / "manifest.jsonl").string(), "r8-n2x4-g4-a0:1", other, 8), std::runtime_error);

    // Merge job: ingest every result file into the named database.
    const auto merge = text(out / "scripts" / "merge.sbatch");
    EXPECT_NE(merge.find("xargs -0 --no-run-if-empty \"$fftune\" ingest --db '/data/db.sqlite'"), std::string::npos) << merge;
    // Status before submission.
    for (const auto& st : job_dir_status(out.string())) EXPECT_EQ(st.state, "unsubmitted");
}

TEST(JobArrays, MpirunLauncherWritesARankfile) {
    Scratch s;
    auto j = base_profile();
    j["launcher"] = "mpirun";
    j["fftune"] = "/opt/fftune/bin/fftune";
    const auto p = parse_cluster_profile(j, "p.json");
    const auto tc_path = s.dir / "tc.json";
    write(tc_path, R"({"name": "t", "problem": "fft3d",
        "sizes": [[16, 12, 10]], "ranks": [6], "backend": "test_device", "precision": "double",
        "direction": "forward", "decomposition": "slab_2d1d", "layout": "default", "redistribution": "a2a_sync"})");
    const auto tc = load_testcase(tc_path.string());
    const auto out = s.dir / "jobs";
    write_job_dir(tc, p, {tc_path.string(), out.string(), ""});
    const auto bin = s.dir / "bin";
    fs::create_directories(bin);
    write(bin / "scontrol", "#!/bin/bash\n[[ \"$1 $2\" == 'show hostnames' ]] && printf 'n1\\nn2\\n'\n");
    write(bin / "mpirun", "#!/bin/bash\necho \"mpirun $*\"\n");
    const auto output = run_script(out / "scripts" / "r6-n2x3-g3.sbatch", bin, 0);
    EXPECT_NE(output.find("mpirun -n 6 --rankfile " + (out / "results/r6-n2x3-g3/0/rankfile").string() +
                          " /opt/fftune/bin/fftune run"),
              std::string::npos)
        << output;
    std::ifstream in(out / "results/r6-n2x3-g3/0/rankfile");
    const std::string rankfile(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(rankfile, "rank 0=n1 slot=0-15\nrank 1=n1 slot=16-31\nrank 2=n1 slot=32-47\n"
                        "rank 3=n2 slot=0-15\nrank 4=n2 slot=16-31\nrank 5=n2 slot=32-47\n");
}

TEST(JobArrays, JobDirectoryPathMustBeSafeForSbatch) {
    Scratch s;
    const auto p = parse_cluster_profile(base_profile(), "p.json");
    const auto tc_path = s.dir / "tc.json";
    write(tc_path, R"({"name": "t", "problem": "fft3d", "sizes": [[8, 8, 8]], "ranks": [1], "backend": "test_device",
        "precision": "double", "direction": "forward", "decomposition": "slab_2d1d", "layout": "default",
        "redistribution": "a2a_sync"})");
    try {
        write_job_dir(load_testcase(tc_path.string()), p, {tc_path.string(), (s.dir / "a b").string(), ""});
        FAIL() << "no error";
    } catch (const ProfileError& e) {
        EXPECT_NE(std::string(e.what()).find("may only hold letters"), std::string::npos);
    }
    EXPECT_FALSE(fs::exists(s.dir / "a b"));
}

}  // namespace
}  // namespace fftune
