// A JSON-lines result file that holds whole records only. One writer at a
// time owns it (an exclusive flock, released when its process ends, however it
// ends); a record is one write(2) of one line, checked: when the write fails
// (a full disk, a quota, a file-size limit) the part written is cut off again,
// so the file ends after its last whole record, and the error names the file.
// A last line left torn by a writer that was killed mid-write is cut off when
// the file is opened. Readers (read_records, for_each_line) need no lock.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace fftune {

// A record that could not be stored: what() names the file, the reason and what to do.
struct RecordWriteError : std::runtime_error {
    explicit RecordWriteError(const std::string& message, std::string reason = {})
        : std::runtime_error(message), reason_(std::move(reason)) {}
    // The system's reason alone ("No space left on device"), where a write failed.
    const std::string& reason() const { return reason_; }

private:
    std::string reason_;
};
// Another process still owns the file after the wait: what() names it.
struct RecordFileBusy : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class RecordFile {
public:
    enum class Mode { append, truncate };
    static constexpr std::chrono::seconds default_wait{30};

    // Opens (creating) `path` and takes its lock, waiting up to `wait` for
    // another writer to end (RecordFileBusy names the holder's PID when
    // /proc/locks shows it). Refuses a path that is not a regular file.
    // `truncate` empties it; `append` cuts off a torn last line.
    RecordFile(const std::string& path, Mode mode, std::chrono::milliseconds wait = default_wait);
    ~RecordFile();
    RecordFile(const RecordFile&) = delete;
    RecordFile& operator=(const RecordFile&) = delete;

    // Appends `record` as one line, whole or not at all (RecordWriteError).
    void append(const nlohmann::json& record);
    void append_line(std::string_view line);  // without its '\n'

    const std::string& path() const { return path_; }
    // Bytes of a torn last line cut off on opening (0: none).
    std::size_t cut_off_bytes() const { return cut_off_; }

private:
    std::string path_;
    int fd_ = -1;
    std::size_t cut_off_ = 0;
};

// The PID holding a lock on the file open as `fd`, from /proc/locks (0: unknown).
long lock_holder(int fd);

}  // namespace fftune
