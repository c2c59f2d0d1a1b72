#include "core/device_fault.hpp"

#include <fstream>
#include <iostream>

#include <fmt/format.h>

namespace fftune {
namespace {

std::string& note_path() {
    static std::string path;
    return path;
}

}  // namespace

std::string device_fault_note_path(const std::string& result_file) { return result_file + ".died"; }

void set_device_fault_note(const std::string& result_file) {
    note_path() = result_file.empty() ? std::string() : device_fault_note_path(result_file);
}

void end_job_if_device_lost(Backend& backend, MPI_Comm comm, const std::string& failed) {
    const auto fault = backend.device_fault();
    if (!fault) return;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::string why = fmt::format("rank {}: device lost after: {}: {}", rank, failed, *fault);
    std::cerr << "fftune: " << why << "; ending the job (the sweep resumes after this point)\n" << std::flush;
    if (!note_path().empty()) std::ofstream(note_path(), std::ios::app) << why << '\n' << std::flush;
    MPI_Abort(comm, 4);
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
