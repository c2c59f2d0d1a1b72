#include "core/platform/parallel.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include <sched.h>

#include "core/platform/settings.hpp"

namespace fftune {
namespace {

int env_int(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return (*end == '\0' && x > 0 && x < (1 << 20)) ? static_cast<int>(x) : 0;
}

}  // namespace

int host_threads() {
    if (const auto forced = host_threads_setting()) return *forced;
    const int hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    int local = 0;
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
        if ((local = env_int(var)) > 0) break;
    int share = std::max(1, hw / std::max(1, local));
    // A rank bound to fewer cores gains nothing from more threads than it may run on.
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) share = std::min(share, std::max(1, CPU_COUNT(&mask)));
    return share;
}

void parallel_for(std::int64_t begin, std::int64_t end, const std::function<void(std::int64_t, std::int64_t)>& body,
                  int threads, std::int64_t min_per_thread) {
    const std::int64_t n = end - begin;
    if (n <= 0) return;
    const std::int64_t by_work = std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, min_per_thread));
    const int t = static_cast<int>(std::min<std::int64_t>({std::max(1, threads), n, by_work}));
    if (t == 1) {
        body(begin, end);
        return;
    }
    std::exception_ptr first;
    std::mutex m;
    std::vector<std::thread> pool;
    pool.reserve(t);
    for (int i = 0; i < t; ++i) {
        // Chunk i: [begin + n*i/t, begin + n*(i+1)/t): sizes differ by at most one.
        const std::int64_t lo = begin + n * i / t, hi = begin + n * (i + 1) / t;
        pool.emplace_back([&, lo, hi] {
            try {
                body(lo, hi);
            } catch (...) {
                std::lock_guard<std::mutex> lock(m);
                if (!first) first = std::current_exception();
            }
        });
    }
    for (auto& th : pool) th.join();
    if (first) std::rethrow_exception(first);
}

}  // namespace fftune
