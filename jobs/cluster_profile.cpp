#include "jobs/cluster_profile.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/platform/process.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

// Names that end up in sbatch options: a conservative charset (they are quoted
// as well; this catches typos and pasted shell early).
const std::regex safe_name{R"([A-Za-z0-9_.:,+=/@%-]+)"};
// Slurm time: minutes | MM:SS | HH:MM:SS | D-HH | D-HH:MM | D-HH:MM:SS.
const std::regex slurm_time{R"(\d+|\d+:\d{2}|\d+:\d{2}:\d{2}|\d+-\d+|\d+-\d+:\d{2}|\d+-\d+:\d{2}:\d{2})"};
const std::regex env_name{R"([A-Za-z_][A-Za-z0-9_]*)"};

// Minutes in a Slurm time (already matched by slurm_time), rounded up.
long slurm_minutes(const std::string& t) {
    long days = 0;
    std::string rest = t;
    if (auto dash = t.find('-'); dash != std::string::npos) {
        days = std::stol(t.substr(0, dash));
        rest = t.substr(dash + 1);
    }
    std::vector<long> f;
    std::istringstream in(rest);
    for (std::string x; std::getline(in, x, ':');) f.push_back(std::stol(x));
    long minutes = 0;
    if (t.find('-') != std::string::npos) {  // D-HH[:MM[:SS]]
        minutes = f[0] * 60 + (f.size() > 1 ? f[1] : 0) + (f.size() > 2 && f[2] > 0 ? 1 : 0);
    } else if (f.size() == 1) {  // MM
        minutes = f[0];
    } else if (f.size() == 2) {  // MM:SS
        minutes = f[0] + (f[1] > 0 ? 1 : 0);
    } else {  // HH:MM:SS
        minutes = f[0] * 60 + f[1] + (f[2] > 0 ? 1 : 0);
    }
    return days * 24 * 60 + minutes;
}

struct Checker {
    std::string source;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw ProfileError(fmt::format("{}: {}: {}", source, path, what));
    }
    std::string string(const json& j, const std::string& path) const {
        if (!j.is_string()) fail(path, fmt::format("{} is not a string", j.dump()));
        return j.get<std::string>();
    }
    std::string name(const json& j, const std::string& path) const {
        auto s = string(j, path);
        if (!std::regex_match(s, safe_name))
            fail(path, fmt::format("'{}' is not a valid name (allowed characters: letters, digits and _.:,+=/@%-)", s));
        return s;
    }
    std::string time(const json& j, const std::string& path) const {
        auto s = string(j, path);
        if (!std::regex_match(s, slurm_time))
            fail(path, fmt::format("'{}' is not a Slurm time (allowed: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)", s));
        return s;
    }
    int integer(const json& j, const std::string& path, int min, int max = 1 << 30) const {
        if (!j.is_number_integer()) fail(path, fmt::format("{} is not an integer", j.dump()));
        const auto v = j.get<long long>();
        if (v < min || v > max) fail(path, fmt::format("{} is out of range (allowed: {} to {})", v, min, max));
        return static_cast<int>(v);
    }
    std::vector<std::string> strings(const json& j, const std::string& path, bool names) const {
        if (!j.is_array()) fail(path, fmt::format("{} is not a list of strings", j.dump()));
        std::vector<std::string> out;
        for (std::size_t i = 0; i < j.size(); ++i) {
            const auto p = fmt::format("{}/{}", path, i);
            out.push_back(names ? name(j[i], p) : string(j[i], p));
        }
        return out;
    }
    void keys(const json& j, const std::string& path, const std::vector<std::string>& allowed) const {
        if (!j.is_object()) fail(path, fmt::format("{} is not an object", j.dump()));
        for (const auto& [k, v] : j.items())
            if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
                fail(path + "/" + k, fmt::format("unknown key '{}' (allowed: {})", k, fmt::join(allowed, ", ")));
    }
};

}  // namespace

ClusterProfile parse_cluster_profile(const json& j, const std::string& source) {
    const Checker c{source};
    c.keys(j, "", {"name", "description", "partitions", "partition", "cpu_partition", "account", "qos", "time_limit",
                   "merge_time_limit", "max_array_size", "array_throttle", "points_per_task", "cpu_points_per_task",
                   "launcher", "srun_mpi", "cores_per_gpu",
                   "cores_per_task", "gpu_bind", "cpu_bind", "nics_per_gpu", "modules", "environment", "setup",
                   "sbatch_args", "fftune"});
    ClusterProfile p;
    if (!j.contains("name")) c.fail("/name", "missing (a name for the cluster)");
    p.name = c.name(j["name"], "/name");
    if (!j.contains("partitions") || !j["partitions"].is_object() || j["partitions"].empty())
        c.fail("/partitions", "missing or empty (an object: partition name -> {nodes, cpus_per_node, gpus_per_node, max_time})");
    for (const auto& [pname, pj] : j["partitions"].items()) {
        const std::string path = "/partitions/" + pname;
        if (!std::regex_match(pname, safe_name)) c.fail(path, fmt::format("'{}' is not a valid partition name", pname));
        c.keys(pj, path, {"nodes", "cpus_per_node", "gpus_per_node", "max_time"});
        Partition part;
        for (const char* k : {"nodes", "cpus_per_node"})
            if (!pj.contains(k)) c.fail(path + "/" + k, "missing");
        part.nodes = c.integer(pj["nodes"], path + "/nodes", 1);
        part.cpus_per_node = c.integer(pj["cpus_per_node"], path + "/cpus_per_node", 1);
        if (pj.contains("gpus_per_node")) part.gpus_per_node = c.integer(pj["gpus_per_node"], path + "/gpus_per_node", 0, 64);
        if (pj.contains("max_time") && pj["max_time"] != "infinite" && pj["max_time"] != "UNLIMITED")
            part.max_time = c.time(pj["max_time"], path + "/max_time");
        p.partitions[pname] = part;
    }
    if (j.contains("partition")) {
        p.partition = c.name(j["partition"], "/partition");
        if (!p.partitions.count(p.partition)) {
            std::vector<std::string> names;
            for (const auto& [n, _] : p.partitions) names.push_back(n);
            c.fail("/partition", fmt::format("'{}' is not among /partitions (allowed: {})", p.partition, fmt::join(names, ", ")));
        }
    } else if (p.partitions.size() == 1) {
        p.partition = p.partitions.begin()->first;
    } else {
        c.fail("/partition", "missing: name the partition to submit to (there is more than one)");
    }
    if (j.contains("cpu_partition")) {
        p.cpu_partition = c.name(j["cpu_partition"], "/cpu_partition");
        if (!p.partitions.count(p.cpu_partition))
            c.fail("/cpu_partition", fmt::format("'{}' is not among /partitions", p.cpu_partition));
    }
    if (j.contains("account")) p.account = c.name(j["account"], "/account");
    if (j.contains("qos")) p.qos = c.name(j["qos"], "/qos");
    if (j.contains("time_limit")) p.time_limit = c.time(j["time_limit"], "/time_limit");
    if (j.contains("max_array_size")) p.max_array_size = c.integer(j["max_array_size"], "/max_array_size", 1, 4000001);
    if (j.contains("array_throttle")) p.array_throttle = c.integer(j["array_throttle"], "/array_throttle", 0);
    if (j.contains("points_per_task")) p.points_per_task = c.integer(j["points_per_task"], "/points_per_task", 1);
    // A profile that sets points_per_task alone keeps it for CPU points too.
    if (j.contains("cpu_points_per_task"))
        p.cpu_points_per_task = c.integer(j["cpu_points_per_task"], "/cpu_points_per_task", 1);
    else if (j.contains("points_per_task"))
        p.cpu_points_per_task = p.points_per_task;
    if (j.contains("merge_time_limit")) p.merge_time_limit = c.time(j["merge_time_limit"], "/merge_time_limit");
    if (j.contains("launcher")) {
        p.launcher = c.string(j["launcher"], "/launcher");
        if (p.launcher != "srun" && p.launcher != "mpirun")
            c.fail("/launcher", fmt::format("unknown value '{}' (allowed: srun, mpirun)", p.launcher));
    }
    if (j.contains("srun_mpi")) p.srun_mpi = c.name(j["srun_mpi"], "/srun_mpi");
    if (j.contains("cores_per_gpu")) p.cores_per_gpu = c.integer(j["cores_per_gpu"], "/cores_per_gpu", 1);
    if (j.contains("cores_per_task")) p.cores_per_task = c.integer(j["cores_per_task"], "/cores_per_task", 1);
    if (j.contains("gpu_bind")) p.gpu_bind = c.name(j["gpu_bind"], "/gpu_bind");
    if (j.contains("cpu_bind")) p.cpu_bind = c.name(j["cpu_bind"], "/cpu_bind");
    if (j.contains("nics_per_gpu")) p.nics_per_gpu = c.strings(j["nics_per_gpu"], "/nics_per_gpu", true);
    if (j.contains("modules")) p.modules = c.strings(j["modules"], "/modules", true);
    if (j.contains("environment")) {
        if (!j["environment"].is_object()) c.fail("/environment", "not an object (NAME -> value)");
        for (const auto& [k, v] : j["environment"].items()) {
            if (!std::regex_match(k, env_name))
                c.fail("/environment/" + k, fmt::format("'{}' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", k));
            p.environment.emplace_back(k, c.string(v, "/environment/" + k));
        }
    }
    if (j.contains("setup")) p.setup = c.strings(j["setup"], "/setup", false);
    if (j.contains("sbatch_args")) {
        p.sbatch_args = c.strings(j["sbatch_args"], "/sbatch_args", false);
        for (std::size_t i = 0; i < p.sbatch_args.size(); ++i)
            if (p.sbatch_args[i].rfind("-", 0) != 0 || p.sbatch_args[i].find('\n') != std::string::npos)
                c.fail(fmt::format("/sbatch_args/{}", i), fmt::format("'{}' is not an sbatch option (one line starting with -)", p.sbatch_args[i]));
    }
    if (j.contains("fftune")) p.fftune = c.string(j["fftune"], "/fftune");

    const auto& t = p.target();
    const int ranks_per_node = t.gpus_per_node > 0 ? t.gpus_per_node : t.cpus_per_node / p.cores_per_task;
    if (t.gpus_per_node > 0 && p.cores_per_gpu * t.gpus_per_node > t.cpus_per_node)
        c.fail("/cores_per_gpu", fmt::format("{} cores per GPU x {} GPUs exceed the {} CPUs per node of partition '{}'",
                                             p.cores_per_gpu, t.gpus_per_node, t.cpus_per_node, p.partition));
    if (ranks_per_node < 1)
        c.fail("/cores_per_task", fmt::format("{} exceeds the {} CPUs per node of partition '{}'", p.cores_per_task,
                                              t.cpus_per_node, p.partition));
    if (!t.max_time.empty() && slurm_minutes(p.time_limit) > slurm_minutes(t.max_time))
        c.fail("/time_limit", fmt::format("'{}' exceeds the time limit '{}' of partition '{}'", p.time_limit, t.max_time,
                                          p.partition));
    if (!p.cpu_partition.empty()) {
        const auto& cpu = p.target_for(false);
        if (p.cores_per_task > cpu.cpus_per_node)
            c.fail("/cores_per_task", fmt::format("{} exceeds the {} CPUs per node of partition '{}'", p.cores_per_task,
                                                  cpu.cpus_per_node, p.cpu_partition));
        if (!cpu.max_time.empty() && slurm_minutes(p.time_limit) > slurm_minutes(cpu.max_time))
            c.fail("/time_limit", fmt::format("'{}' exceeds the time limit '{}' of partition '{}'", p.time_limit,
                                              cpu.max_time, p.cpu_partition));
    }
    if (const auto& m = p.target_for(false); !m.max_time.empty() && slurm_minutes(p.merge_time_limit) > slurm_minutes(m.max_time))
        c.fail("/merge_time_limit", fmt::format("'{}' exceeds the time limit '{}' of partition '{}'", p.merge_time_limit,
                                                m.max_time, p.partition_for(false)));
    if (!p.nics_per_gpu.empty() && static_cast<int>(p.nics_per_gpu.size()) != t.gpus_per_node)
        c.fail("/nics_per_gpu", fmt::format("{} entries, but partition '{}' has {} GPUs per node (one NIC per GPU)",
                                            p.nics_per_gpu.size(), p.partition, t.gpus_per_node));
    return p;
}

ClusterProfile load_cluster_profile(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ProfileError(path + ": cannot read the cluster profile");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        throw ProfileError(path + ": not valid JSON: " + e.what());
    }
    return parse_cluster_profile(j, path);
}

json to_json(const ClusterProfile& p) {
    json j{{"name", p.name}, {"partition", p.partition}, {"time_limit", p.time_limit},
           {"max_array_size", p.max_array_size}, {"array_throttle", p.array_throttle},
           {"points_per_task", p.points_per_task}, {"cpu_points_per_task", p.cpu_points_per_task},
           {"merge_time_limit", p.merge_time_limit}, {"launcher", p.launcher}, {"cores_per_gpu", p.cores_per_gpu},
           {"cores_per_task", p.cores_per_task}, {"gpu_bind", p.gpu_bind}, {"cpu_bind", p.cpu_bind},
           {"modules", p.modules}, {"setup", p.setup}, {"sbatch_args", p.sbatch_args}};
    for (const auto& [n, part] : p.partitions) {
        json pj{{"nodes", part.nodes}, {"cpus_per_node", part.cpus_per_node}, {"gpus_per_node", part.gpus_per_node}};
        if (!part.max_time.empty()) pj["max_time"] = part.max_time;
        j["partitions"][n] = pj;
    }
    if (!p.cpu_partition.empty()) j["cpu_partition"] = p.cpu_partition;
    if (!p.account.empty()) j["account"] = p.account;
    if (!p.qos.empty()) j["qos"] = p.qos;
    if (!p.srun_mpi.empty()) j["srun_mpi"] = p.srun_mpi;
    if (!p.nics_per_gpu.empty()) j["nics_per_gpu"] = p.nics_per_gpu;
    j["environment"] = json::object();
    for (const auto& [k, v] : p.environment) j["environment"][k] = v;
    if (!p.fftune.empty()) j["fftune"] = p.fftune;
    return j;
}

namespace {

// "gpu:4", "gpu:h200:4", "gpu:h200:4(S:0-1),shard:8" -> 4.
int gpus_from_gres(const std::string& gres) {
    static const std::regex gpu{R"((?:^|,)gpu(?::[A-Za-z0-9_.-]+)?:(\d+))"};
    std::smatch m;
    return std::regex_search(gres, m, gpu) ? std::stoi(m[1]) : 0;
}

std::string config_value(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        auto k = line.substr(0, eq);
        k.erase(k.find_last_not_of(" \t") + 1);
        if (k != key) continue;
        auto v = line.substr(eq + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t\r") + 1);
        return v;
    }
    return {};
}

// Slurm time limits: "infinite", "1-00:00:00", "30:00" -> the profile's format.
std::string time_or_empty(const std::string& t) { return std::regex_match(t, slurm_time) ? t : std::string(); }

}  // namespace

ClusterProfile profile_from_slurm(const std::string& sinfo, const std::string& scontrol_config,
                                  const std::string& srun_mpi_list) {
    json j;
    std::string name = config_value(scontrol_config, "ClusterName");
    j["name"] = std::regex_match(name, safe_name) ? name : "cluster";
    std::istringstream in(sinfo);
    std::string line, default_partition, first_partition;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream fs(line);
        for (std::string x; std::getline(fs, x, '|');) f.push_back(x);
        if (f.size() < 5) continue;
        std::string pname = f[0];
        const bool is_default = !pname.empty() && pname.back() == '*';
        if (is_default) pname.pop_back();
        if (!std::regex_match(pname, safe_name)) continue;
        int nodes = 0, cpus = 0;
        try {
            nodes = std::stoi(f[1]);
            cpus = std::stoi(f[2]);  // "64" or "64+" on mixed partitions: the smallest
        } catch (const std::exception&) {
            continue;
        }
        // sinfo prints one line per node configuration: keep the largest node count
        // of a partition and the smallest CPU/GPU counts (so shapes fit every node).
        json pj{{"nodes", nodes}, {"cpus_per_node", cpus}, {"gpus_per_node", gpus_from_gres(f[3])}};
        if (auto t = time_or_empty(f[4]); !t.empty()) pj["max_time"] = t;
        auto& slot = j["partitions"][pname];
        if (slot.is_null()) slot = pj;
        else {
            slot["nodes"] = slot["nodes"].get<int>() + nodes;
            slot["cpus_per_node"] = std::min(slot["cpus_per_node"].get<int>(), cpus);
            slot["gpus_per_node"] = std::min(slot["gpus_per_node"].get<int>(), pj["gpus_per_node"].get<int>());
        }
        if (first_partition.empty()) first_partition = pname;
        if (is_default) default_partition = pname;
    }
    if (!j.contains("partitions")) throw ProfileError("sinfo lists no partition: is this a Slurm login node?");
    if (default_partition.empty()) default_partition = first_partition;  // sinfo marks the default with '*'
    j["partition"] = default_partition;
    const auto& part = j["partitions"][default_partition];
    const int gpus = part["gpus_per_node"].get<int>();
    if (gpus > 0) j["cores_per_gpu"] = std::max(1, part["cpus_per_node"].get<int>() / gpus);
    if (auto m = config_value(scontrol_config, "MaxArraySize"); !m.empty()) {
        try {
            j["max_array_size"] = std::stoi(m);
        } catch (const std::exception&) {
        }
    }
    if (srun_mpi_list.find("pmix") != std::string::npos) {
        j["launcher"] = "srun";
        j["srun_mpi"] = "pmix";
    } else {
        j["launcher"] = "mpirun";
    }
    if (part.contains("max_time") && slurm_minutes(part["max_time"]) < 60) j["time_limit"] = part["max_time"];
    return parse_cluster_profile(j, "init-site");
}

ClusterProfile profile_from_this_slurm() {
    const auto sinfo = run_capture({"sinfo", "-h", "-o", "%P|%D|%c|%G|%l"});
    if (sinfo.status != 0) throw ProfileError("sinfo failed (is Slurm installed and configured here?): " + sinfo.output);
    const auto config = run_capture({"scontrol", "show", "config"});
    if (config.status != 0) throw ProfileError("scontrol show config failed: " + config.output);
    const auto mpi = run_capture({"srun", "--mpi=list"});
    return profile_from_slurm(sinfo.output, config.output, mpi.status == 0 ? mpi.output : "");
}

}  // namespace fftune
