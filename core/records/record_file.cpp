#include "core/records/record_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/platform/log.hpp"

namespace fftune {
namespace {

std::string kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

// What to do after a failed write, for every message that reports one.
constexpr const char* write_advice =
    "free space on its file system (or raise the quota or file-size limit) and run the same command again: "
    "it continues after the last stored record";

bool lock_unsupported(int err) { return err == ENOLCK || err == ENOSYS || err == EOPNOTSUPP || err == EINVAL; }

// The bytes from `from` to the end of the file.
std::string read_tail(int fd, off_t from, off_t size) {
    std::string s(static_cast<std::size_t>(size - from), '\0');
    std::size_t got = 0;
    while (got < s.size()) {
        const ssize_t n = pread(fd, s.data() + got, s.size() - got, from + static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    s.resize(got);
    return s;
}

// Offset just after the last '\n' of the file's first `size` bytes (0: none);
// -1 when it cannot be read (errno says why).
off_t after_last_newline(int fd, off_t size) {
    char buf[1 << 16];
    for (off_t end = size; end > 0;) {
        const off_t start = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
        const ssize_t n = pread(fd, buf, static_cast<std::size_t>(end - start), start);
        if (n < 0 && errno == EINTR) continue;
        if (n != end - start) {
            if (n >= 0) errno = EIO;  // shorter than it was a moment ago
            return -1;
        }
        for (ssize_t i = n - 1; i >= 0; --i)
            if (buf[i] == '\n') return start + i + 1;
        end = start;
    }
    return 0;
}

}  // namespace

long lock_holder(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return 0;
    std::ifstream locks("/proc/locks");
    std::string inode = ":";
    inode += std::to_string(st.st_ino);
    for (std::string line; std::getline(locks, line);) {
        // "1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"; waiters have "->" after the number.
        std::istringstream in(line);
        std::string id, type, advisory, access, pid, where;
        in >> id >> type;
        if (type == "->") continue;
        in >> advisory >> access >> pid >> where;
        if (where.size() > inode.size() && where.compare(where.size() - inode.size(), inode.size(), inode) == 0)
            return std::strtol(pid.c_str(), nullptr, 10);
    }
    return 0;
}

RecordFile::RecordFile(const std::string& path, Mode mode, std::chrono::milliseconds wait) : path_(path) {
    // A write past RLIMIT_FSIZE is then an error (EFBIG) that names the file, not a signal that kills.
    static const bool xfsz_ignored = [] { return std::signal(SIGXFSZ, SIG_IGN) != SIG_ERR; }();
    (void)xfsz_ignored;
    // Opening a FIFO for writing would wait for a reader: look first.
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw RecordWriteError(fmt::format("{}: {}, not a result file; give --out a folder where this name is free", path,
                                           kind_of(st.st_mode)));
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd_ < 0)
        throw RecordWriteError(fmt::format("{}: cannot open it for writing: {}", path, std::strerror(errno)));
    auto fail = [&](auto&& error) {
        close(fd_);
        fd_ = -1;
        throw error;
    };
    if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))
        fail(RecordWriteError(fmt::format("{}: {}, not a result file", path, kind_of(st.st_mode))));
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (flock(fd_, LOCK_EX | LOCK_NB) == 0) break;
        const int err = errno;
        if (err == EINTR) continue;
        if (lock_unsupported(err)) {
            logging::debug(fmt::format("{}: its file system takes no locks ({}); writing without", path, std::strerror(err)));
            break;
        }
        if (err != EWOULDBLOCK)
            fail(RecordWriteError(fmt::format("{}: cannot lock it: {}", path, std::strerror(err))));
        if (std::chrono::steady_clock::now() >= deadline) {
            const long pid = lock_holder(fd_);
            fail(RecordFileBusy(fmt::format(
                "{}: another process{} is still writing it after {} s (another fftune run on the same folder, or a rank "
                "of an earlier job that has not ended); wait for it to end{}, or use another --out",
                path, pid > 0 ? fmt::format(" (PID {})", pid) : "",
                std::chrono::duration_cast<std::chrono::seconds>(wait).count(),
                pid > 0 ? fmt::format(" or end it (kill {})", pid) : "")));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (mode == Mode::truncate) {
        if (ftruncate(fd_, 0) != 0)
            fail(RecordWriteError(fmt::format("{}: cannot empty it: {}", path, std::strerror(errno))));
        return;
    }
    // A writer killed mid-line left a torn last line: cut it off, so that the
    // file holds whole records only and the next record starts a line. A last
    // line that is a whole record without its '\n' is kept, and ended.
    if (fstat(fd_, &st) != 0 || st.st_size == 0) return;
    const off_t keep = after_last_newline(fd_, st.st_size);
    if (keep < 0) fail(RecordWriteError(fmt::format("{}: cannot read it: {}", path, std::strerror(errno))));
    if (keep == st.st_size) return;
    const std::string tail = read_tail(fd_, keep, st.st_size);
    if (nlohmann::json::accept(tail)) {
        if (::write(fd_, "\n", 1) != 1)
            fail(RecordWriteError(fmt::format("{}: cannot end its last line: {}; {}", path, std::strerror(errno), write_advice)));
        return;
    }
    if (ftruncate(fd_, keep) != 0)
        fail(RecordWriteError(fmt::format("{}: cannot cut off its torn last line: {}", path, std::strerror(errno))));
    cut_off_ = static_cast<std::size_t>(st.st_size - keep);
    logging::info(fmt::format("{}: cut off a torn last line ({} bytes) that a writer killed mid-write left", path, cut_off_));
}

RecordFile::~RecordFile() {
    if (fd_ >= 0) close(fd_);
}

void RecordFile::append(const nlohmann::json& record) { append_line(record.dump()); }

void RecordFile::append_line(std::string_view line) {
    std::string buf;
    buf.reserve(line.size() + 1);
    buf.append(line);
    buf += '\n';
    struct stat st {};
    if (fstat(fd_, &st) != 0)
        throw RecordWriteError(fmt::format("{}: cannot store a record: {}; {}", path_, std::strerror(errno), write_advice),
                               std::strerror(errno));
    const off_t before = st.st_size;
    std::size_t done = 0;
    while (done < buf.size()) {
        const ssize_t n = ::write(fd_, buf.data() + done, buf.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);  // short only when the file system is full: the next says why
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        const int err = n < 0 ? errno : ENOSPC;
        std::string state = "the file ends after its last whole record";
        if (done > 0 && ftruncate(fd_, before) != 0)
            state = fmt::format("cutting off the part written failed too ({}): the next run cuts it off", std::strerror(errno));
        throw RecordWriteError(fmt::format("{}: cannot store a record: {}; {}; {}", path_, std::strerror(err), state,
                                           write_advice),
                               std::strerror(err));
    }
}

}  // namespace fftune
