#include "core/run/testcase.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fftune {

using json = nlohmann::json;

Testcase parse_testcase(const json& j, const std::string& source) {
    TestcaseParser ps(source);
    if (!j.is_object()) ps.fail("", "a testcase must be a JSON object");
    auto require = [&](const char* key) -> const json& {
        if (!j.contains(key)) ps.fail(std::string("/") + key, "missing required key");
        return j.at(key);
    };
    Testcase tc;
    // The family first: it says which keys are known.
    tc.problem = ps.names_axis(require("problem"), "/problem", Registry<Family>::instance().names()).front();
    const Family& family = tc.family();
    std::set<std::string> known{"name", "problem", "ranks", "warmup", "iterations", "validate", "point_timeout_s",
                                "launcher", "description"};
    for (const auto& k : family.testcase_keys()) known.insert(k);
    for (const auto& [key, value] : j.items())
        if (!known.count(key))
            ps.fail("/" + key, fmt::format("unknown key for problem {} (allowed: {})", tc.problem,
                                           TestcaseParser::list({known.begin(), known.end()})));

    const json& name = require("name");
    if (!name.is_string() || name.get<std::string>().empty())
        ps.fail("/name", fmt::format("{} is not a non-empty string", name.dump()));
    tc.name = name.get<std::string>();

    // One MPI job per rank count: a count given twice would run its job twice.
    tc.ranks = ps.int_axis(require("ranks"), "/ranks", 1);

    tc.axes = family.parse(ps, j, tc.ranks);

    if (j.contains("warmup")) tc.warmup = ps.integer(j.at("warmup"), "/warmup", 0);
    if (j.contains("iterations")) tc.iterations = ps.integer(j.at("iterations"), "/iterations", 1);
    if (j.contains("point_timeout_s")) {
        const json& t = j.at("point_timeout_s");
        if (!t.is_number() || t.get<double>() < 0 || !std::isfinite(t.get<double>()))
            ps.fail("/point_timeout_s", fmt::format("{} is not allowed (allowed: seconds, a number > 0, or 0 for no limit)",
                                                    t.dump()));
        tc.point_timeout_s = t.get<double>();
    }
    if (j.contains("validate")) tc.validate = ps.boolean(j.at("validate"), "/validate");
    if (j.contains("description") && !j.at("description").is_string())
        ps.fail("/description", "is not a string");
    if (j.contains("launcher")) {
        const json& l = j.at("launcher");
        if (!l.is_object()) ps.fail("/launcher", "is not an object {\"command\": ..., \"args\": [...]}");
        for (const auto& [key, value] : l.items()) {
            if (key == "command") {
                if (!value.is_string() || value.get<std::string>().empty())
                    ps.fail("/launcher/command", fmt::format("{} is not a command name", value.dump()));
                tc.launcher = value.get<std::string>();
            } else if (key == "args") {
                if (!value.is_array()) ps.fail("/launcher/args", "is not a list of strings");
                for (std::size_t i = 0; i < value.size(); ++i) {
                    if (!value[i].is_string()) ps.fail(fmt::format("/launcher/args/{}", i), "is not a string");
                    tc.launcher_args.push_back(value[i].get<std::string>());
                }
            } else {
                ps.fail("/launcher/" + key, "unknown key (allowed: args, command)");
            }
        }
    }
    return tc;
}

Testcase load_testcase(const std::string& path) {
    // A FIFO would block the open until a writer comes, and its content could not
    // be read again by the jobs, which load the testcase too.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw TestcaseError(fmt::format("{}: not a regular file ({}); a testcase is a JSON file, which the launcher "
                                        "and each job read",
                                        path, std::filesystem::is_directory(status) ? "a directory"
                                              : std::filesystem::is_fifo(status)    ? "a FIFO"
                                                                                    : "a device or socket"));
    std::ifstream in(path);
    if (!in) throw TestcaseError(path + ": cannot open the file");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse_testcase(TestcaseParser(path).parse_document(text), path);
}

std::vector<Point> Testcase::points(int ranks) const {
    if (!axes) return {};
    return family().points(*axes, ranks);
}

}  // namespace fftune
