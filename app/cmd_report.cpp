// fftune report [RESULTS...] --out DIR: figures and a Markdown report; the plots are Python
// (matplotlib), so this hands over to plotting/report.py.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "app/tuner_options.hpp"
#include "core/base/registry.hpp"
#include "core/platform/log.hpp"
#include "core/run/family.hpp"

namespace fftune::cli {
namespace {

struct ReportOptions {
    std::vector<std::string> files;
    std::string out, title = "fftune report", db_path, machine;
    std::optional<double> hbm_gbps, link_gbps;
};

int hand_over_to_python(const ReportOptions& o) {
    const std::string db_path = database_path(o.db_path);
    const char* dir = std::getenv("FFTUNE_PLOTTING_DIR");
    const std::string script = std::string(dir ? dir : FFTUNE_PLOTTING_DIR) + "/report.py";
    // What defines each family's problems and configurations, for the report's sections.
    std::filesystem::create_directories(o.out);
    const std::string families_file = (std::filesystem::path(o.out) / "families.json").string();
    nlohmann::json described = nlohmann::json::array();
    for (const auto& name : Registry<Family>::instance().names()) described.push_back(describe(family_named(name)));
    std::ofstream(families_file) << described.dump(2) << "\n";
    std::vector<std::string> args{"python3", script, "--out", o.out, "--title", o.title, "--families", families_file};
    if (o.files.empty()) args.insert(args.end(), {"--db", db_path});
    if (!o.machine.empty()) args.insert(args.end(), {"--machine", o.machine});
    if (o.hbm_gbps) args.insert(args.end(), {"--hbm-gbps", fmt::format("{}", *o.hbm_gbps)});
    if (o.link_gbps) args.insert(args.end(), {"--link-gbps", fmt::format("{}", *o.link_gbps)});
    args.insert(args.end(), o.files.begin(), o.files.end());
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    execvp("python3", cargs.data());
    logging::error("cannot run python3 " + script + ": " + std::strerror(errno));
    return 1;
}

}  // namespace

void add_report(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<ReportOptions>();
    auto* report = app.add_subcommand(
        "report", "figures and a Markdown report (plotting/report.py) from the database or result files");
    report->add_option("results", o->files, "JSON-lines result files (instead of the database)");
    report->add_option("--out", o->out, "output directory")->required();
    report->add_option("--title", o->title, "report title");
    const CLI::Validator positive_gbps(
        [](std::string& v) -> std::string {
            char* end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            return end != v.c_str() && *end == '\0' && d > 0 ? "" : "must be a positive bandwidth in GB/s, not " + v;
        },
        "GB/s > 0");
    report->add_option("--hbm-gbps", o->hbm_gbps,
                       "device memory bandwidth for the floors, GB/s (default: measured in the records)")
        ->check(positive_gbps);
    report->add_option("--link-gbps", o->link_gbps,
                       "bandwidth between ranks for the floors, GB/s per direction (default: measured by exchange "
                       "probes given with the results)")
        ->check(positive_gbps);
    add_db_option(report, o->db_path);
    add_machine_option(report, o->machine);
    commands.push_back({report, [o] { return tuner_errors_reported([&] { return hand_over_to_python(*o); }); }});
}

}  // namespace fftune::cli
