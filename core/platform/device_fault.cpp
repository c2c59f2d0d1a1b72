#include "core/platform/device_fault.hpp"
#include "core/platform/log.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fftune {
namespace {

std::string& note_path() {
    static std::string path;
    return path;
}

}  // namespace

std::string device_fault_note_path(const std::string& result_file) { return result_file + ".died"; }

std::string take_job_end_note(const std::string& result_file) {
    const std::string path = device_fault_note_path(result_file);
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    in.close();
    std::filesystem::remove(path);
    return lines.empty() ? "" : fmt::format(" ({})", fmt::join(lines, "; "));
}

void set_device_fault_note(const std::string& result_file) {
    note_path() = result_file.empty() ? std::string() : device_fault_note_path(result_file);
}

void end_job(MPI_Comm comm, const std::string& why, int status, bool write_note, bool may_abort) {
    // The note names the rank for the record; the log's prefix names it already.
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const std::string own = "rank " + std::to_string(rank) + ": ";
    logging::error((why.rfind(own, 0) == 0 ? why.substr(own.size()) : why) + "; ending the job");
    if (write_note && !note_path().empty()) std::ofstream(note_path(), std::ios::app) << why << '\n' << std::flush;
    if (may_abort) MPI_Abort(comm, status);
    std::_Exit(status);  // the launcher ends a job whose process exits without MPI_Finalize
}

void end_job_if_device_lost(Backend& backend, MPI_Comm comm, const std::string& failed) {
    const auto fault = backend.device_fault();
    if (!fault) return;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    end_job(comm, fmt::format("rank {}: device lost after: {}: {}", rank, failed, *fault), 4, true,
            /*may_abort=*/true);  // called on the thread that runs the points
}

std::exception_ptr unless_device_lost(Backend& backend, MPI_Comm comm, std::exception_ptr failed) {
    if (!failed) return failed;
    std::string what = "unknown error";
    try {
        std::rethrow_exception(failed);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    end_job_if_device_lost(backend, comm, what);
    return failed;
}

}  // namespace fftune
