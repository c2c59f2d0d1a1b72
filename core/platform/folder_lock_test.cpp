// One owner per folder: a second is refused naming the first's PID; a lock
// left by a process that has ended is taken over, and says whose it was.
#include "core/platform/folder_lock.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fftune {
namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("fftune_folder_lock_test_" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(FolderLock, ASecondOwnerIsRefusedNamingTheFirst) {
    TempDir dir;
    FolderLock first(dir.path.string(), "fftune run first.json");
    const auto owner = nlohmann::json::parse(read(FolderLock::file_in(dir.path.string())));
    EXPECT_EQ(owner.at("pid").get<long>(), getpid());
    try {
        FolderLock second(dir.path.string(), "fftune run second.json");
        ADD_FAILURE() << "two owners of one folder";
    } catch (const FolderInUse& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(dir.path.string() + " is in use by PID " + std::to_string(getpid())), std::string::npos)
            << what;
        EXPECT_NE(what.find("(fftune run first.json)"), std::string::npos) << what;
        EXPECT_NE(what.find("give another --out"), std::string::npos) << what;
    }
}

TEST(FolderLock, ReleasedWhenItsOwnerEnds) {
    TempDir dir;
    { FolderLock first(dir.path.string(), "first"); }
    EXPECT_EQ(read(FolderLock::file_in(dir.path.string())), "");  // emptied, not removed
    FolderLock second(dir.path.string(), "second");
    EXPECT_EQ(second.taken_over(), "");
}

TEST(FolderLock, AStaleLockOfADeadProcessIsTakenOver) {
    TempDir dir;
    // A process that has ended, and the lock file it would have left (kill -9).
    const pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    std::ofstream(FolderLock::file_in(dir.path.string()))
        << nlohmann::json{{"pid", dead}, {"host", "h"}, {"start_ticks", 1}, {"started", "then"}, {"command", "old run"}}
               .dump();
    FolderLock lock(dir.path.string(), "new run");
    EXPECT_EQ(lock.taken_over(), "PID " + std::to_string(dead) + " on host h since then (old run)");
    EXPECT_EQ(nlohmann::json::parse(read(FolderLock::file_in(dir.path.string()))).at("pid").get<long>(), getpid());
}

TEST(FolderLock, StartTicksTellAProcessFromOneThatReusedItsPid) {
    EXPECT_GT(process_start_ticks(getpid()), 0u);
    EXPECT_EQ(process_start_ticks(999999999), 0u);
    const pid_t zombie = fork();  // ended, not reaped yet: no longer running
    if (zombie == 0) _exit(0);
    for (int k = 0; k < 500 && process_start_ticks(zombie) != 0; ++k) usleep(10000);
    EXPECT_EQ(process_start_ticks(zombie), 0u);
    waitpid(zombie, nullptr, 0);
}

}  // namespace
}  // namespace fftune
