#include "core/platform/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/platform/log.hpp"

namespace fftune {
namespace {

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "?";
    return buf;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string read_all(int fd) {
    std::string s;
    char buf[4096];
    for (off_t at = 0;;) {
        const ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        s.append(buf, static_cast<std::size_t>(n));
        at += n;
    }
    return s;
}

// The owner a lock file names, as "PID N on host H since T (COMMAND)"; "" when it names none.
std::string describe(const nlohmann::json& owner) {
    if (!owner.is_object() || !owner.contains("pid")) return "";
    return fmt::format("PID {} on host {} since {} ({})", owner.value("pid", 0L), owner.value("host", "?"),
                       owner.value("started", "?"), owner.value("command", "?"));
}

nlohmann::json parse_owner(const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::json() : j;
}

// Without locks: does the named owner still run (on this host, same PID and start time)?
bool owner_alive(const nlohmann::json& owner) {
    if (!owner.is_object() || !owner.contains("pid")) return false;
    if (owner.value("host", "") != host_name()) return true;  // cannot tell: assume it does
    const long pid = owner.value("pid", 0L);
    return pid > 0 && process_start_ticks(pid) == owner.value("start_ticks", 0ULL);
}

}  // namespace

unsigned long long process_start_ticks(long pid) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat;
    if (!std::getline(in, stat)) return 0;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; field 22 is starttime.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int k = 3; k <= 22 && fields >> field; ++k) {
        if (k == 3 && (field == "Z" || field == "X")) return 0;  // ended, not yet reaped
        if (k == 22) return std::strtoull(field.c_str(), nullptr, 10);
    }
    return 0;
}

std::string FolderLock::file_in(const std::string& folder) {
    return (std::filesystem::path(folder) / ".fftune.lock").string();
}

FolderLock::FolderLock(const std::string& folder, const std::string& command) : path_(file_in(folder)) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(fmt::format("{}: cannot open the folder's lock file: {}", path_, std::strerror(errno)));
    const std::string before = read_all(fd_);
    const auto owner = parse_owner(before);
    auto refuse = [&](const std::string& who) {
        close(fd_);
        fd_ = -1;
        const long pid = owner.is_object() ? owner.value("pid", 0L) : 0L;
        throw FolderInUse(fmt::format("{} is in use by {} (its lock: {}); wait for that run to end{}, or give another --out",
                                      folder, who.empty() ? "another process" : who, path_,
                                      pid > 0 ? fmt::format(", end it (kill {})", pid) : ""));
    };
    int err = 0;
    while (flock(fd_, LOCK_EX | LOCK_NB) != 0 && (err = errno) == EINTR) {
    }
    if (err == EWOULDBLOCK) refuse(describe(owner));
    if (err != 0) {
        if (err != ENOLCK && err != ENOSYS && err != EOPNOTSUPP && err != EINVAL) {
            close(fd_);
            fd_ = -1;
            throw std::runtime_error(fmt::format("{}: cannot lock it: {}", path_, std::strerror(err)));
        }
        logging::debug(fmt::format("{}: its file system takes no locks ({}); checking the owner it names", path_,
                                   std::strerror(err)));
        if (owner_alive(owner)) refuse(describe(owner));
    }
    if (!describe(owner).empty()) taken_over_ = describe(owner);
    const long pid = getpid();
    const nlohmann::json me{{"pid", pid}, {"host", host_name()}, {"start_ticks", process_start_ticks(pid)},
                            {"started", utc_now()}, {"command", command}};
    const std::string text = me.dump() + "\n";
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
        const int e = errno;
        close(fd_);
        fd_ = -1;
        throw std::runtime_error(fmt::format("{}: cannot write the folder's lock file: {}", path_, std::strerror(e)));
    }
}

FolderLock::~FolderLock() {
    if (fd_ < 0) return;
    if (ftruncate(fd_, 0) != 0) {
        // A lock file left naming this process is taken over as stale.
    }
    close(fd_);
}

}  // namespace fftune
