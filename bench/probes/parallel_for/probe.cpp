// What one parallel_for call costs on its own: a loop of 1000 trivial
// iterations split over T threads, called REPS times; prints one JSON line
// per thread count with the median of 20 batches, in microseconds per call.
// Built against a parallel.cpp given on the command line (run.sh), so the
// kept pool and the threads started per call run in the same job.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/platform/parallel.hpp"

int main(int argc, char** argv) {
    const char* label = argc > 1 ? argv[1] : "?";
    const int reps = 200;
    std::atomic<long> sink{0};
    for (int t : {2, 4, 8, 16}) {
        std::vector<double> us;
        for (int batch = 0; batch < 20; ++batch) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int r = 0; r < reps; ++r)
                fftune::parallel_for(0, 1000, [&](std::int64_t lo, std::int64_t hi) { sink += hi - lo; }, t);
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps);
        }
        std::sort(us.begin(), us.end());
        std::printf("{\"probe\": \"parallel_for\", \"build\": \"%s\", \"threads\": %d, \"us_per_call_median\": %.2f, "
                    "\"us_per_call_min\": %.2f, \"us_per_call_max\": %.2f, \"batches\": 20, \"calls_per_batch\": %d}\n",
                    label, t, us[us.size() / 2], us.front(), us.back(), reps);
    }
    return sink.load() == 0;
}
