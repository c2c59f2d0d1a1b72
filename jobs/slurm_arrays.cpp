#include "jobs/slurm_arrays.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/platform/backend.hpp"
#include "core/platform/process.hpp"
#include "core/records/provenance.hpp"
#include "core/base/registry.hpp"
#include "core/run/runner.hpp"

namespace fftune {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// One rank per GPU for device backends; cores_per_task CPUs per rank otherwise.
ResourceShape shape_for(int ranks, bool gpu, const ClusterProfile& profile) {
    const auto& part = profile.target_for(gpu);
    ResourceShape s;
    s.ranks = ranks;
    s.partition = profile.partition_for(gpu);
    if (gpu && part.gpus_per_node == 0)
        throw ProfileError(fmt::format("the testcase has GPU points, but partition '{}' has no GPUs (gpus_per_node 0)",
                                       profile.partition));
    const int per_node = gpu ? part.gpus_per_node : part.cpus_per_node / profile.cores_per_task;
    s.nodes = ceil_div(ranks, per_node);
    s.tasks_per_node = ceil_div(ranks, s.nodes);  // balanced: 6 ranks on 4-GPU nodes -> 2 x 3
    s.gpus_per_node = gpu ? s.tasks_per_node : 0;
    s.cpus_per_task = gpu ? profile.cores_per_gpu : profile.cores_per_task;
    if (s.nodes > part.nodes)
        throw ProfileError(fmt::format("{} ranks need {} nodes ({} ranks per node), but partition '{}' has {}", ranks,
                                       s.nodes, per_node, s.partition, part.nodes));
    return s;
}

// Paths end up in #SBATCH lines, which sbatch parses without a shell.
const std::regex safe_path{R"([A-Za-z0-9_./+,@=:%-]+)"};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

json load_jobs(const std::string& dir) {
    const auto path = fs::path(dir) / "jobs.json";
    if (!fs::exists(path)) throw std::runtime_error(fmt::format("{}: no jobs.json: not a job directory of `fftune jobs slurm`", dir));
    try {
        return json::parse(read_file(path.string()));
    } catch (const json::parse_error& e) {
        throw std::runtime_error(path.string() + ": corrupt: " + e.what());
    }
}

// Written whole, then renamed: a crash never leaves a torn jobs.json.
void save_jobs(const std::string& dir, const json& jobs) {
    const auto path = fs::path(dir) / "jobs.json";
    write_file(path.string() + ".tmp", jobs.dump(2) + "\n");
    fs::rename(path.string() + ".tmp", path);
}

std::string now_iso() {
    const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char buf[32];
    std::strftime(buf, sizeof buf, "%FT%T", std::localtime(&t));
    return buf;
}

// sbatch --parsable prints "jobid" or "jobid;cluster".
std::string sbatch(const std::vector<std::string>& args) {
    std::vector<std::string> cmd{"sbatch", "--parsable"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const auto r = run_capture(cmd);
    std::string out = r.output;
    out.erase(out.find_last_not_of(" \n\r\t") + 1);
    const std::string id = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    if (r.status != 0 || !std::regex_match(id, std::regex(R"(\d+(;\S+)?)")))
        throw std::runtime_error(fmt::format("sbatch {} failed (exit {}): {}", fmt::join(args, " "), r.status, out));
    return id.substr(0, id.find(';'));
}

std::string submit_merge(const std::string& dir, json& jobs, const std::vector<std::string>& after) {
    std::vector<std::string> args;
    if (!after.empty()) args.push_back("--dependency=afterany:" + fmt::format("{}", fmt::join(after, ":")));
    args.push_back(jobs["merge"]["script"].get<std::string>());
    const auto id = sbatch(args);
    jobs["merge"]["submissions"].push_back({{"job_id", id}, {"after", after}, {"time", now_iso()}});
    save_jobs(dir, jobs);
    return id;
}

}  // namespace

std::string ResourceShape::name() const {
    return fmt::format("r{}-n{}x{}{}", ranks, nodes, tasks_per_node, gpus_per_node ? fmt::format("-g{}", gpus_per_node) : "");
}

std::vector<JobArray> plan_job_arrays(const Testcase& tc, const ClusterProfile& profile) {
    auto& backends = Registry<Backend>::instance();
    std::map<std::string, bool> device_backend;  // does the backend run one rank per GPU?
    auto on_device = [&](const std::string& b) {
        if (!device_backend.count(b)) device_backend[b] = backends.create(b)->device_memory();
        return device_backend[b];
    };
    std::vector<JobArray> arrays;
    for (int ranks : tc.ranks) {
        std::map<ResourceShape, std::vector<int>> by_shape;
        for (const auto& p : tc.points(ranks))
            by_shape[shape_for(ranks, on_device(p.backend()), profile)].push_back(p.index);
        for (const auto& [shape, indices] : by_shape) {
            const std::size_t per_task = profile.points_per_task_for(shape.gpus_per_node > 0);
            std::vector<std::vector<int>> tasks;
            for (std::size_t i = 0; i < indices.size(); i += per_task)
                tasks.emplace_back(indices.begin() + i, indices.begin() + std::min(indices.size(), i + per_task));
            const int parts = ceil_div(static_cast<int>(tasks.size()), profile.max_array_size);
            for (int k = 0; k < parts; ++k) {
                JobArray a;
                a.shape = shape;
                a.name = parts > 1 ? fmt::format("{}-a{}", shape.name(), k) : shape.name();
                const auto first = tasks.begin() + static_cast<long>(k) * profile.max_array_size;
                a.tasks.assign(first, first + std::min<long>(profile.max_array_size, tasks.end() - first));
                arrays.push_back(std::move(a));
            }
        }
    }
    return arrays;
}

std::string array_range(const std::vector<int>& indices, int throttle) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < indices.size();) {
        std::size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
        parts.push_back(j == i ? std::to_string(indices[i]) : fmt::format("{}-{}", indices[i], indices[j]));
        i = j + 1;
    }
    return fmt::format("{}", fmt::join(parts, ",")) + (throttle > 0 ? fmt::format("%{}", throttle) : "");
}

namespace {

std::string sbatch_header(const ClusterProfile& p, const std::string& partition, const std::string& time,
                          const std::string& job_name, const std::string& log) {
    std::string s = "#!/bin/bash\n";
    s += fmt::format("#SBATCH --job-name={}\n", job_name);
    s += fmt::format("#SBATCH --partition={}\n", partition);
    if (!p.account.empty()) s += fmt::format("#SBATCH --account={}\n", p.account);
    if (!p.qos.empty()) s += fmt::format("#SBATCH --qos={}\n", p.qos);
    s += fmt::format("#SBATCH --time={}\n", time);
    s += fmt::format("#SBATCH --output={}\n", log);
    for (const auto& a : p.sbatch_args) s += fmt::format("#SBATCH {}\n", a);
    return s;
}

std::string site_setup(const ClusterProfile& p) {
    std::string s;
    for (const auto& m : p.modules) s += "module load " + shell_quote(m) + "\n";
    for (const auto& [k, v] : p.environment) s += fmt::format("export {}={}\n", k, shell_quote(v));
    if (!p.setup.empty()) s += "# site setup (profile /setup, verbatim)\n";
    for (const auto& line : p.setup) s += line + "\n";
    return s;
}

}  // namespace

std::string array_script(const JobArray& a, const ClusterProfile& p, const std::string& dir,
                         const std::string& fftune, const std::string& testcase_name) {
    const auto& sh = a.shape;
    std::vector<int> all(a.tasks.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    std::string s = sbatch_header(p, sh.partition.empty() ? p.partition : sh.partition, p.time_limit,
                                  fmt::format("fftune-{}-{}", sanitize_filename(testcase_name), a.name),
                                  fmt::format("{}/logs/{}_%a.out", dir, a.name));
    s += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks={}\n#SBATCH --ntasks-per-node={}\n#SBATCH --cpus-per-task={}\n",
                     sh.nodes, sh.ranks, sh.tasks_per_node, sh.cpus_per_task);
    if (sh.gpus_per_node > 0) s += fmt::format("#SBATCH --gpus-per-node={}\n", sh.gpus_per_node);
    s += fmt::format("#SBATCH --array={}\n", array_range(all, p.array_throttle));
    s += fmt::format("# fftune array {}: {} tasks of up to {} points, {} ranks on {} node(s) x {} tasks{}\n", a.name,
                     a.tasks.size(), p.points_per_task, sh.ranks, sh.nodes, sh.tasks_per_node,
                     sh.gpus_per_node ? fmt::format(", {} GPUs per node", sh.gpus_per_node) : "");
    s += "set -eo pipefail\n";
    s += fmt::format("dir={}\narray={}\n", shell_quote(dir), shell_quote(a.name));
    s += "task=${SLURM_ARRAY_TASK_ID:?this script runs as a Slurm array task}\n";
    s += "out=\"$dir/results/$array/$task\"\nmkdir -p \"$out\"\n";
    s += "marker=\"$dir/markers/$array.$task\"\n";
    s += "job=\"${SLURM_ARRAY_JOB_ID:-?}_$task\"\n";
    s += "echo \"start $(date +%FT%T) job $job host $(hostname)\" >> \"$marker\"\n";
    s += site_setup(p);
    // The command every rank runs; NIC binding needs a per-rank wrapper.
    std::string cmd = fmt::format("{} run \"$dir/testcase.json\" --no-launch --manifest \"$dir/manifest.jsonl\" "
                                  "--task \"$array:$task\" --out \"$out\"",
                                  shell_quote(fftune));
    if (!p.nics_per_gpu.empty() && sh.gpus_per_node > 0) {
        s += fmt::format("export FFTUNE_NICS={}\n", shell_quote(fmt::format("{}", fmt::join(p.nics_per_gpu, " "))));
        cmd = "bash -c 'n=($FFTUNE_NICS); l=${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-0}}; "
              "export UCX_NET_DEVICES=\"${n[$l]}:1\" NCCL_IB_HCA=\"${n[$l]}\"; exec \"$@\"' bind-nic " + cmd;
    }
    s += "set +e\n";
    if (p.launcher == "srun") {
        std::string opts = fmt::format("--ntasks={} --nodes={} --ntasks-per-node={} --cpus-per-task={}", sh.ranks, sh.nodes,
                                       sh.tasks_per_node, sh.cpus_per_task);
        if (!p.srun_mpi.empty()) opts += " --mpi=" + shell_quote(p.srun_mpi);
        if (sh.gpus_per_node > 0 && p.gpu_bind != "none") opts += " --gpu-bind=" + shell_quote(p.gpu_bind);
        opts += " --cpu-bind=" + shell_quote(p.cpu_bind);
        s += fmt::format("srun {} {}\n", opts, cmd);
    } else {
        // Rankfile: node-local rank l (= GPU l) on cores l*C .. l*C+C-1 of its node.
        s += fmt::format("rankfile=\"$out/rankfile\"\nr=0\n: > \"$rankfile\"\n"
                         "for host in $(scontrol show hostnames \"$SLURM_JOB_NODELIST\"); do\n"
                         "  for ((l = 0; l < {0} && r < {1}; ++l, ++r)); do\n"
                         "    echo \"rank $r=$host slot=$((l * {2}))-$((l * {2} + {2} - 1))\" >> \"$rankfile\"\n"
                         "  done\ndone\n",
                         sh.tasks_per_node, sh.ranks, sh.cpus_per_task);
        const std::string bind = p.cpu_bind == "none" ? "--bind-to none" : "--rankfile \"$rankfile\"";
        s += fmt::format("mpirun -n {} {} {}\n", sh.ranks, bind, cmd);
    }
    s += "rc=$?\necho \"end $(date +%FT%T) job $job exit $rc\" >> \"$marker\"\nexit $rc\n";
    return s;
}

std::string merge_script(const ClusterProfile& p, const std::string& dir, const std::string& fftune,
                         const std::string& database, const std::string& testcase_name) {
    // Ingest and winners: one process on one core, no GPU, where CPU arrays go.
    std::string s = sbatch_header(p, p.partition_for(false), p.merge_time_limit,
                                  fmt::format("fftune-{}-merge", sanitize_filename(testcase_name)),
                                  dir + "/logs/merge_%j.out");
    s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
    s += "# Runs after every array task ended (afterany): ingests whatever results exist;\n"
         "# ingest is idempotent, so merging again after a resubmission adds only new records.\n";
    s += "set -eo pipefail\n";
    s += fmt::format("dir={}\nfftune={}\narray=merge\ntask=0\n", shell_quote(dir), shell_quote(fftune));
    s += site_setup(p);
    const std::string db = database.empty() ? "" : " --db " + shell_quote(database);
    s += fmt::format("find \"$dir/results\" -name '*.jsonl' -print0 | sort -z | xargs -0 --no-run-if-empty \"$fftune\" ingest{}\n", db);
    s += fmt::format("\"$fftune\" winners{} > \"$dir/winners.txt\"\n", db);
    s += "echo \"merged $(date +%FT%T) job ${SLURM_JOB_ID:-?}\" >> \"$dir/markers/merge\"\n";
    return s;
}

std::vector<JobArray> write_job_dir(const Testcase& tc, const ClusterProfile& profile, const JobsOptions& o) {
    const auto arrays = plan_job_arrays(tc, profile);  // may throw: before anything is written
    if (arrays.empty()) throw ProfileError("the testcase has no points: nothing to submit");
    const std::string dir = fs::weakly_canonical(fs::absolute(o.out_dir)).string();
    if (!std::regex_match(dir, safe_path))
        throw ProfileError(fmt::format("--out '{}': the job directory's path may only hold letters, digits and _./+,@=:%- "
                                       "(it is written into #SBATCH lines)", dir));
    if (fs::exists(fs::path(dir) / "jobs.json"))
        throw ProfileError(fmt::format("{} already holds jobs (jobs.json): use `fftune jobs status|resubmit`, or another --out", dir));
    const std::string fftune = profile.fftune.empty() ? self_executable() : profile.fftune;
    const std::string testcase_text = read_file(o.testcase_path);
    for (const char* sub : {"scripts", "results", "logs", "markers"}) fs::create_directories(fs::path(dir) / sub);
    write_file(fs::path(dir) / "testcase.json", testcase_text);
    write_file(fs::path(dir) / "profile.json", to_json(profile).dump(2) + "\n");

    std::ofstream manifest(fs::path(dir) / "manifest.jsonl");
    json jobs{{"version", 1}, {"testcase", tc.name}, {"fftune", fftune}, {"database", o.database},
              {"throttle", profile.array_throttle}, {"arrays", json::array()}, {"created", now_iso()}};
    for (const auto& a : arrays) {
        const auto points = tc.points(a.shape.ranks);
        for (std::size_t t = 0; t < a.tasks.size(); ++t)
            for (int i : a.tasks[t]) {
                const auto& p = points[i];
                manifest << json{{"array", a.name}, {"task", t}, {"ranks", a.shape.ranks}, {"index", i},
                                 {"config", p.key}, {"problem", problem_key(p.problem)}}.dump()
                         << "\n";
            }
        const auto script = (fs::path(dir) / "scripts" / (a.name + ".sbatch")).string();
        write_file(script, array_script(a, profile, dir, fftune, tc.name));
        const auto& sh = a.shape;
        jobs["arrays"].push_back({{"name", a.name}, {"script", script}, {"tasks", a.tasks.size()},
                                  {"shape", {{"ranks", sh.ranks}, {"nodes", sh.nodes}, {"tasks_per_node", sh.tasks_per_node},
                                             {"gpus_per_node", sh.gpus_per_node}, {"cpus_per_task", sh.cpus_per_task},
                                             {"partition", sh.partition}}},
                                  {"submissions", json::array()}});
    }
    if (!manifest.flush()) throw std::runtime_error("cannot write " + dir + "/manifest.jsonl");
    const auto merge = (fs::path(dir) / "scripts" / "merge.sbatch").string();
    write_file(merge, merge_script(profile, dir, fftune, o.database, tc.name));
    jobs["merge"] = {{"script", merge}, {"submissions", json::array()}};
    save_jobs(dir, jobs);
    return arrays;
}

std::string submit_job_dir(const std::string& dir) {
    auto jobs = load_jobs(dir);
    std::string out;
    std::vector<std::string> ids;
    for (auto& a : jobs["arrays"]) {
        if (!a["submissions"].empty()) throw std::runtime_error(fmt::format("array {} was submitted already: use `fftune jobs resubmit`", a["name"].get<std::string>()));
        const auto id = sbatch({a["script"].get<std::string>()});
        a["submissions"].push_back({{"job_id", id}, {"tasks", "all"}, {"time", now_iso()}});
        save_jobs(dir, jobs);  // after every sbatch: a failure later never loses an id
        ids.push_back(id);
        out += fmt::format("array {}: job {} ({} tasks)\n", a["name"].get<std::string>(), id, a["tasks"].get<int>());
    }
    const auto merge = submit_merge(dir, jobs, ids);
    out += fmt::format("merge: job {} (after {})\n", merge, fmt::join(ids, ", "));
    return out;
}

namespace {

struct SlurmState {
    std::string state;  // PENDING, RUNNING, COMPLETED, FAILED, ...
    std::string source;
};

bool is_active(const std::string& s) {
    static const std::set<std::string> active{"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                                              "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING",
                                              "STAGE_OUT", "STOPPED"};
    return active.count(s) > 0;
}

// "123_4" -> state, for every array task Slurm still knows (squeue -t all),
// then from accounting (sacct) where it is enabled. Unknown ids are left out.
std::map<std::string, SlurmState> slurm_states(const std::vector<std::string>& job_ids) {
    std::map<std::string, SlurmState> out;
    const auto parse = [&](const std::string& text, const std::string& source) {
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            const auto bar = line.find('|');
            if (bar == std::string::npos) continue;
            auto id = line.substr(0, bar), st = line.substr(bar + 1);
            st = st.substr(0, st.find(' '));  // "CANCELLED by 0"
            if (!std::regex_match(id, std::regex(R"(\d+_\d+)"))) continue;
            if (!out.count(id) || source == "squeue") out[id] = {st, source};
        }
    };
    for (const auto& id : job_ids) {
        // One id per call: squeue fails outright when any id was purged.
        const auto acct = run_capture({"sacct", "-n", "-P", "-X", "-j", id, "-o", "JobID,State"});
        if (acct.status == 0) parse(acct.output, "sacct");
        const auto q = run_capture({"squeue", "-h", "-r", "-t", "all", "-j", id, "-o", "%i|%T"});
        if (q.status == 0) parse(q.output, "squeue");
    }
    return out;
}

}  // namespace

std::vector<TaskState> job_dir_status(const std::string& dir) {
    const auto jobs = load_jobs(dir);
    // Current job of each task: the last submission that included it.
    std::map<std::pair<std::string, int>, std::string> job_of;
    std::vector<std::string> ids;
    for (const auto& a : jobs["arrays"]) {
        const auto name = a["name"].get<std::string>();
        for (const auto& s : a["submissions"]) {
            ids.push_back(s["job_id"]);
            if (s["tasks"].is_string())  // "all"
                for (int t = 0; t < a["tasks"].get<int>(); ++t) job_of[{name, t}] = s["job_id"];
            else
                for (int t : s["tasks"]) job_of[{name, t}] = s["job_id"];
        }
    }
    const auto slurm = slurm_states(ids);  // before reading results: a task ending meanwhile reads as done

    std::map<std::pair<std::string, int>, std::set<std::pair<int, int>>> expected;  // (ranks, index)
    std::ifstream manifest(fs::path(dir) / "manifest.jsonl");
    for (std::string line; std::getline(manifest, line);) {
        if (line.empty()) continue;
        const auto m = json::parse(line);
        expected[{m["array"], m["task"]}].insert({m["ranks"].get<int>(), m["index"].get<int>()});
    }
    std::vector<TaskState> out;
    for (const auto& a : jobs["arrays"]) {
        const auto name = a["name"].get<std::string>();
        for (int t = 0; t < a["tasks"].get<int>(); ++t) {
            TaskState s;
            s.array = name;
            s.task = t;
            const auto& want = expected[{name, t}];
            s.points = static_cast<int>(want.size());
            std::set<std::pair<int, int>> have;
            const auto results = fs::path(dir) / "results" / name / std::to_string(t);
            if (fs::is_directory(results))
                for (const auto& f : fs::directory_iterator(results)) {
                    if (f.path().extension() != ".jsonl") continue;
                    for (const auto& r : read_records(f.path().string())) {
                        const std::pair<int, int> key{r.contains("problem") ? r["problem"].value("ranks", 0) : 0, r.value("point_index", -1)};
                        if (!want.count(key) || !have.insert(key).second) continue;
                        s.failed_points += r.value("status", "") == "failed";
                    }
                }
            s.recorded = static_cast<int>(have.size());
            const auto job = job_of.find({name, t});
            const auto marker = (fs::path(dir) / "markers" / fmt::format("{}.{}", name, t)).string();
            std::string last_marker;
            if (fs::exists(marker)) {
                std::istringstream in(read_file(marker));
                for (std::string line; std::getline(in, line);)
                    if (!line.empty()) last_marker = line;
            }
            const std::string log = fmt::format("{}/logs/{}_{}.out", dir, name, t);
            if (s.recorded == s.points) {
                s.state = "done";
                if (s.failed_points) s.detail = fmt::format("{} of {} points failed (see the records)", s.failed_points, s.points);
            } else if (job == job_of.end()) {
                s.state = "unsubmitted";
            } else if (auto st = slurm.find(job->second + "_" + std::to_string(t)); st != slurm.end() && is_active(st->second.state)) {
                s.state = st->second.state == "PENDING" ? "pending" : "running";
                s.detail = fmt::format("job {}_{} {}", job->second, t, st->second.state);
            } else {
                s.state = "failed";
                s.detail = fmt::format("job {}_{} {}; {} of {} points recorded; {}; log {}", job->second, t,
                                       st != slurm.end() ? st->second.state : "no longer known to Slurm", s.recorded,
                                       s.points, last_marker.empty() ? "never started" : "last marker: " + last_marker, log);
            }
            out.push_back(std::move(s));
        }
    }
    return out;
}

std::string format_status(const std::vector<TaskState>& states, const std::string& dir) {
    std::map<std::string, std::map<std::string, int>> counts;
    std::vector<std::string> order;
    for (const auto& s : states) {
        if (!counts.count(s.array)) order.push_back(s.array);
        ++counts[s.array][s.state];
    }
    std::string out;
    for (const auto& a : order) {
        auto& c = counts[a];
        int n = 0;
        for (const auto& [_, k] : c) n += k;
        out += fmt::format("{:<20} {:>5} tasks: {} done, {} failed, {} running, {} pending{}\n", a, n, c["done"], c["failed"],
                           c["running"], c["pending"], c["unsubmitted"] ? fmt::format(", {} unsubmitted", c["unsubmitted"]) : "");
    }
    for (const auto& s : states)
        if (s.state == "failed" || (s.state == "done" && s.failed_points))
            out += fmt::format("  {} {}:{}  {}\n", s.state == "failed" ? "FAILED" : "done with failed points", s.array,
                               s.task, s.detail);
    if (fs::exists(fs::path(dir) / "markers" / "merge")) out += "merged: " + dir + "/winners.txt\n";
    return out;
}

std::string resubmit_failed(const std::string& dir) {
    const auto states = job_dir_status(dir);
    auto jobs = load_jobs(dir);
    std::map<std::string, std::vector<int>> failed;
    for (const auto& s : states)
        if (s.state == "failed") failed[s.array].push_back(s.task);
    if (failed.empty()) return "no failed tasks: nothing resubmitted\n";
    std::string out;
    std::vector<std::string> ids;
    for (auto& a : jobs["arrays"]) {
        const auto it = failed.find(a["name"].get<std::string>());
        if (it == failed.end()) continue;
        const auto range = array_range(it->second, jobs.value("throttle", 0));
        const auto id = sbatch({"--array=" + range, a["script"].get<std::string>()});
        a["submissions"].push_back({{"job_id", id}, {"tasks", it->second}, {"time", now_iso()}});
        save_jobs(dir, jobs);
        ids.push_back(id);
        out += fmt::format("array {}: tasks {} resubmitted as job {} (--array={})\n", it->first,
                           array_range(it->second, 0), id, range);
    }
    out += fmt::format("merge: job {} (after {})\n", submit_merge(dir, jobs, ids), fmt::join(ids, ", "));
    return out;
}

std::vector<int> manifest_task_points(const std::string& manifest, const std::string& task, const Testcase& tc,
                                      int world_size) {
    const auto colon = task.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument(fmt::format("--task '{}': expected ARRAY:INDEX", task));
    const std::string array = task.substr(0, colon);
    int index = -1;
    try {
        index = std::stoi(task.substr(colon + 1));
    } catch (const std::exception&) {
        throw std::invalid_argument(fmt::format("--task '{}': the index is not a number", task));
    }
    std::ifstream in(manifest);
    if (!in) throw std::runtime_error("cannot read the manifest " + manifest);
    const auto points = tc.points(world_size);
    std::vector<int> out;
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.empty()) continue;
        const auto m = json::parse(line);
        if (m["array"].get<std::string>() != array || m["task"].get<int>() != index) continue;
        const int ranks = m["ranks"], i = m["index"];
        if (ranks != world_size)
            throw std::runtime_error(fmt::format("{}:{}: task {} needs {} ranks, but this job has {}", manifest, line_no,
                                                 task, ranks, world_size));
        const auto same = [&](const Point& p) {
            return p.key == m["config"].get<std::string>() && m.value("problem", "") == problem_key(p.problem);
        };
        if (i < 0 || i >= static_cast<int>(points.size()) || !same(points[i]))
            throw std::runtime_error(fmt::format("{}:{}: point {} ({} {}) is not the same point in this fftune's enumeration "
                                                 "of the testcase (generated by another version?): regenerate the jobs",
                                                 manifest, line_no, i, m["config"].get<std::string>(),
                                                 m.value("problem", "?")));
        out.push_back(i);
    }
    if (out.empty()) throw std::runtime_error(fmt::format("{}: no points for task {}", manifest, task));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace fftune
