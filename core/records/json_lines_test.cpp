// JSON-lines reading: plain and gzip-compressed files give the same lines,
// lines cross read chunks, and a cut-off or (without zlib) any compressed file
// fails with its path instead of reading as empty.
#include "core/records/json_lines.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef FFTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace fftune {
namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("fftune_json_lines_test_" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> out;
    EXPECT_TRUE(for_each_line(path, [&](std::string_view l) { out.emplace_back(l); })) << path;
    return out;
}

// Lines longer than a read chunk (64 KiB), an empty line and a last line without '\n'.
const std::vector<std::string> expected{"{\"a\": 1}", std::string(200000, 'x'), "", "{\"b\": 2}",
                                        std::string(65535, 'y'), "last"};

std::string content() {
    std::string s;
    for (std::size_t i = 0; i < expected.size(); ++i) s += expected[i] + (i + 1 < expected.size() ? "\n" : "");
    return s;
}

// gzip's magic bytes, then a deflate stream cut short.
const std::string gzip_header("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);

TEST(JsonLines, PlainFileLinesAreReadWhole) {
    TempDir dir;
    std::ofstream(dir.file("a.jsonl"), std::ios::binary) << content();
    EXPECT_EQ(lines_of(dir.file("a.jsonl")), expected);
}

// Writes `bytes` into a new FIFO at `path` from a thread; join it after reading.
std::thread fifo_writer(const std::string& path, std::string bytes) {
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    return std::thread([path, bytes = std::move(bytes)] { std::ofstream(path, std::ios::binary) << bytes; });
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(JsonLines, APipeIsReadOnceFrontToBack) {
    TempDir dir;
    auto writer = fifo_writer(dir.file("plain.fifo"), content());
    EXPECT_EQ(lines_of(dir.file("plain.fifo")), expected);
    writer.join();
}

TEST(JsonLines, AMissingFileIsNotOpenedAndCallsNothing) {
    int calls = 0;
    EXPECT_FALSE(for_each_line("/nonexistent/fftune/a.jsonl", [&](std::string_view) { ++calls; }));
    EXPECT_EQ(calls, 0);
}

#ifdef FFTUNE_HAVE_ZLIB
void write_gzip(const std::string& path, const std::string& data) {
    gzFile gz = gzopen(path.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
    ASSERT_EQ(gzclose(gz), Z_OK);
}

TEST(JsonLines, GzipFileGivesTheSameLinesWhateverItsName) {
    ASSERT_TRUE(gzip_supported());
    TempDir dir;
    write_gzip(dir.file("a.jsonl.gz"), content());
    EXPECT_EQ(lines_of(dir.file("a.jsonl.gz")), expected);
    fs::copy_file(dir.file("a.jsonl.gz"), dir.file("renamed.jsonl"));  // the magic bytes decide, not the name
    EXPECT_EQ(lines_of(dir.file("renamed.jsonl")), expected);
}

TEST(JsonLines, GzipThroughAPipeGivesTheSameLines) {
    TempDir dir;
    write_gzip(dir.file("a.gz"), content());
    auto writer = fifo_writer(dir.file("gz.fifo"), file_bytes(dir.file("a.gz")));
    EXPECT_EQ(lines_of(dir.file("gz.fifo")), expected);
    writer.join();
}

TEST(JsonLines, ACutOffGzipFileFailsWithItsPath) {
    TempDir dir;
    write_gzip(dir.file("whole.gz"), content());
    const auto size = fs::file_size(dir.file("whole.gz"));
    fs::copy_file(dir.file("whole.gz"), dir.file("cut.gz"));
    fs::resize_file(dir.file("cut.gz"), size / 2);
    try {
        for_each_line(dir.file("cut.gz"), [](std::string_view) {});
        FAIL() << "a cut-off gzip file read without an error";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.find(dir.file("cut.gz") + ": corrupt or cut-off gzip data ("), 0u) << what;
        EXPECT_EQ(what.find(dir.file("cut.gz"), 1), std::string::npos) << "the path twice: " << what;
    }
}
#else
TEST(JsonLines, WithoutZlibAGzipFileFailsAndSaysWhy) {
    ASSERT_FALSE(gzip_supported());
    TempDir dir;
    std::ofstream(dir.file("a.jsonl.gz"), std::ios::binary) << gzip_header;
    auto writer = fifo_writer(dir.file("gz.fifo"), gzip_header);
    for (const char* name : {"a.jsonl.gz", "gz.fifo"}) try {
            for_each_line(dir.file(name), [](std::string_view) {});
            ADD_FAILURE() << name << ": a gzip file read as if it were text";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("built without zlib"), std::string::npos) << e.what();
        }
    writer.join();
}
#endif

}  // namespace
}  // namespace fftune
