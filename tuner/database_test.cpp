// Tuning database: idempotent ingest, concurrent writers and ingesters, winners
// and verdicts, and clear errors for missing, corrupt and foreign files.
#include "tuner/database.hpp"
#include "tuner/record_check.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <thread>

#ifdef FFTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fftune {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / fmt::format("fftune_db_test_{}_{}", getpid(), counter++);
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
    static inline int counter = 0;
};

// A record as the runner writes it (results/README.md), with chosen timing.
json record(const std::string& method, int nx, double median, double lo, double hi, const std::string& machine = "m1",
            int ranks = 2, bool passed = true) {
    const Config c{"fftw", "slab_2d1d", LayoutVariant::default_, {ranks, 1}, {method}, false};
    return json{{"schema", "fftune.result/1"},
                {"status", "ok"},
                {"problem", Problem{"fft3d", {nx, 8, 8}, Precision::double_, Direction::forward, ranks}},
                {"config", c},
                {"key", c.key()},
                {"validation", {{"method", "spectral_laplacian"}, {"max_rel_error", 1e-15}, {"passed", passed}}},
                {"timing", {{"total", {{"median", median}, {"ci99", {lo, hi}}}}}},
                {"machine", {{"fingerprint", machine}}},
                {"provenance", {{"fftune_version", "0.1.0"}, {"timestamp", "2026-11-23T00:00:00Z"}}}};
}

void write(const std::string& path, const std::vector<json>& records, const std::string& tail = "") {
    std::ofstream out(path);
    for (const auto& r : records) out << r.dump() << "\n";
    out << tail;
}

const Problem problem2{"fft3d", {16, 8, 8}, Precision::double_, Direction::forward, 2};

TEST(Database, IngestIsIdempotentAndSkipsTornLines) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1), record("a2a_sync", 16, 2.0, 1.9, 2.1)},
          "{\"status\": \"ok\", \"probl");  // torn last line of a job that died
    Database db(dir.file("db.sqlite"), false);
    auto st = db.ingest({dir.file("a.jsonl")});
    EXPECT_EQ(st.added, 2);
    EXPECT_EQ(st.refused, (std::map<std::string, int>{{"unreadable", 1}}));
    ASSERT_EQ(st.refusals.size(), 1u);
    EXPECT_EQ(st.refusals[0].line, 3);
    EXPECT_NE(st.refusals[0].reason.find("not JSON"), std::string::npos) << st.refusals[0].reason;
    st = db.ingest({dir.file("a.jsonl"), dir.file("a.jsonl")});
    EXPECT_EQ(st.added, 0);
    EXPECT_EQ(st.duplicates, 4);
    EXPECT_EQ(db.record_count(), 2);
}

#ifdef FFTUNE_HAVE_ZLIB
void gzip_file(const std::string& from, const std::string& to) {
    std::ifstream in(from, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    gzFile gz = gzopen(to.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
    ASSERT_EQ(gzclose(gz), Z_OK);
}

// Committed results are .jsonl.gz: they ingest as their plain text does, and a
// cut-off one fails the whole ingest, which adds nothing.
TEST(Database, GzipCompressedResultsIngestLikeTheirText) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1), record("a2a_sync", 16, 2.0, 1.9, 2.1)});
    gzip_file(dir.file("a.jsonl"), dir.file("a.jsonl.gz"));
    Database db(dir.file("db.sqlite"), false);
    auto st = db.ingest({dir.file("a.jsonl.gz")});
    EXPECT_EQ(st.added, 2);
    EXPECT_EQ(st.refused_lines(), 0);
    EXPECT_EQ(db.ingest({dir.file("a.jsonl")}).duplicates, 2);

    write(dir.file("b.jsonl"), {record("p2p_sync", 32, 1.0, 0.9, 1.1)});
    std::vector<json> many;
    for (int i = 0; i < 200; ++i) many.push_back(record("a2a_sync", 64 + i, 1.0 + i, 0.9 + i, 1.1 + i));
    write(dir.file("many.jsonl"), many);
    gzip_file(dir.file("many.jsonl"), dir.file("cut.jsonl.gz"));
    fs::resize_file(dir.file("cut.jsonl.gz"), fs::file_size(dir.file("cut.jsonl.gz")) / 2);
    EXPECT_THROW(db.ingest({dir.file("b.jsonl"), dir.file("cut.jsonl.gz")}), std::runtime_error);
    EXPECT_EQ(db.record_count(), 2);
}
#else
TEST(Database, GzipCompressedResultsFailToIngestWithoutZlib) {
    TempDir dir;
    std::ofstream(dir.file("a.jsonl.gz"), std::ios::binary) << std::string("\x1f\x8b\x08\x00", 4);
    Database db(dir.file("db.sqlite"), false);
    EXPECT_THROW(db.ingest({dir.file("a.jsonl.gz")}), std::runtime_error);
    EXPECT_EQ(db.record_count(), 0);
}
#endif

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files this process writes cannot grow past `bytes` while it lives (a full
// disk, as root in a container: RLIMIT_FSIZE). A write past it fails with
// EFBIG instead of raising SIGXFSZ, as ENOSPC would on a full disk.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &old_);
        old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
        rlimit lower = old_;
        lower.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &lower);
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &old_);
        std::signal(SIGXFSZ, old_handler_);
    }

private:
    rlimit old_{};
    void (*old_handler_)(int) = nullptr;
};

// A write that fails half-way (the disk fills) leaves the database exactly as
// it was: the error says what failed, no journal is left behind, and readers
// (which cannot play a journal back) read it as before.
TEST(Database, DiskFullDuringIngestLeavesTheDatabaseAsItWas) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1), record("a2a_sync", 16, 2.0, 1.9, 2.1)});
    std::vector<json> many;
    for (int i = 0; i < 3000; ++i) many.push_back(record("a2a_sync", 64 + i, 1.0 + i, 0.9 + i, 1.1 + i));
    write(dir.file("many.jsonl"), many);
    const std::string path = dir.file("db.sqlite");
    Database(path, false).ingest({dir.file("a.jsonl")});
    const std::string before = file_bytes(path);
    {
        Database db(path, false);
        std::string error;
        {
            FileSizeLimit full(before.size() + 64 * 1024);
            try {
                db.ingest({dir.file("many.jsonl")});
            } catch (const DatabaseError& e) {
                error = e.what();
            }
        }
        EXPECT_TRUE(error.starts_with(path + ": ")) << error;
        EXPECT_NE(error.find("(File too large); nothing was stored, the database is as it was before this ingest"),
                  std::string::npos) << error;
        EXPECT_EQ(error.find("cannot rollback"), std::string::npos) << error;
        EXPECT_FALSE(fs::exists(path + "-journal"));
        EXPECT_TRUE(file_bytes(path) == before) << "the file changed: " << fs::file_size(path) << " bytes, were "
                                                << before.size();
        try {  // while the writer is still open, as `fftune best` beside a failed `fftune tune`
            Database reader(path, true);
            EXPECT_EQ(reader.record_count(), 2);
            EXPECT_EQ(reader.measurements(problem2, "m1").size(), 2u);
        } catch (const DatabaseError& e) {
            ADD_FAILURE() << e.what();
        }
        EXPECT_EQ(db.record_count(), 2);  // the writer goes on
        write(dir.file("b.jsonl"), {record("p2p_sync", 32, 1.0, 0.9, 1.1)});
        EXPECT_EQ(db.ingest({dir.file("b.jsonl")}).added, 1);
    }
}

// Every line that is not a usable record is refused with its file, line and
// reason, and nothing of it is stored; the good lines around it are.
TEST(Database, IngestRefusesUnknownSchemasAndImpossibleValuesPerLine) {
    TempDir dir;
    auto with = [](json r, const json::json_pointer& at, const json& v) {
        r[at] = v;
        return r;
    };
    const json good = record("p2p_sync", 16, 1.0, 0.9, 1.1);
    json no_fingerprint = good;
    no_fingerprint["machine"].erase("fingerprint");
    const std::vector<json> lines{
        good,                                                                          // 1
        with(good, "/schema"_json_pointer, "fftune.result/2"),                          // 2
        with(good, "/problem/ranks"_json_pointer, -3),                                  // 3
        with(good, "/problem/size"_json_pointer, json::array({0, 0, 0})),               // 4
        with(good, "/problem/ranks_per_node"_json_pointer, 5),                          // 5 (of 2 ranks)
        with(good, "/timing/total/median"_json_pointer, -1.0),                          // 6
        no_fingerprint,                                                                 // 7
        with(good, "/problem/size/0"_json_pointer, 9223372036854775808ull),             // 8: 2^63
        with(good, "/timing/total/ci99"_json_pointer, json::array({1.2, 0.9})),         // 9
        with(good, "/validation/max_rel_error"_json_pointer, nullptr),                  // 10: NaN, written as null
        with(good, "/status"_json_pointer, "maybe"),                                    // 11
    };
    write(dir.file("a.jsonl"), lines, "\nnot json at all\n");                          // 12 empty, 13
    Database db(dir.file("db.sqlite"), false);
    const auto st = db.ingest({dir.file("a.jsonl")});
    EXPECT_EQ(st.added, 1);
    EXPECT_EQ(st.lines, 12);
    EXPECT_EQ(db.record_count(), 1);
    EXPECT_EQ(st.refused, (std::map<std::string, int>{
                              {"impossible value", 7}, {"missing field", 2}, {"unknown schema", 1}, {"unreadable", 1}}));
    std::map<int, std::string> why;
    for (const auto& r : st.refusals) {
        EXPECT_EQ(r.file, dir.file("a.jsonl"));
        why[r.line] = r.reason;
    }
    auto says = [&](int line, const std::string& text) {
        EXPECT_NE(why[line].find(text), std::string::npos) << "line " << line << ": " << why[line];
    };
    says(2, "/schema \"fftune.result/2\" is not one this fftune reads (allowed: fftune.result/1, fftune.probe/1");
    says(3, "/problem/ranks -3 is impossible (ranks, allowed: 1 to 1073741824)");
    says(4, "/problem/size/0 0 is impossible (an extent, allowed: 1 or more)");
    says(5, "/problem/ranks_per_node 5 is impossible (ranks on one node, allowed: 1 to 2)");
    says(6, "/timing/total/median -1.0 is impossible (allowed: a finite number >= 0)");
    says(7, "/machine/fingerprint is missing");
    says(8, "/problem/size/0 9223372036854775808 is impossible");
    says(9, "/timing/total/ci99 [1.2,0.9] is impossible (allowed: low <= high)");
    says(10, "/validation/max_rel_error null is not a number");
    says(11, "/status 'maybe' is not a possible value (allowed: ok, skipped, failed)");
    says(13, "not JSON");
    EXPECT_EQ(why.count(1) + why.count(12), 0u);
    // What the user reads: one note per refused line, and the tally.
    const auto notes = ingest_notes(st, 3);
    ASSERT_EQ(notes.size(), 4u);
    EXPECT_EQ(notes[0], dir.file("a.jsonl") + ":2: not stored: " + why[2]);
    EXPECT_EQ(notes[3], "... and 8 more lines not stored (counted in the summary)");
    EXPECT_NE(ingest_summary(db, st).find(": 1 files, 12 lines: 1 added, 0 already present, 11 not stored "
                                          "(impossible value: 7, missing field: 2, unknown schema: 1, unreadable: 1); "
                                          "1 records"),
              std::string::npos) << ingest_summary(db, st);
    EXPECT_TRUE(st.usable());
    EXPECT_EQ(ingest_failure(st), "");
}

// Records measured with "validate": false are not tuning results: not stored,
// counted as such, and an ingest of nothing else fails.
TEST(Database, UnvalidatedRecordsAreNotStoredAndCounted) {
    TempDir dir;
    json unvalidated = record("p2p_sync", 16, 1.0, 0.9, 1.1);
    unvalidated["validation"] = {{"method", "none"}, {"passed", nullptr}};
    json other = unvalidated;
    other["problem"]["size"][0] = 32;
    write(dir.file("a.jsonl"), {unvalidated, other});
    Database db(dir.file("db.sqlite"), false);
    const auto st = db.ingest({dir.file("a.jsonl")});
    EXPECT_EQ(st.added, 0);
    EXPECT_EQ(st.not_validated, 2);
    EXPECT_EQ(st.refused_lines(), 0);
    EXPECT_EQ(db.record_count(), 0);
    EXPECT_FALSE(st.usable());
    EXPECT_EQ(ingest_failure(st), "nothing stored: none of the 2 lines read is a usable record (2 not stored, reasons above)");
    const auto notes = ingest_notes(st);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("2 ok records not stored: not validated (their testcase had \"validate\": false)"),
              std::string::npos) << notes[0];
    EXPECT_NE(ingest_summary(db, st).find("0 added, 0 already present, 2 not stored (not validated: 2); 0 records"),
              std::string::npos) << ingest_summary(db, st);
    EXPECT_FALSE(validated_ok(unvalidated));
    EXPECT_TRUE(validated_ok(record("p2p_sync", 16, 1.0, 0.9, 1.1)));
    // Failed and skipped records are stored (fftune report counts them), never candidates.
    json failed = record("a2a_sync", 16, 1.0, 0.9, 1.1);
    failed["status"] = "failed", failed["error"] = "rank 0: out of memory";
    failed.erase("timing"), failed.erase("validation");
    write(dir.file("b.jsonl"), {failed});
    EXPECT_EQ(db.ingest({dir.file("b.jsonl")}).added, 1);
    EXPECT_TRUE(db.measurements(problem2, "m1").empty());
}

TEST(Database, OnlyValidatedOkRecordsAreCandidates) {
    TempDir dir;
    json failed = record("p2p_streams", 16, 0.1, 0.1, 0.1);
    failed["status"] = "failed";
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1), record("a2a_sync", 16, 0.5, 0.4, 0.6, "m1", 2, false), failed});
    Database db(dir.file("db.sqlite"), false);
    db.ingest({dir.file("a.jsonl")});
    const auto ms = db.measurements(problem2, "m1");
    ASSERT_EQ(ms.size(), 1u);
    EXPECT_EQ(ms[0].config.at("redistribution")[0], "p2p_sync");
    EXPECT_TRUE(db.measurements(problem2, "other").empty());
}

TEST(Database, WinnerVerdictsFollowTheConfidenceIntervals) {
    auto m = [](const std::string& key, double med, double lo, double hi) {
        Measurement x;
        x.key = key, x.median_ms = med, x.ci_low = lo, x.ci_high = hi;
        return x;
    };
    EXPECT_EQ(pick_winner(problem2, {m("b", 2, 1.9, 2.1), m("a", 1, 0.9, 1.1)})->verdict, "faster");
    auto w = pick_winner(problem2, {m("a", 1.0, 0.9, 1.2), m("b", 1.05, 0.95, 1.3)});
    EXPECT_EQ(w->verdict, "same within noise");
    EXPECT_EQ(w->best.key, "a");
    EXPECT_NEAR(w->margin, 0.05, 1e-12);
    EXPECT_EQ(pick_winner(problem2, {m("a", 1.0, 0.99, 1.01), m("b", 1.05, 0.5, 1.3)})->verdict, "ambiguous");
    EXPECT_EQ(pick_winner(problem2, {m("a", 1, 1, 1)})->verdict, "only one");
    EXPECT_FALSE(pick_winner(problem2, {}));
    // The same configuration twice counts once.
    EXPECT_EQ(pick_winner(problem2, {m("a", 1, 1, 1), m("a", 2, 2, 2)})->verdict, "only one");
}

TEST(Database, ConcurrentWritersAndIngestersLoseNothingAndDuplicateNothing) {
    TempDir dir;
    constexpr int jobs = 6, per_job = 40;
    std::vector<std::string> files;
    for (int j = 0; j < jobs; ++j) files.push_back(dir.file(fmt::format("job{}.jsonl", j)));
    {  // every job writes its own file at the same time, flushing per record like the runner
        std::vector<std::jthread> writers;
        for (int j = 0; j < jobs; ++j)
            writers.emplace_back([&, j] {
                std::ofstream out(files[j]);
                for (int i = 0; i < per_job; ++i)
                    out << record("p2p_sync", 8 + j * per_job + i, 1.0 + i, 1.0, 2.0 + i).dump() << "\n" << std::flush;
            });
    }
    Database(dir.file("db.sqlite"), false);  // create the schema once
    {  // three ingests of all files race each other
        std::vector<std::jthread> ingesters;
        for (int k = 0; k < 3; ++k)
            ingesters.emplace_back([&] {
                Database db(dir.file("db.sqlite"), false);
                db.ingest(files);
            });
    }
    Database db(dir.file("db.sqlite"), true);
    EXPECT_EQ(db.record_count(), jobs * per_job);
    EXPECT_EQ(db.problems("m1").size(), std::size_t(jobs * per_job));
}

TEST(Database, BadFilesFailWithTheirPath) {
    TempDir dir;
    try {
        Database db(dir.file("missing.sqlite"), true);
        FAIL();
    } catch (const DatabaseError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.sqlite: no tuning database"), std::string::npos) << e.what();
    }
    std::ofstream(dir.file("corrupt.sqlite")) << "this is not a database, just text that is long enough to be read";
    try {
        Database db(dir.file("corrupt.sqlite"), true);
        FAIL();
    } catch (const DatabaseError& e) {
        EXPECT_NE(std::string(e.what()).find("corrupt.sqlite"), std::string::npos) << e.what();
    }
    {  // a database of another schema version
        Database db(dir.file("old.sqlite"), false);
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("old.sqlite").c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value = '0' WHERE key = 'schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    try {
        Database db(dir.file("old.sqlite"), true);
        FAIL();
    } catch (const DatabaseError& e) {
        EXPECT_NE(std::string(e.what()).find("schema version 0 (this fftune reads versions 1 to 4)"), std::string::npos) << e.what();
    }
    // A newer fftune's file is refused for writing too, and left as it was.
    ASSERT_EQ(sqlite3_open(dir.file("old.sqlite").c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value = '5' WHERE key = 'schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    try {
        Database db(dir.file("old.sqlite"), false);
        FAIL();
    } catch (const DatabaseError& e) {
        EXPECT_NE(std::string(e.what()).find("schema version 5 (this fftune reads versions 1 to 4)"), std::string::npos) << e.what();
    }
}

// Three pages past the end that no table owns ("Page N is never used"): SQLite
// reads and writes such a file on; PRAGMA quick_check finds it damaged.
void add_orphan_pages(const std::string& path) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    unsigned char count[4];
    f.seekg(28);
    f.read(reinterpret_cast<char*>(count), 4);
    std::uint32_t pages = (count[0] << 24) | (count[1] << 16) | (count[2] << 8) | count[3];
    pages += 3;
    f.seekp(0, std::ios::end);
    f << std::string(3 * 4096, '\0');
    for (int i = 0; i < 4; ++i) count[i] = static_cast<unsigned char>(pages >> (24 - 8 * i));
    f.seekp(28);
    f.write(reinterpret_cast<const char*>(count), 4);
}

// Nothing is written into a file that fails PRAGMA quick_check: the writer is
// refused when it opens the file, naming the check's findings.
TEST(Database, DamagedFilesAreRefusedForWritingAndLeftAsTheyWere) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1)});
    write(dir.file("b.jsonl"), {record("a2a_sync", 16, 2.0, 1.9, 2.1)});
    const std::string path = dir.file("db.sqlite");
    Database(path, false).ingest({dir.file("a.jsonl")});
    add_orphan_pages(path);
    const std::string before = file_bytes(path);
    try {
        Database db(path, false);
        db.ingest({dir.file("b.jsonl")});
        FAIL() << "a damaged database was written";
    } catch (const DatabaseError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path + ": the database is damaged (PRAGMA quick_check: Page "), std::string::npos) << what;
        EXPECT_NE(what.find("is never used"), std::string::npos) << what;
        EXPECT_NE(what.find("nothing is written into it"), std::string::npos) << what;
    }
    EXPECT_TRUE(file_bytes(path) == before);
}

// Another program's SQLite file is neither given fftune's tables nor read as
// a tuning database; a file with fftune's schema but no records table neither.
TEST(Database, ForeignSqliteFilesAreRefusedAndLeftAsTheyWere) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1)});
    const std::string path = dir.file("users.sqlite");
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); "
                                "INSERT INTO users (name) VALUES ('ada')", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const std::string before = file_bytes(path);
    for (bool read_only : {false, true})
        try {
            Database db(path, read_only);
            if (!read_only) db.ingest({dir.file("a.jsonl")});
            FAIL() << "another program's database was opened " << (read_only ? "for reading" : "for writing");
        } catch (const DatabaseError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("it holds the table users, and not fftune's (meta with a schema_version, records)"),
                      std::string::npos) << what;
            if (!read_only)
                EXPECT_NE(what.find(path + ": not an fftune database: "), std::string::npos) << what;
        }
    EXPECT_TRUE(file_bytes(path) == before);

    // A meta table with a schema version, but no records: not fftune's either.
    const std::string meta_only = dir.file("meta.sqlite");
    ASSERT_EQ(sqlite3_open(meta_only.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); "
                                "INSERT INTO meta VALUES ('schema_version', '4')", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    EXPECT_THROW(Database(meta_only, false), DatabaseError);
    // An empty file is a new database.
    std::ofstream(dir.file("empty.sqlite")).close();
    Database fresh(dir.file("empty.sqlite"), false);
    EXPECT_EQ(fresh.ingest({dir.file("a.jsonl")}).added, 1);
}

// A probe record as fftune probe writes it (core/run/probe.hpp).
json probe_record(const std::string& transport, long long bytes, double median, const std::string& machine = "m1") {
    return json{{"schema", "fftune.probe/1"}, {"kind", "probe"}, {"probe", "exchange"}, {"status", "ok"},
                {"backend", "fftw"}, {"transport", transport}, {"world", 2}, {"peers", 2}, {"groups", 1},
                {"bytes_per_peer", bytes}, {"validation", {{"method", "exchange_pattern"}, {"passed", true}}},
                {"timing", {{"total", {{"median", median}, {"ci99", {median, median}}}}}},
                {"machine", {{"fingerprint", machine}}},
                {"provenance", {{"fftune_version", "0.1.0"}, {"timestamp", "2026-11-23T00:00:00Z"}}}};
}

TEST(Database, ProbeRecordsGoToTheirOwnTableIdempotently) {
    TempDir dir;
    json fft = probe_record("", 0, 0.5);
    fft["probe"] = "fft", fft["precision"] = "double", fft["n"] = 64, fft["batch"] = 16, fft["stride"] = "strided";
    fft["ms_per_point_log2n"] = 1e-7;
    json bad = probe_record("a2a_sync", 8, 0.1);
    bad["validation"]["passed"] = false;  // data arrived wrong: never a calibration
    json unknown = probe_record("a2a_sync", 8, 0.1);
    unknown["probe"] = "teleport";
    write(dir.file("p.jsonl"), {probe_record("a2a_sync", 8, 0.01), probe_record("a2a_sync", 4096, 0.02), fft, bad, unknown,
                                record("p2p_sync", 16, 1.0, 0.9, 1.1)});
    Database db(dir.file("db.sqlite"), false);
    auto st = db.ingest({dir.file("p.jsonl")});
    EXPECT_EQ(st.added, 5);
    EXPECT_EQ(st.probes_added, 4);
    EXPECT_EQ(st.refused, (std::map<std::string, int>{{"impossible value", 1}}));  // the teleport
    st = db.ingest({dir.file("p.jsonl")});
    EXPECT_EQ(st.added, 0);
    EXPECT_EQ(st.duplicates, 5);
    EXPECT_EQ(db.probe_count(), 4);
    EXPECT_EQ(db.record_count(), 1);
    const auto probes = db.probe_records("m1");
    ASSERT_EQ(probes.size(), 3u);  // not the unvalidated exchange
    EXPECT_EQ(probes[2].at("probe"), "fft");
    EXPECT_TRUE(db.probe_records("m2").empty());
    // A machine with probes only is a machine of this database.
    write(dir.file("q.jsonl"), {probe_record("a2a_sync", 8, 0.01, "m3")});
    db.ingest({dir.file("q.jsonl")});
    EXPECT_EQ(db.machines(), (std::vector<std::string>{"m1", "m3"}));
}

TEST(Database, ImpossibleProbeRecordsAreRefused) {
    EXPECT_EQ(check_record(probe_record("a2a_sync", 8, 0.01)).use, RecordCheck::Use::store);
    json r = probe_record("a2a_sync", 8, 0.01);
    r["world"] = 0;
    auto c = check_record(r);
    EXPECT_EQ(c.use, RecordCheck::Use::refused);
    EXPECT_EQ(c.reason, "/world 0 is impossible (ranks of the probing job, allowed: 1 to 1073741824)");
    r = probe_record("a2a_sync", 8, 0.01);
    r["peers"] = 3;  // of a world of 2
    EXPECT_EQ(check_record(r).reason, "/peers 3 is impossible (ranks exchanging, allowed: 1 to 2)");
    r = probe_record("a2a_sync", 8, 0.01);
    r["schema"] = "fftune.probe/2";
    EXPECT_EQ(check_record(r).category, "unknown schema");
    r = probe_record("a2a_sync", 8, 0.01);
    r.erase("kind");
    EXPECT_EQ(check_record(r).reason, "/kind null in a record of schema fftune.probe/1 (allowed: \"probe\")");
}

// A database holding `records_file` as an older fftune left it: written by
// this one, then turned back by the SQL `downgrade`.
void write_old_database(const std::string& path, const std::string& records_file, const char* downgrade) {
    {
        Database db(path, false);
        db.ingest({records_file});
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, downgrade, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
}

TEST(Database, VersionOneFilesAreReadAndMigratedInPlace) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1)});
    write(dir.file("p.jsonl"), {probe_record("a2a_sync", 8, 0.01)});
    // The file fftune 0.1 wrote: no probes table, no ranks_per_node, schema_version 1.
    write_old_database(dir.file("v1.sqlite"), dir.file("a.jsonl"),
                       "DROP TABLE probes; DROP INDEX records_problem_key; ALTER TABLE records DROP COLUMN problem_key; "
                       "ALTER TABLE records DROP COLUMN ranks_per_node; "
                       "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
    {  // read-only: read as it is, without probes
        Database db(dir.file("v1.sqlite"), true);
        EXPECT_EQ(db.schema_version(), 1);
        EXPECT_EQ(db.measurements(problem2, "m1").size(), 1u);
        EXPECT_TRUE(db.probe_records("").empty());
        EXPECT_EQ(db.machines(), std::vector<std::string>{"m1"});
    }
    {  // read-write: migrated; the old records stay, probes can be added
        Database db(dir.file("v1.sqlite"), false);
        EXPECT_EQ(db.schema_version(), database_schema_version);
        EXPECT_EQ(db.record_count(), 1);
        EXPECT_EQ(db.ingest({dir.file("p.jsonl"), dir.file("a.jsonl")}).added, 1);
        EXPECT_EQ(db.probe_records("m1").size(), 1u);
    }
    Database db(dir.file("v1.sqlite"), true);
    EXPECT_EQ(db.schema_version(), database_schema_version);
    EXPECT_EQ(db.measurements(problem2, "m1").size(), 1u);
    EXPECT_EQ(db.probe_count(), 1);
}

json at_ranks_per_node(json r, int rpn) {
    r["problem"]["ranks_per_node"] = rpn;
    return r;
}

TEST(Database, RanksPerNodeSeparatesProblemsAndNotKnownMatchesAny) {
    TempDir dir;
    // 16x8x8 at 2 ranks: on one node (2 per node), on two nodes (1 per node), and a record from before the field.
    write(dir.file("a.jsonl"), {at_ranks_per_node(record("p2p_sync", 16, 1.0, 0.9, 1.1), 2),
                                at_ranks_per_node(record("a2a_sync", 16, 3.0, 2.9, 3.1), 1),
                                record("p2p_mpi_type", 16, 2.0, 1.9, 2.1)});
    Database db(dir.file("db.sqlite"), false);
    EXPECT_EQ(db.ingest({dir.file("a.jsonl")}).added, 3);
    auto keys = [&](int rpn) {
        Problem p = problem2;
        p.ranks_per_node = rpn;
        std::vector<std::string> k;
        for (const auto& m : db.measurements(p, "m1")) k.push_back(m.config.at("redistribution").at(0));
        return k;
    };
    EXPECT_EQ(keys(2), (std::vector<std::string>{"p2p_sync", "p2p_mpi_type"}));
    EXPECT_EQ(keys(1), (std::vector<std::string>{"p2p_mpi_type", "a2a_sync"}));
    EXPECT_EQ(keys(0), (std::vector<std::string>{"p2p_sync", "p2p_mpi_type", "a2a_sync"}));
    const auto problems = db.problems("m1");
    ASSERT_EQ(problems.size(), 3u);  // not known, 1 and 2 per node
    EXPECT_EQ(problems[0].value("ranks_per_node", 0), 0);
    EXPECT_EQ(problems[1].value("ranks_per_node", 0), 1);
    EXPECT_EQ(problems[2].value("ranks_per_node", 0), 2);
}

TEST(Database, VersionTwoFilesGetRanksPerNodeNotKnown) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1)});
    write_old_database(dir.file("v2.sqlite"), dir.file("a.jsonl"),
                       "DROP INDEX records_problem_key; ALTER TABLE records DROP COLUMN problem_key; "
                       "ALTER TABLE records DROP COLUMN ranks_per_node; "
                       "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    Problem on_one_node = problem2;
    on_one_node.ranks_per_node = 2;
    {  // read-only: read as it is
        Database db(dir.file("v2.sqlite"), true);
        EXPECT_EQ(db.schema_version(), 2);
        EXPECT_EQ(db.measurements(on_one_node, "m1").size(), 1u);
        ASSERT_EQ(db.problems("m1").size(), 1u);
        EXPECT_EQ(db.problems("m1")[0].value("ranks_per_node", 0), 0);
    }
    Database db(dir.file("v2.sqlite"), false);
    EXPECT_EQ(db.schema_version(), database_schema_version);
    EXPECT_EQ(db.measurements(on_one_node, "m1").size(), 1u);
    write(dir.file("b.jsonl"), {at_ranks_per_node(record("a2a_sync", 16, 0.5, 0.4, 0.6), 1)});
    EXPECT_EQ(db.ingest({dir.file("b.jsonl")}).added, 1);
    EXPECT_EQ(db.measurements(on_one_node, "m1").size(), 1u);  // the new record ran 1 per node
}

TEST(Database, VersionThreeFilesGetTheirProblemKeys) {
    TempDir dir;
    write(dir.file("a.jsonl"), {record("p2p_sync", 16, 1.0, 0.9, 1.1), record("a2a_sync", 16, 2.0, 1.9, 2.1)});
    write_old_database(dir.file("v3.sqlite"), dir.file("a.jsonl"),
                       "DROP INDEX records_problem_key; ALTER TABLE records DROP COLUMN problem_key; "
                       "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    {  // read-only: problems compared from the stored records
        Database db(dir.file("v3.sqlite"), true);
        EXPECT_EQ(db.schema_version(), 3);
        EXPECT_EQ(db.measurements(problem2, "m1").size(), 2u);
        ASSERT_EQ(db.problems("m1").size(), 1u);
        EXPECT_EQ(db.problems("m1")[0].at("size"), json::array({16, 8, 8}));
    }
    Database db(dir.file("v3.sqlite"), false);
    EXPECT_EQ(db.schema_version(), database_schema_version);
    const auto ms = db.measurements(problem2, "m1");
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_EQ(ms[0].config.at("redistribution")[0], "p2p_sync");
    Problem other = problem2;
    other.size = {8, 8, 8};
    EXPECT_TRUE(db.measurements(other, "m1").empty());
}

}  // namespace
}  // namespace fftune
