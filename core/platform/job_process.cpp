#include "core/platform/job_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/platform/folder_lock.hpp"
#include "core/platform/log.hpp"

extern char** environ;

namespace fftune {
namespace {

volatile std::sig_atomic_t g_received = 0;  // the last signal received under an InterruptGuard
volatile std::sig_atomic_t g_forward = 0;   // a signal still to forward to the job
volatile std::sig_atomic_t g_forward_to_child = 0;  // its own process too (the terminal's reached it)
bool g_guarded = false;
struct sigaction g_previous[3];
constexpr int guarded_signals[3] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig, siginfo_t* info, void*) {
    g_received = sig;
    // The terminal sends to the whole foreground process group, the job's own
    // process included; mpirun's ranks are in process groups of their own.
    g_forward_to_child = info == nullptr || info->si_code != SI_KERNEL;
    g_forward = sig;
}

constexpr auto grace = std::chrono::seconds(10);        // after a forwarded signal, before SIGKILL
constexpr auto reap_limit = std::chrono::seconds(30);   // to end what the job left behind
constexpr std::size_t tail_bytes = 16 * 1024;
constexpr int tail_lines = 20;

void write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;  // our stderr is gone: the job's output goes with it
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

// Reads what is there; false at the end of the stream.
bool relay(int fd, std::string& tail) {
    char buf[8192];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            write_all(STDERR_FILENO, buf, static_cast<std::size_t>(n));
            tail.append(buf, static_cast<std::size_t>(n));
            if (tail.size() > 2 * tail_bytes) tail.erase(0, tail.size() - tail_bytes);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0;  // EAGAIN: open, nothing now; 0: closed
    }
}

std::string last_lines(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    std::size_t start = text.size();
    for (int n = 0; n < tail_lines && start > 0; ++n) {
        const auto nl = text.rfind('\n', start - 1);
        start = nl == std::string::npos ? 0 : nl;
    }
    return text.substr(start == 0 ? 0 : start + 1);
}

// Kills and reaps every child of this process not in `keep` (those the job
// left: reparented here, the subreaper), until there are none.
void end_left_behind(const std::vector<long>& keep) {
    const auto deadline = std::chrono::steady_clock::now() + reap_limit;
    for (;;) {
        std::vector<long> left;
        for (long pid : child_processes(getpid()))
            if (std::find(keep.begin(), keep.end(), pid) == keep.end()) left.push_back(pid);
        if (left.empty()) return;
        for (long pid : left) kill(static_cast<pid_t>(pid), SIGKILL);
        for (long pid : left) waitpid(static_cast<pid_t>(pid), nullptr, WNOHANG);
        if (std::chrono::steady_clock::now() > deadline) {
            logging::warn(fmt::format("processes the job left behind still run {} s after SIGKILL: {}",
                                      reap_limit.count(), fmt::join(left, ", ")));
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// The processes below `pid`, children first.
std::vector<long> descendants(long pid) {
    std::vector<long> all = child_processes(pid);
    for (std::size_t k = 0; k < all.size(); ++k)
        for (long c : child_processes(all[k])) all.push_back(c);
    return all;
}

}  // namespace

std::string signal_name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGKILL: return "SIGKILL";
        default: return fmt::format("signal {}", sig);
    }
}

std::vector<long> child_processes(long parent) {
    std::vector<long> out;
    DIR* proc = opendir("/proc");
    if (!proc) return out;
    while (const dirent* e = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        std::ifstream in(fmt::format("/proc/{}/stat", pid));
        std::string stat;
        if (!std::getline(in, stat)) continue;
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 4 >= stat.size()) continue;
        const long ppid = std::strtol(stat.c_str() + close + 4, nullptr, 10);
        if (ppid == parent) out.push_back(pid);
    }
    closedir(proc);
    return out;
}

namespace {

constexpr const char* launcher_variable = "FFTUNE_LAUNCHER";

std::string host_name() {
    char buf[256] = {};
    return gethostname(buf, sizeof buf - 1) == 0 ? buf : "?";
}

// "PID START_TICKS HOST" of this process, as launcher_ended() reads it.
std::string launcher_identity() {
    return fmt::format("{} {} {}", getpid(), process_start_ticks(getpid()), host_name());
}

}  // namespace

bool launcher_ended() {
    const char* value = std::getenv(launcher_variable);
    if (!value) return false;
    long pid = 0;
    unsigned long long ticks = 0;
    char host[256] = {};
    if (std::sscanf(value, "%ld %llu %255s", &pid, &ticks, host) != 3 || pid <= 0) return false;
    if (host_name() != host) return false;
    return process_start_ticks(pid) != ticks;  // gone, or its PID taken by another process
}

void end_with_parent() {
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (parent == 1 || getppid() != parent) raise(SIGKILL);  // it ended before the line above
}

InterruptGuard::InterruptGuard() {
    if (g_guarded) throw std::logic_error("InterruptGuard: one at a time");
    g_received = 0;
    g_forward = 0;
    g_forward_to_child = 0;
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: a wait is interrupted and looks at once
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; ++k) {
        sigaction(guarded_signals[k], nullptr, &g_previous[k]);
        // One ignored already stays so (nohup: SIGHUP; a shell's background job: SIGINT).
        if (g_previous[k].sa_handler != SIG_IGN) sigaction(guarded_signals[k], &sa, nullptr);
    }
    g_guarded = true;
}

InterruptGuard::~InterruptGuard() {
    for (int k = 0; k < 3; ++k) sigaction(guarded_signals[k], &g_previous[k], nullptr);
    g_guarded = false;
}

int InterruptGuard::received() { return g_received; }

JobRun run_supervised(const std::vector<std::string>& cmd) {
    if (cmd.empty()) throw std::invalid_argument("empty command");
    std::string line;
    for (const auto& a : cmd) line += (line.empty() ? "" : " ") + a;
    logging::debug("running: " + line);
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    setenv(launcher_variable, launcher_identity().c_str(), 1);  // inherited by the job
    if (!subreaper) logging::debug("cannot become the subreaper of the jobs: a rank that outlives mpirun is not ended");
    const std::vector<long> earlier = child_processes(getpid());

    std::vector<char*> args;
    for (const auto& a : cmd) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int err[2], exec_status[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    if (pipe2(exec_status, O_CLOEXEC) != 0) {
        close(err[0]);
        close(err[1]);
        throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    }
    const pid_t launcher = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {err[0], err[1], exec_status[0], exec_status[1]}) close(fd);
        throw std::runtime_error("cannot start '" + cmd[0] + "': fork failed: " + std::strerror(e));
    }
    if (pid == 0) {
        // The child: async-signal-safe calls only until exec.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != launcher) _exit(128 + SIGTERM);  // the launcher died before the line above
        dup2(err[1], STDERR_FILENO);
        // What the guard catches, the job takes as it would (exec resets handlers, not ignores).
        execvp(args[0], args.data());
        const int e = errno;
        (void)!::write(exec_status[1], &e, sizeof e);
        _exit(127);
    }
    close(err[1]);
    close(exec_status[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(exec_status[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(exec_status[0]);
    if (got == static_cast<ssize_t>(sizeof exec_errno)) {
        close(err[0]);
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        throw std::runtime_error("cannot start '" + cmd[0] + "': " + std::strerror(exec_errno));
    }

    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    int out = err[0];
    std::string tail;
    JobRun run;
    int status = 0;
    bool killed = false;
    std::chrono::steady_clock::time_point forwarded{};
    for (;;) {
        pollfd p{out, POLLIN, 0};
        if (poll(&p, out >= 0 ? 1 : 0, 100) > 0 && !relay(out, tail)) {
            close(out);
            out = -1;
        }
        if (const int sig = g_forward) {
            // To every process of the job on this node, as a terminal sends to its
            // process group: mpirun alone would let its ranks run on for a second.
            g_forward = 0;
            for (long p : descendants(pid)) kill(static_cast<pid_t>(p), sig);
            if (g_forward_to_child) kill(pid, sig);
            forwarded = std::chrono::steady_clock::now();
        }
        if (g_guarded && g_received && !run.interrupted_by) {
            run.interrupted_by = g_received;
            if (forwarded == std::chrono::steady_clock::time_point{}) forwarded = std::chrono::steady_clock::now();
        }
        if (run.interrupted_by && !killed && std::chrono::steady_clock::now() - forwarded > grace) {
            logging::warn(fmt::format("the job has not ended {} s after {}: killing it", grace.count(),
                                      signal_name(run.interrupted_by)));
            kill(pid, SIGKILL);
            killed = true;
        }
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    end_left_behind(earlier);
    if (out >= 0) {
        relay(out, tail);  // what is left; every writer has ended
        close(out);
    }
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    run.output_tail = last_lines(tail);
    return run;
}

}  // namespace fftune
