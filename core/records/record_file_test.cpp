// Result files hold whole records only: a write that fails (here: past
// RLIMIT_FSIZE, as a full disk fails) leaves the file as it was and names it;
// a torn last line is cut off on opening; one writer at a time.
#include "core/records/record_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fftune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("fftune_record_file_test_" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

json record(int i) { return json{{"point_index", i}, {"status", "ok"}, {"pad", std::string(200, 'x')}}; }

// A file-size limit: writes past it fail (EFBIG; SIGXFSZ is ignored by RecordFile).
struct FileSizeLimit {
    rlimit old{};
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &old);
        rlimit lim{bytes, old.rlim_max};
        EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    }
    ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &old); }
};

TEST(RecordFile, AFailedWriteLeavesTheLastWholeRecordAndNamesTheFile) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    RecordFile out(path, RecordFile::Mode::truncate);
    out.append(record(0));
    const std::string before = read(path);
    const std::size_t line = before.size();
    {
        // Room for half a record more: the write is cut short, then fails.
        FileSizeLimit limit(line + line / 2);
        try {
            out.append(record(1));
            ADD_FAILURE() << "a record past the file-size limit was reported stored";
        } catch (const RecordWriteError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(path + ": cannot store a record: File too large"), std::string::npos) << what;
            EXPECT_NE(what.find("the file ends after its last whole record"), std::string::npos) << what;
        }
    }
    EXPECT_EQ(read(path), before);  // no torn line left behind
    out.append(record(2));          // space again: the next record starts a line
    EXPECT_EQ(read(path), before + record(2).dump() + "\n");
}

TEST(RecordFile, ATornLastLineIsCutOffOnOpening) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    const std::string whole = record(0).dump() + "\n";
    std::ofstream(path) << whole << R"({"point_index": 1, "sta)";
    RecordFile out(path, RecordFile::Mode::append);
    EXPECT_EQ(out.cut_off_bytes(), 23u);
    out.append(record(1));
    EXPECT_EQ(read(path), whole + record(1).dump() + "\n");
}

TEST(RecordFile, AWholeLastRecordWithoutItsNewlineIsKept) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    std::ofstream(path) << record(0).dump();
    RecordFile out(path, RecordFile::Mode::append);
    EXPECT_EQ(out.cut_off_bytes(), 0u);
    out.append(record(1));
    EXPECT_EQ(read(path), record(0).dump() + "\n" + record(1).dump() + "\n");
}

TEST(RecordFile, TruncateEmptiesTheFile) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    std::ofstream(path) << record(0).dump() << "\n";
    RecordFile out(path, RecordFile::Mode::truncate);
    EXPECT_EQ(read(path), "");
}

TEST(RecordFile, ASecondWriterWaitsThenIsRefusedNamingTheFirst) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    RecordFile first(path, RecordFile::Mode::append);
    try {
        RecordFile second(path, RecordFile::Mode::append, std::chrono::milliseconds(100));
        ADD_FAILURE() << "two writers held the file at once";
    } catch (const RecordFileBusy& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path + ": another process (PID " + std::to_string(getpid()) + ")"), std::string::npos)
            << what;
    }
}

TEST(RecordFile, TheLockIsFreeOnceTheWriterIsGone) {
    TempDir dir;
    const auto path = dir.file("r.jsonl");
    { RecordFile first(path, RecordFile::Mode::append); }
    RecordFile second(path, RecordFile::Mode::append, std::chrono::milliseconds(100));
    second.append(record(0));
    EXPECT_EQ(read(path), record(0).dump() + "\n");
}

TEST(RecordFile, AFifoOrDirectoryIsRefusedWithoutWaiting) {
    TempDir dir;
    const auto fifo = dir.file("fifo.jsonl");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
    try {
        RecordFile out(fifo, RecordFile::Mode::append);
        ADD_FAILURE() << "a FIFO was taken as a result file";
    } catch (const RecordWriteError& e) {
        EXPECT_NE(std::string(e.what()).find(fifo + ": a FIFO, not a result file"), std::string::npos) << e.what();
    }
    EXPECT_THROW(RecordFile(dir.path.string(), RecordFile::Mode::append), RecordWriteError);
}

}  // namespace
}  // namespace fftune
