// Child processes without a shell in between (arguments are never re-parsed,
// so names from testcases or profiles cannot inject commands).
#pragma once

#include <string>
#include <vector>

namespace fftune {

// Absolute path of the running executable (/proc/self/exe).
std::string self_executable();

// Runs `cmd` (cmd[0] looked up in PATH) and waits. Exit status, or 128 + signal
// when killed by a signal. Throws when the program cannot be started.
int spawn_and_wait(const std::vector<std::string>& cmd);

struct CommandOutput {
    int status = 0;       // as spawn_and_wait
    std::string output;   // stdout and stderr together
};
// Like spawn_and_wait, capturing stdout and stderr. A program that cannot be
// started gives status 127 and says why in `output` (like a shell would).
CommandOutput run_capture(const std::vector<std::string>& cmd);

// POSIX shell single quoting: 'it'\''s' -- safe for any byte string.
std::string shell_quote(const std::string& s);

}  // namespace fftune
