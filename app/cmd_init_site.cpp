// fftune init-site [--out F] [--force]: a starting cluster profile from sinfo and scontrol.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "core/platform/log.hpp"
#include "core/records/provenance.hpp"
#include "jobs/cluster_profile.hpp"

namespace fftune::cli {
namespace {

struct InitSiteOptions {
    std::string out;
    bool force = false;
};

int write_profile(InitSiteOptions o) {
    const auto profile = profile_from_this_slurm();
    if (o.out.empty()) o.out = sanitize_filename(profile.name) + ".json";
    if (std::filesystem::exists(o.out) && !o.force) {
        logging::error(o.out + " exists (use --force to overwrite)");
        return 2;
    }
    std::ofstream(o.out) << to_json(profile).dump(2) << "\n";
    std::cout << fmt::format("{}: partition {} ({} nodes, {} CPUs and {} GPUs per node), MaxArraySize {}, launcher {}\n"
                             "Check account, qos, modules and binding before the first submission.\n",
                             o.out, profile.partition, profile.target().nodes, profile.target().cpus_per_node,
                             profile.target().gpus_per_node, profile.max_array_size, profile.launcher);
    return 0;
}

}  // namespace

void add_init_site(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<InitSiteOptions>();
    auto* init_site = app.add_subcommand("init-site", "write a starting cluster profile from sinfo and scontrol");
    init_site->add_option("--out", o->out, "profile file (default: <ClusterName>.json)");
    init_site->add_flag("--force", o->force, "overwrite an existing profile");
    commands.push_back({init_site, [o] { return jobs_errors_reported([&] { return write_profile(*o); }); }});
}

}  // namespace fftune::cli
