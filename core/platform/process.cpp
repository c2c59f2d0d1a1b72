#include "core/platform/process.hpp"

#include "core/platform/log.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace fftune {

namespace {

std::vector<char*> c_args(const std::vector<std::string>& cmd) {
    if (cmd.empty()) throw std::invalid_argument("empty command");
    std::vector<char*> args;
    for (const auto& a : cmd) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    return args;
}

int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

}  // namespace

std::string self_executable() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the fftune executable: " + ec.message());
    return p.string();
}

int spawn_and_wait(const std::vector<std::string>& cmd) {
    std::string line;
    for (const auto& a : cmd) {
        if (!line.empty()) line += ' ';
        line += a;
    }
    logging::debug("running: " + line);
    auto args = c_args(cmd);
    pid_t pid = 0;
    if (int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ); rc != 0)
        throw std::runtime_error("cannot start '" + cmd[0] + "': " + std::strerror(rc));
    return wait_for(pid);
}

CommandOutput run_capture(const std::vector<std::string>& cmd) {
    auto args = c_args(cmd);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    CommandOutput out;
    if (rc != 0) {
        close(fds[0]);
        return {127, "cannot start '" + cmd[0] + "': " + std::strerror(rc)};
    }
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0) out.output.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    close(fds[0]);
    out.status = wait_for(pid);
    return out;
}

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

}  // namespace fftune
