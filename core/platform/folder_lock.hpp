// One process owns a folder at a time: FOLDER/.fftune.lock, held with an
// exclusive flock for the owner's life (the kernel releases it when the owner
// ends, however it ends, so a dead owner's lock is simply taken over) and
// naming the owner (PID, host, start, command) for the message that refuses a
// second one. Where the file system takes no locks, the named owner is
// checked instead: on this host, a process with that PID and start time.
#pragma once

#include <stdexcept>
#include <string>

namespace fftune {

// A second owner, refused: what() names the owner and what to do.
struct FolderInUse : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class FolderLock {
public:
    // Takes `folder` (which must exist) for this process, or throws FolderInUse.
    // `command` is what the owner runs, for the refusal's message.
    FolderLock(const std::string& folder, const std::string& command);
    ~FolderLock();  // empties the lock file (never removes it: another may have opened it) and releases it
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

    static std::string file_in(const std::string& folder);  // FOLDER/.fftune.lock
    // The owner the lock file names before this one took it over (a stale lock
    // of a process that ended without releasing it), or "" if none.
    const std::string& taken_over() const { return taken_over_; }

private:
    std::string path_, taken_over_;
    int fd_ = -1;
};

// The start time of process `pid` (clock ticks since boot, /proc/PID/stat);
// 0 if there is none, or it has ended and is not yet reaped (a zombie).
unsigned long long process_start_ticks(long pid);

}  // namespace fftune
