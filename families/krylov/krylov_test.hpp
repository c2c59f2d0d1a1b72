// The krylov tests' points and one run of a point (setup, a step, validation,
// the record), shared by the family's test files.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/run/family.hpp"
#include "core/testing/world.hpp"

namespace fftune::krylov::test {

using json = nlohmann::json;
using testing::world_size;

// CG on poisson7 at the world's ranks, fftw backend, sendrecv halo; `n`: {nx, ny, nz}.
inline Point point(const std::array<index_t, 3>& n, int iterations, const std::string& format, const std::string& fusion,
                   const std::string& pre) {
    Point pt;
    pt.problem = {{"kind", "krylov"}, {"ranks", world_size()}, {"size", n}, {"operator", "poisson7"},
                  {"precision", "double"}, {"iterations", {iterations}}};
    pt.config = {{"solver", "cg"}, {"format", format}, {"fusion", fusion}, {"preconditioner", pre}, {"backend", "fftw"}};
    return pt;
}
// The cube n^3.
inline Point point(index_t n, int iterations, const std::string& format, const std::string& fusion, const std::string& pre) {
    return point({n, n, n}, iterations, format, fusion, pre);
}

// COCG on curlcurl13, 5 timed iterations.
inline Point curlcurl_point(const std::array<index_t, 3>& n, const std::string& format, const std::string& fusion,
                            const std::string& pre) {
    Point pt = point(n, 5, format, fusion, pre);
    pt.problem["operator"] = "curlcurl13";
    pt.problem["precision"] = "complex_double";
    pt.config["solver"] = "cocg";
    return pt;
}
inline Point curlcurl_point(index_t n, const std::string& format, const std::string& fusion, const std::string& pre) {
    return curlcurl_point({n, n, n}, format, fusion, pre);
}

struct Ran {
    ValidationResult v;
    json record;
    std::vector<PhaseTraffic> traffic;
};
inline Ran run(const Point& pt) {
    auto w = family_named("krylov").workload(pt);
    w->setup(MPI_COMM_WORLD);
    w->prepare(MPI_COMM_WORLD);
    w->stage();
    w->step();
    Ran out;
    out.traffic = w->traffic();
    out.v = w->validate(MPI_COMM_WORLD);
    w->annotate(MPI_COMM_WORLD, out.record);
    return out;
}

}  // namespace fftune::krylov::test
