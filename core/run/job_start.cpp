#include "core/run/job_start.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>

#include "core/base/registry.hpp"
#include "core/engine/transport.hpp"
#include "core/platform/backend.hpp"
#include "core/platform/collective_try.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/platform/parallel.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

void strings_of(const json& j, std::set<std::string>& out) {
    if (j.is_string()) out.insert(j.get<std::string>());
    else if (j.is_array() || j.is_object())
        for (const auto& v : j) strings_of(v, out);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// `start` on every rank (collective_try): its host time, the max over ranks,
// into parts[name], a failure on any rank into failed[name].
void timed_part(MPI_Comm comm, const std::string& name, const std::function<void()>& start, json& parts, json& failed) {
    const auto t = std::chrono::steady_clock::now();
    const auto err = collective_try(comm, start);
    double ms = ms_since(t), most = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&ms, &most, 1, MPI_DOUBLE, MPI_MAX, comm));
    parts[name] = most;
    if (err) failed[name] = *err;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> transports_named(const std::vector<const Point*>& points) {
    std::set<std::pair<std::string, std::string>> pairs;
    const auto& transports = Registry<Transport>::instance();
    for (const Point* p : points) {
        if (!p->config.contains("backend") || !p->config.at("backend").is_string()) continue;
        std::set<std::string> names;
        strings_of(p->config, names);
        for (const auto& n : names)
            if (transports.contains(n)) pairs.emplace(p->backend(), n);
    }
    return {pairs.begin(), pairs.end()};
}

std::vector<std::pair<std::string, Precision>> precisions_named(const std::vector<const Point*>& points) {
    std::set<std::pair<std::string, Precision>> pairs;
    std::map<std::string, std::unique_ptr<Family>> families;
    const auto& registry = Registry<Family>::instance();
    for (const Point* p : points) {
        if (!p->config.contains("backend") || !p->config.at("backend").is_string()) continue;
        const std::string kind = p->problem.value("kind", "");
        if (!families.count(kind) && registry.contains(kind)) families[kind] = registry.create(kind);
        const auto found = families.find(kind);
        for (Precision precision : found != families.end() ? found->second->precisions(*p) : problem_precisions(p->problem))
            pairs.emplace(p->backend(), precision);
    }
    return {pairs.begin(), pairs.end()};
}

json start_job(MPI_Comm comm, const std::vector<const Point*>& points) {
    const auto t0 = std::chrono::steady_clock::now();
    json parts = json::object(), failed = json::object();
    // The host loops' kept threads (parallel_for), once for every point.
    if (!points.empty()) timed_part(comm, "host_threads", [] { start_host_threads(); }, parts, failed);
    for (const auto& [backend_name, precision] : precisions_named(points)) {
        const std::string name = backend_name + "/warm_up/" + to_string(precision);
        std::unique_ptr<Backend> backend;
        int available = 0;
        if (collective_try(comm, [&] {
                if (!Registry<Backend>::instance().contains(backend_name)) return;
                backend = Registry<Backend>::instance().create(backend_name);
                available = !backend->unavailable();
            }))
            continue;
        int all_available = 0;
        FFTUNE_MPI_CHECK(MPI_Allreduce(&available, &all_available, 1, MPI_INT, MPI_MIN, comm));
        if (!all_available) continue;
        timed_part(comm, name, [&] { backend->warm_up(precision); }, parts, failed);
    }
    for (const auto& [backend_name, transport_name] : transports_named(points)) {
        const std::string name = backend_name + "/" + transport_name;
        std::unique_ptr<Backend> backend;
        std::unique_ptr<Transport> transport;
        // Rank-local: which pairs can start here (a device, NCCL's one GPU per rank).
        int applies = 0;
        if (collective_try(comm, [&] {
                if (!Registry<Backend>::instance().contains(backend_name)) return;
                backend = Registry<Backend>::instance().create(backend_name);
                if (backend->unavailable()) return;
                transport = Registry<Transport>::instance().create(transport_name);
                applies = !transport->not_applicable(*backend, false) && !transport->not_runnable_here(*backend);
            }))
            continue;
        int all_apply = 0;
        FFTUNE_MPI_CHECK(MPI_Allreduce(&applies, &all_apply, 1, MPI_INT, MPI_MIN, comm));
        if (!all_apply) continue;
        timed_part(comm, name, [&] { transport->start_job(comm, *backend); }, parts, failed);
    }
    double ms = ms_since(t0), most = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&ms, &most, 1, MPI_DOUBLE, MPI_MAX, comm));
    json out{{"startup_ms", most}, {"parts_ms", parts}};
    if (!failed.empty()) out["failed"] = failed;
    return out;
}

}  // namespace fftune
