// A supervised job: its status and last words; nothing it started outlives
// it; it dies with its launcher (kill -9 included); the launcher's SIGTERM
// reaches it and is reported.
#include "core/platform/job_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace fftune {
namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("fftune_job_process_test_" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

// A process runs (and is no zombie).
bool running(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) return false;
    const auto close = stat.rfind(')');
    return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

// Waits up to `seconds` for a file to hold a PID.
long pid_in(const std::string& path, double seconds = 10) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    do {
        std::ifstream in(path);
        long pid = 0;
        if (in >> pid && pid > 0) return pid;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < end);
    return 0;
}

bool ends_within(long pid, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (!running(pid)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

TEST(JobProcess, StatusAndTheLastLinesOfStderr) {
    std::string script;
    for (int i = 1; i <= 25; ++i) script += "echo line " + std::to_string(i) + " >&2; ";
    const auto run = run_supervised({"sh", "-c", script + "exit 3"});
    EXPECT_EQ(run.status, 3);
    EXPECT_EQ(run.interrupted_by, 0);
    EXPECT_EQ(run.output_tail.rfind("line 6\n", 0), 0u) << run.output_tail;  // the last 20 lines
    EXPECT_EQ(run.output_tail.substr(run.output_tail.size() - 7), "line 25") << run.output_tail;
    EXPECT_EQ(run_supervised({"sh", "-c", "kill -TERM $$"}).status, 128 + SIGTERM);
}

TEST(JobProcess, AProgramThatCannotStartThrows) {
    try {
        run_supervised({"fftune-no-such-program-xyz"});
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot start 'fftune-no-such-program-xyz'"), std::string::npos) << e.what();
    }
}

// What the job leaves running when its own process ends (a rank that outlived
// mpirun, here in a session of its own) is ended before run_supervised returns.
TEST(JobProcess, NothingTheJobStartedOutlivesIt) {
    TempDir dir;
    const auto pid_file = dir.file("left.pid");
    const auto run = run_supervised(
        {"sh", "-c", "setsid sh -c 'echo $$ > " + pid_file + "; exec sleep 60' & while [ ! -s " + pid_file +
                         " ]; do sleep 0.01; done; exit 5"});
    EXPECT_EQ(run.status, 5);
    const long left = pid_in(pid_file, 0);
    ASSERT_GT(left, 0);
    EXPECT_FALSE(running(left)) << "process " << left << " of the job still runs";
}

// kill -9 of the launcher ends its job's own process (PR_SET_PDEATHSIG).
TEST(JobProcess, TheJobDiesWithItsLauncher) {
    TempDir dir;
    const auto pid_file = dir.file("job.pid");
    const pid_t launcher = fork();
    if (launcher == 0) {
        run_supervised({"sh", "-c", "echo $$ > " + pid_file + "; exec sleep 60"});
        _exit(0);
    }
    const long job = pid_in(pid_file);
    ASSERT_GT(job, 0);
    EXPECT_TRUE(running(job));
    kill(launcher, SIGKILL);
    waitpid(launcher, nullptr, 0);
    EXPECT_TRUE(ends_within(job, 5)) << "the job outlived its launcher";
}

// SIGTERM to the launcher reaches the job, which ends; the run says so.
TEST(JobProcess, ASignalToTheLauncherIsForwardedAndReported) {
    TempDir dir;
    const auto pid_file = dir.file("job.pid");
    const pid_t launcher = fork();
    if (launcher == 0) {
        InterruptGuard guard;
        const auto run = run_supervised(
            {"sh", "-c", "trap 'exit 7' TERM; echo $$ > " + pid_file + "; while :; do sleep 0.05; done"});
        // Exit code: the job's status, and which signal the launcher saw.
        _exit(run.status == 7 && run.interrupted_by == SIGTERM && InterruptGuard::received() == SIGTERM ? 0 : 1);
    }
    ASSERT_GT(pid_in(pid_file), 0);
    kill(launcher, SIGTERM);
    int status = 0;
    waitpid(launcher, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "the launcher was ended by the signal instead of catching it";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the job did not get SIGTERM, or the run did not report it";
}

// A job learns whether its launcher has ended from FFTUNE_LAUNCHER.
TEST(JobProcess, AJobTellsWhetherItsLauncherHasEnded) {
    TempDir dir;
    const auto seen = dir.file("seen");
    // The job as run_supervised starts it: its launcher (this process) lives.
    ASSERT_EQ(run_supervised({"sh", "-c", "echo \"$FFTUNE_LAUNCHER\" > " + seen}).status, 0);
    std::string launcher;
    std::getline(std::ifstream(seen), launcher);
    EXPECT_EQ(launcher.rfind(std::to_string(getpid()) + " ", 0), 0u) << launcher;
    setenv("FFTUNE_LAUNCHER", launcher.c_str(), 1);
    EXPECT_FALSE(launcher_ended());
    // A launcher that has ended (here: one that never ran with that PID and start).
    const pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    const std::string host = launcher.substr(launcher.rfind(' ') + 1);
    setenv("FFTUNE_LAUNCHER", (std::to_string(dead) + " 12345 " + host).c_str(), 1);
    EXPECT_TRUE(launcher_ended());
    // On another host it cannot be told: not ended.
    setenv("FFTUNE_LAUNCHER", (std::to_string(dead) + " 12345 another-host").c_str(), 1);
    EXPECT_FALSE(launcher_ended());
    unsetenv("FFTUNE_LAUNCHER");
    EXPECT_FALSE(launcher_ended());
}

TEST(JobProcess, ChildProcessesAreListed) {
    const pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    const auto kids = child_processes(getpid());
    EXPECT_NE(std::find(kids.begin(), kids.end(), child), kids.end());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace fftune
