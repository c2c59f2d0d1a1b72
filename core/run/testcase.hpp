// Testcase: a JSON file naming a problem family and axes whose product is the
// set of points to run (testcases/README.md). The common keys are read here,
// the family's own by its Family (core/run/family.hpp). Parsing validates
// everything before any run; errors name the JSON path, the bad value and
// what is allowed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/run/family.hpp"
#include "core/run/testcase_parser.hpp"

namespace fftune {

struct Testcase {
    std::string name;
    std::string problem = "fft3d";  // the family
    std::vector<int> ranks;
    std::shared_ptr<const FamilyAxes> axes;  // the family's keys, parsed
    int warmup = 10;
    int iterations = 20;
    bool validate = true;
    // A point still running after this long ends its job (core/run/point_watchdog.hpp); 0: no limit.
    double point_timeout_s = 1800;
    std::string launcher = "mpirun";
    std::vector<std::string> launcher_args;

    const Family& family() const { return family_named(problem); }
    // All points for jobs of `ranks` ranks, in a fixed order.
    std::vector<Point> points(int ranks) const;
};

// `source` names the file in error messages.
Testcase parse_testcase(const nlohmann::json& j, const std::string& source);
Testcase load_testcase(const std::string& path);

}  // namespace fftune
