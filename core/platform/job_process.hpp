// A job (an MPI launcher and the ranks it starts) that does not outlive the
// process that launched it, and whose failure can be told and reported:
//  - the job's own process gets SIGTERM when its launcher dies, however it
//    dies (kill -9 included: prctl(PR_SET_PDEATHSIG)); mpirun then ends its ranks;
//  - SIGINT, SIGTERM and SIGHUP sent to the launcher are forwarded to it and
//    to every process below it (while an InterruptGuard lives: mpirun alone
//    lets its ranks run on for a second), and a job that has not ended 10 s
//    later is killed;
//  - once the job's own process has ended, every process it left behind (a
//    rank that outlived mpirun) is killed and reaped before run_supervised
//    returns: the launcher is their subreaper (PR_SET_CHILD_SUBREAPER), so
//    nothing of the job can still write after it;
//  - its stderr is relayed to the launcher's as it comes, and its last lines
//    are kept for the launcher's messages.
#pragma once

#include <string>
#include <vector>

namespace fftune {

struct JobRun {
    int status = 0;           // exit status, or 128 + signal when killed
    int interrupted_by = 0;   // a signal the launcher received while the job ran (see InterruptGuard), else 0
    std::string output_tail;  // the last lines of the job's stderr (at most 20)
};

// Runs `cmd` (cmd[0] looked up in PATH) as a supervised job and waits for it
// and everything it started. Throws when the program cannot be started.
JobRun run_supervised(const std::vector<std::string>& cmd);

// While one lives, SIGINT, SIGTERM and SIGHUP do not end this process: the
// last one received is kept (received()) and forwarded to the job that
// run_supervised is running: to every process below the job's own, and to
// that one unless the terminal sent the signal (then, in the same process
// group, it has it already). A signal this process ignores (nohup's SIGHUP)
// stays ignored. Not nested.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    static int received();  // 0: none
};

// For a rank of a job: whether the launcher that run_supervised the job has
// ended (kill -9 too). run_supervised names itself to the job in the
// environment (FFTUNE_LAUNCHER: PID, start time, host); a rank on another
// host, or not started by run_supervised, cannot tell and gets false.
bool launcher_ended();

// For a rank of a job: this process is killed (SIGKILL) when its parent (the
// launcher's daemon that started it, mpirun) ends, so that no rank outlives its
// job to write after the launcher has given up on it.
void end_with_parent();

// The child processes of `pid`, from /proc.
std::vector<long> child_processes(long pid);
// "SIGINT", "SIGTERM", ... for a signal number.
std::string signal_name(int sig);

}  // namespace fftune
