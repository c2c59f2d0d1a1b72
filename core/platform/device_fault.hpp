// A failure that has cost a rank its device (Backend::device_fault, a sticky
// CUDA error) ends the MPI job: that process can neither finish an exchange
// its peers may be waiting in, nor run another point. The sweep then resumes
// after the point in fresh processes (core/run/sweep.cpp), and records the reason
// this rank left beside the results. A point that runs past its time limit
// ends the job the same way (core/run/point_watchdog.hpp).
#pragma once

#include <exception>
#include <string>

#include <mpi.h>

#include "core/platform/backend.hpp"

namespace fftune {

// Where a rank that ends the job leaves its reason: the result file's path +
// ".died". run_job names its result file here; empty: no note.
void set_device_fault_note(const std::string& result_file);
std::string device_fault_note_path(const std::string& result_file);
// What the ranks that ended the job said, as " (<line>; <line>)", or "" when
// they left no note; the note is removed.
std::string take_job_end_note(const std::string& result_file);

// `failed` (a failure_of) unchanged, unless it is a failure and `backend`'s
// device is lost: then the note (appended, one line: "rank R: device lost
// after: <failure>: <fault>") is written and the job ends (MPI_Abort on
// `comm`, status 4). Call it before the next collective call after a step.
std::exception_ptr unless_device_lost(Backend& backend, MPI_Comm comm, std::exception_ptr failed);
// The same for a failure already agreed (collective_try's message).
void end_job_if_device_lost(Backend& backend, MPI_Comm comm, const std::string& failed);

// Ends the job now with `status`: says `why` on stderr and, if `write_note`,
// appends it to the note. Through MPI_Abort where `may_abort` (the main
// thread, or MPI_THREAD_MULTIPLE); otherwise this process exits, which makes
// the launcher end the job. Calls no other MPI function.
[[noreturn]] void end_job(MPI_Comm comm, const std::string& why, int status, bool write_note, bool may_abort);

}  // namespace fftune
