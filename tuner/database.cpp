#include "tuner/database.hpp"

#include "core/records/json_lines.hpp"
#include "core/run/family.hpp"
#include "tuner/record_check.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace fftune {

using json = nlohmann::json;

namespace {

std::string fnv1a(const std::string& s) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return fmt::format("{:016x}", h);
}

// The operating system's error behind SQLite's last one when that was an I/O
// error (" (No space left on device)"), or nothing. (The system errno of
// other errors may be left over from an earlier call.)
std::string system_error(sqlite3* db) {
    const int code = sqlite3_errcode(db) & 0xff, e = sqlite3_system_errno(db);
    const bool io = code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_CANTOPEN;
    return io && e ? fmt::format(" ({})", std::strerror(e)) : "";
}

// Prepared statement with bound parameters (no SQL is built from values).
class Statement {
public:
    Statement(sqlite3* db, const char* sql) : db_(db) {
        if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK)
            throw DatabaseError(fmt::format("SQL prepare failed: {}", sqlite3_errmsg(db)));
    }
    ~Statement() { sqlite3_finalize(st_); }
    Statement& bind(int i, const std::string& v) {
        sqlite3_bind_text(st_, i, v.c_str(), -1, SQLITE_TRANSIENT);
        return *this;
    }
    Statement& bind(int i, double v) {
        sqlite3_bind_double(st_, i, v);
        return *this;
    }
    Statement& bind(int i, long long v) {
        sqlite3_bind_int64(st_, i, v);
        return *this;
    }
    bool step() {
        const int rc = sqlite3_step(st_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw DatabaseError(fmt::format("SQL step failed: {}{}", sqlite3_errmsg(db_), system_error(db_)));
    }
    void reset() {
        sqlite3_reset(st_);
        sqlite3_clear_bindings(st_);
    }
    std::string text(int c) const {
        const auto* p = sqlite3_column_text(st_, c);
        return p ? reinterpret_cast<const char*>(p) : "";
    }
    double real(int c) const { return sqlite3_column_double(st_, c); }
    long long integer(int c) const { return sqlite3_column_int64(st_, c); }

private:
    sqlite3* db_;
    sqlite3_stmt* st_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw DatabaseError(msg + system_error(db));
    }
}

constexpr const char* schema_sql = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  record_hash TEXT NOT NULL UNIQUE,
  machine TEXT NOT NULL, software TEXT NOT NULL,
  kind TEXT NOT NULL, nx INTEGER NOT NULL, ny INTEGER NOT NULL, nz INTEGER NOT NULL,
  precision TEXT NOT NULL, direction TEXT NOT NULL, ranks INTEGER NOT NULL,
  ranks_per_node INTEGER NOT NULL DEFAULT 0,
  config_key TEXT NOT NULL, config_json TEXT NOT NULL,
  status TEXT NOT NULL, validated INTEGER NOT NULL, max_rel_error REAL,
  median_ms REAL, ci_low REAL, ci_high REAL,
  timestamp TEXT, record_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS records_problem ON records (machine, kind, nx, ny, nz, precision, direction, ranks);
)";

// Version 4: any problem family. problem_key is the problem's canonical JSON
// without its rank counts (core/run/family.hpp problem_key); the nx .. direction
// columns keep what a family's problem has of them (0 or '' otherwise).
constexpr const char* problem_key_index_sql =
    "CREATE INDEX IF NOT EXISTS records_problem_key ON records (machine, kind, problem_key, ranks)";

// Version 2 adds the probe table (version 1 files get it by migrate_sql).
constexpr const char* probes_sql = R"(
CREATE TABLE IF NOT EXISTS probes (
  id INTEGER PRIMARY KEY,
  record_hash TEXT NOT NULL UNIQUE,
  machine TEXT NOT NULL, software TEXT NOT NULL,
  probe TEXT NOT NULL, backend TEXT NOT NULL, world INTEGER NOT NULL,
  transport TEXT NOT NULL, peers INTEGER NOT NULL, bytes_per_peer INTEGER NOT NULL,
  precision TEXT NOT NULL, n INTEGER NOT NULL, batch INTEGER NOT NULL, stride TEXT NOT NULL,
  status TEXT NOT NULL, validated INTEGER NOT NULL,
  median_ms REAL, ci_low REAL, ci_high REAL,
  timestamp TEXT, record_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS probes_machine ON probes (machine, probe, backend);
)";

bool has_column(sqlite3* db, const char* table, const char* column) {
    Statement q(db, fmt::format("SELECT COUNT(*) FROM pragma_table_info('{}') WHERE name = '{}'", table, column).c_str());
    q.step();
    return q.integer(0) > 0;
}

int read_version(sqlite3* db) {
    Statement q(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!q.step()) throw DatabaseError("no schema version");
    try {
        return std::stoi(q.text(0));
    } catch (const std::exception&) {
        throw DatabaseError(fmt::format("schema version '{}' is not a number", q.text(0)));
    }
}

bool is_probe(const json& r) { return r.value("kind", "") == "probe"; }

// A SQLite file with tables, but not fftune's.
struct NotOurs : DatabaseError {
    using DatabaseError::DatabaseError;
};

// Refuses a file that PRAGMA quick_check finds damaged (its first findings in
// the message). quick_check is integrity_check without the index contents:
// linear in the file's size.
void check_integrity(sqlite3* db) {
    Statement q(db, "PRAGMA quick_check(5)");
    std::vector<std::string> findings;
    // One row per finding, or one row of several lines after a "*** in database main ***".
    while (q.step()) {
        const std::string text = q.text(0);
        for (std::size_t at = 0, eol; at <= text.size(); at = eol + 1) {
            eol = std::min(text.find('\n', at), text.size());
            const std::string line = text.substr(at, eol - at);
            if (!line.empty() && line != "ok" && !line.starts_with("*** ")) findings.push_back(line);
        }
    }
    if (!findings.empty())
        throw DatabaseError(fmt::format("the database is damaged (PRAGMA quick_check: {})", fmt::join(findings, "; ")));
}

// True when the file holds fftune's schema: a meta table with a
// schema_version, and records; false when it holds no table at all (a new
// file). Throws for anything else, such as another program's database, naming
// its tables.
bool check_owner(sqlite3* db) {
    std::vector<std::string> tables;
    Statement q(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                    "ORDER BY name");
    while (q.step()) tables.push_back(q.text(0));
    if (tables.empty()) return false;
    auto has = [&](const char* t) { return std::find(tables.begin(), tables.end(), t) != tables.end(); };
    bool versioned = false;
    if (has("meta")) try {
            Statement v(db, "SELECT COUNT(*) FROM meta WHERE key = 'schema_version'");
            versioned = v.step() && v.integer(0) > 0;
        } catch (const DatabaseError&) {  // a meta table of another shape
        }
    if (!versioned || !has("records"))
        throw NotOurs(fmt::format("it holds the table{} {}, and not fftune's (meta with a schema_version, records)",
                                  tables.size() > 1 ? "s" : "", fmt::join(tables, ", ")));
    return true;
}

// Ends a write transaction that failed part-way, so that the file is as it was
// before it began. SQLite may have ended it already (a full disk or an I/O
// error rolls the transaction back by itself: a ROLLBACK then fails with
// "no transaction is active"), and after an I/O error its pager keeps the
// journal until the connection next reads; that read plays the journal back.
// Without it the journal stays hot, and every read-only connection (fftune
// best, the selector) fails on it with "attempt to write a readonly
// database", since only a writer may play it back. Returns what is left
// undone, empty when the file is as it was.
std::string roll_back(sqlite3* db, const std::string& path) {
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    char* err = nullptr;
    if (sqlite3_exec(db, "SELECT COUNT(*) FROM sqlite_master", nullptr, nullptr, &err) != SQLITE_OK) {
        const std::string why = err ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        return fmt::format("the journal {}-journal could not be played back ({}); the next fftune ingest or tune "
                           "on this database plays it back",
                           path, why);
    }
    return {};
}

}  // namespace

std::string software_validator(const json& r) {
    const json& p = r.value("provenance", json::object());
    return fnv1a(json{p.value("fftune_version", ""), p.value("mpi_library", ""), p.value("fft_libraries", json::object()),
                      p.value("mpi_gpu_aware", false)}.dump());
}

std::string default_database_path() {
    if (const char* env = std::getenv("FFTUNE_DB"); env && *env) return env;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/fftune/tuning.sqlite";
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.local/share/fftune/tuning.sqlite";
}

namespace {

void bind_record(Statement& ins, const json& r) {
    const json& p = r.at("problem");
    // Families whose problems have a 3D size, a precision or a direction fill those columns.
    std::array<index_t, 3> size{0, 0, 0};
    if (p.contains("size") && p.at("size").size() == 3) size = p.at("size").get<std::array<index_t, 3>>();
    const bool ok = r.at("status") == "ok";
    const bool validated = validated_ok(r);
    ins.bind(1, fnv1a(r.dump()))
        .bind(2, r.at("machine").at("fingerprint").get<std::string>())
        .bind(3, software_validator(r))
        .bind(4, p.at("kind").get<std::string>())
        .bind(5, (long long)size[0]).bind(6, (long long)size[1]).bind(7, (long long)size[2])
        .bind(8, p.value("precision", ""))
        .bind(9, p.value("direction", ""))
        .bind(10, p.at("ranks").get<long long>())
        .bind(11, r.at("key").get<std::string>())
        .bind(12, r.at("config").dump())
        .bind(13, r.at("status").get<std::string>())
        .bind(14, (long long)validated)
        .bind(15, validated ? r.at("validation").value("max_rel_error", 0.0) : 0.0)
        .bind(16, ok ? r.at("timing").at("total").at("median").get<double>() : 0.0)
        .bind(17, ok ? r.at("timing").at("total").at("ci99").at(0).get<double>() : 0.0)
        .bind(18, ok ? r.at("timing").at("total").at("ci99").at(1).get<double>() : 0.0)
        .bind(19, r.value("provenance", json::object()).value("timestamp", ""))
        .bind(20, r.dump())
        .bind(21, p.value("ranks_per_node", 0ll))
        .bind(22, problem_key(p));
}

// Exchange probes fill transport/peers/bytes, FFT probes precision/n/batch/stride; the other columns stay empty.
void bind_probe(Statement& ins, const json& r) {
    const std::string probe = r.at("probe").get<std::string>();
    if (probe != "exchange" && probe != "fft") throw std::invalid_argument("unknown probe " + probe);
    const bool ok = r.at("status") == "ok";
    const bool exchange = probe == "exchange";
    const bool validated = ok && (!exchange || r.at("validation").at("passed") == true);
    ins.bind(1, fnv1a(r.dump()))
        .bind(2, r.at("machine").at("fingerprint").get<std::string>())
        .bind(3, software_validator(r))
        .bind(4, probe)
        .bind(5, r.at("backend").get<std::string>())
        .bind(6, r.at("world").get<long long>())
        .bind(7, exchange ? r.at("transport").get<std::string>() : std::string())
        .bind(8, exchange ? r.at("peers").get<long long>() : 0ll)
        .bind(9, exchange ? r.at("bytes_per_peer").get<long long>() : 0ll)
        .bind(10, exchange ? std::string() : r.at("precision").get<std::string>())
        .bind(11, exchange ? 0ll : r.at("n").get<long long>())
        .bind(12, exchange ? 0ll : r.at("batch").get<long long>())
        .bind(13, exchange ? std::string() : r.at("stride").get<std::string>())
        .bind(14, r.at("status").get<std::string>())
        .bind(15, (long long)validated)
        .bind(16, ok ? r.at("timing").at("total").at("median").get<double>() : 0.0)
        .bind(17, ok ? r.at("timing").at("total").at("ci99").at(0).get<double>() : 0.0)
        .bind(18, ok ? r.at("timing").at("total").at("ci99").at(1).get<double>() : 0.0)
        .bind(19, r.value("provenance", json::object()).value("timestamp", ""))
        .bind(20, r.dump());
}

}  // namespace

Database::Database(const std::string& path, bool read_only) : path_(path) {
    if (read_only && !std::filesystem::exists(path))
        throw DatabaseError(fmt::format("{}: no tuning database here (run fftune ingest or fftune tune first)", path));
    if (!read_only && std::filesystem::path(path).has_parent_path())
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw DatabaseError(fmt::format("{}: cannot open the database: {}", path, msg));
    }
    sqlite3_busy_timeout(db_, 10000);
    try {
        // Versions this build reads: 1 (no probes table), 2 (no ranks_per_node column)
        // and 3. Writers migrate older files in place.
        auto check = [&](int v) {
            if (v < 1 || v > database_schema_version)
                throw DatabaseError(fmt::format("schema version {} (this fftune reads versions 1 to {})", v,
                                                database_schema_version));
            return v;
        };
        if (!read_only) {
            // Nothing is written into a file that is damaged or not fftune's.
            check_integrity(db_);
            exec(db_, "BEGIN IMMEDIATE");
            try {
                check_owner(db_);
                exec(db_, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
                Statement ins(db_, "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)");
                ins.bind(1, std::to_string(database_schema_version)).step();
                const int old = check(read_version(db_));
                exec(db_, schema_sql);
                exec(db_, probes_sql);  // v1 -> v2: probes added
                // v2 -> v3: records get ranks_per_node, 0 (not known) for those already there.
                if (old < 3 && !has_column(db_, "records", "ranks_per_node"))
                    exec(db_, "ALTER TABLE records ADD COLUMN ranks_per_node INTEGER NOT NULL DEFAULT 0");
                // v3 -> v4: records get problem_key, computed from each record's problem.
                if (!has_column(db_, "records", "problem_key")) {
                    exec(db_, "ALTER TABLE records ADD COLUMN problem_key TEXT NOT NULL DEFAULT ''");
                    Statement rows(db_, "SELECT id, record_json FROM records");
                    Statement set(db_, "UPDATE records SET problem_key = ? WHERE id = ?");
                    while (rows.step()) {
                        set.bind(1, problem_key(json::parse(rows.text(1)).at("problem"))).bind(2, rows.integer(0)).step();
                        set.reset();
                    }
                }
                exec(db_, problem_key_index_sql);
                if (old < database_schema_version)
                    exec(db_, fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'",
                                          database_schema_version).c_str());
                exec(db_, "COMMIT");
            } catch (const std::exception& e) {
                const std::string left = roll_back(db_, path_);
                if (left.empty()) throw;
                throw DatabaseError(fmt::format("{}; {}", e.what(), left));
            }
        } else if (!check_owner(db_)) {
            throw DatabaseError("an empty file, without fftune's tables");
        }
        version_ = check(read_version(db_));
    } catch (const std::exception& e) {
        sqlite3_close(db_);
        db_ = nullptr;
        const bool foreign = dynamic_cast<const NotOurs*>(&e) != nullptr;
        if (read_only) throw DatabaseError(fmt::format("{}: not a usable fftune database: {}", path, e.what()));
        throw DatabaseError(fmt::format("{}: {}{}; nothing is written into it (give fftune another --db{})", path,
                                        foreign ? "not an fftune database: " : "", e.what(),
                                        foreign ? "" : ", or restore the file from a backup"));
    }
}

Database::~Database() {
    if (db_) sqlite3_close(db_);
}

IngestStats Database::ingest(const std::vector<std::string>& files) {
    IngestStats st;
    exec(db_, "BEGIN IMMEDIATE");
    try {
        Statement ins(db_, R"(INSERT OR IGNORE INTO records
            (record_hash, machine, software, kind, nx, ny, nz, precision, direction, ranks, config_key, config_json,
             status, validated, max_rel_error, median_ms, ci_low, ci_high, timestamp, record_json, ranks_per_node,
             problem_key)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?))");
        Statement probe(db_, R"(INSERT OR IGNORE INTO probes
            (record_hash, machine, software, probe, backend, world, transport, peers, bytes_per_peer, precision, n,
             batch, stride, status, validated, median_ms, ci_low, ci_high, timestamp, record_json)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?))");
        for (const auto& file : files) {
            int number = 0;  // of the line, empty ones counted
            auto refuse = [&](std::string category, std::string reason) {
                ++st.refused[category];
                if (st.refusals.size() < IngestStats::max_refusals_kept)
                    st.refusals.push_back({file, number, std::move(category), std::move(reason)});
            };
            const bool opened = for_each_line(file, [&](std::string_view line) {
                ++number;
                if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
                ++st.lines;
                json r;
                try {
                    r = json::parse(line);
                } catch (const json::exception& e) {
                    // A torn last line of a job that died, or not a JSON-lines file.
                    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
                    if (const auto end = why.find("] "); why.starts_with("[json.") && end != std::string::npos)
                        why.erase(0, end + 2);
                    if (const auto at = why.find(" at line 1, column "); at != std::string::npos) why.erase(at + 4, 8);
                    refuse("unreadable", fmt::format("not JSON ({})", why));
                    return;
                }
                const RecordCheck check = check_record(r);
                if (check.use == RecordCheck::Use::refused) return refuse(check.category, check.reason);
                if (check.use == RecordCheck::Use::not_validated) {
                    ++st.not_validated;
                    return;
                }
                Statement& used = is_probe(r) ? probe : ins;
                try {
                    if (&used == &probe) bind_probe(probe, r);
                    else bind_record(ins, r);
                } catch (const json::exception& e) {  // a field check_record let through
                    used.reset();
                    return refuse("missing field", e.what());
                }
                used.step();
                if (sqlite3_changes(db_) > 0) ++st.added, st.probes_added += &used == &probe;
                else ++st.duplicates;
                used.reset();
            });
            if (!opened) throw DatabaseError(fmt::format("{}: cannot read", file));
            ++st.files;
        }
        exec(db_, "COMMIT");
    } catch (const std::exception& e) {
        // One transaction: a failure anywhere (a full disk, a file that cannot
        // be read) stores nothing of this ingest.
        const std::string left = roll_back(db_, path_);
        throw DatabaseError(fmt::format("{}: {}; nothing was stored{}", path_, e.what(),
                                        left.empty() ? ", the database is as it was before this ingest" : "; " + left));
    }
    return st;
}

// The ranks_per_node column, or 0 (not known) in files from before it (read-only, not migrated).
const char* Database::ranks_per_node_column() const { return version_ >= 3 ? "ranks_per_node" : "0"; }

std::vector<Measurement> Database::measurements(const json& problem, const std::string& machine) const {
    // Ranks per node: 0 on either side (not known / any) matches every value.
    const std::string rpn = ranks_per_node_column();
    const long long per_node = problem.value("ranks_per_node", 0ll);
    const std::string key = problem_key(problem);
    // Files before version 4 (read-only, not migrated) have no problem_key: compared here instead.
    const bool keyed = version_ >= 4;
    Statement q(db_, fmt::format(R"(SELECT config_key, config_json, median_ms, ci_low, ci_high, max_rel_error, machine, software,
        timestamp, {1} FROM records WHERE status = 'ok' AND validated = 1 AND kind = ? AND {2} AND ranks = ?
        AND (? = '' OR machine = ?) AND (? = 0 OR {0} = 0 OR {0} = ?) ORDER BY median_ms)",
                                 rpn, keyed ? "''" : "record_json", keyed ? "problem_key = ?" : "? <> ''").c_str());
    q.bind(1, problem.at("kind").get<std::string>()).bind(2, key).bind(3, problem.at("ranks").get<long long>())
        .bind(4, machine).bind(5, machine).bind(6, per_node).bind(7, per_node);
    std::vector<Measurement> out;
    while (q.step()) {
        if (!keyed && problem_key(json::parse(q.text(9)).at("problem")) != key) continue;
        Measurement m;
        m.key = q.text(0);
        m.config = json::parse(q.text(1));
        m.median_ms = q.real(2), m.ci_low = q.real(3), m.ci_high = q.real(4), m.max_rel_error = q.real(5);
        m.machine = q.text(6), m.software = q.text(7), m.timestamp = q.text(8);
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<Measurement> Database::measurements(const Problem& problem, const std::string& machine) const {
    return measurements(json(problem), machine);
}

std::vector<json> Database::problems(const std::string& machine, const std::string& kind) const {
    // One row per (problem, ranks, ranks per node); files before version 4 list each record's problem.
    const bool keyed = version_ >= 4;
    Statement q(db_, fmt::format(R"(SELECT DISTINCT {0}, ranks, {1} AS rpn FROM records
        WHERE status = 'ok' AND validated = 1 AND (? = '' OR machine = ?) AND (? = '' OR kind = ?)
        ORDER BY kind, ranks, nx * ny * nz, nx, ny, nz, precision, direction, {0}, rpn)",
                                 keyed ? "problem_key" : "record_json", ranks_per_node_column()).c_str());
    q.bind(1, machine).bind(2, machine).bind(3, kind).bind(4, kind);
    std::vector<json> out;
    std::set<std::string> seen;
    while (q.step()) {
        json p = keyed ? json::parse(q.text(0)) : json::parse(q.text(0)).at("problem");
        p.erase("ranks_per_node");
        p["ranks"] = q.integer(1);
        if (q.integer(2) > 0) p["ranks_per_node"] = q.integer(2);
        if (seen.insert(p.dump()).second) out.push_back(std::move(p));
    }
    return out;
}

std::vector<std::string> Database::machines() const {
    Statement q(db_, version_ >= 2 ? "SELECT machine FROM records UNION SELECT machine FROM probes ORDER BY machine"
                                   : "SELECT DISTINCT machine FROM records ORDER BY machine");
    std::vector<std::string> out;
    while (q.step()) out.push_back(q.text(0));
    return out;
}

namespace {
// The record_json column of a query whose two parameters are the machine
// filter ('' = every machine).
std::vector<json> records_for_machine(sqlite3* db, const char* sql, const std::string& machine) {
    Statement q(db, sql);
    q.bind(1, machine).bind(2, machine);
    std::vector<json> out;
    while (q.step()) out.push_back(json::parse(q.text(0)));
    return out;
}
}  // namespace

std::vector<json> Database::validated_records(const std::string& machine, const std::string& kind) const {
    auto all = records_for_machine(
        db_, "SELECT record_json FROM records WHERE status = 'ok' AND validated = 1 AND (? = '' OR machine = ?)", machine);
    if (!kind.empty())
        std::erase_if(all, [&](const json& r) { return r.at("problem").value("kind", "") != kind; });
    return all;
}

long long Database::record_count() const {
    Statement q(db_, "SELECT COUNT(*) FROM records");
    q.step();
    return q.integer(0);
}

std::vector<json> Database::probe_records(const std::string& machine) const {
    if (version_ < 2) return {};
    return records_for_machine(
        db_, "SELECT record_json FROM probes WHERE status = 'ok' AND validated = 1 AND (? = '' OR machine = ?) ORDER BY id",
        machine);
}

long long Database::probe_count() const {
    if (version_ < 2) return 0;
    Statement q(db_, "SELECT COUNT(*) FROM probes");
    q.step();
    return q.integer(0);
}

int IngestStats::refused_lines() const {
    int n = 0;
    for (const auto& [category, count] : refused) n += count;
    return n;
}

std::vector<std::string> ingest_notes(const IngestStats& st, std::size_t limit) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < st.refusals.size() && i < limit; ++i) {
        const auto& r = st.refusals[i];
        out.push_back(fmt::format("{}:{}: not stored: {}", r.file, r.line, r.reason));
    }
    if (const int more = st.refused_lines() - static_cast<int>(std::min(limit, st.refusals.size())); more > 0)
        out.push_back(fmt::format("... and {} more line{} not stored (counted in the summary)", more, more > 1 ? "s" : ""));
    if (st.not_validated > 0)
        out.push_back(fmt::format("{} ok record{} not stored: not validated (their testcase had \"validate\": false); "
                                  "the tuner stores only validated results, so run them with validation to tune with them",
                                  st.not_validated, st.not_validated > 1 ? "s" : ""));
    return out;
}

std::string ingest_summary(const Database& db, const IngestStats& st) {
    std::vector<std::string> why;
    if (st.not_validated > 0) why.push_back(fmt::format("not validated: {}", st.not_validated));
    for (const auto& [category, count] : st.refused) why.push_back(fmt::format("{}: {}", category, count));
    return fmt::format("{}: {} files, {} lines: {} added, {} already present, {} not stored{}; {} records{}", db.path(),
                       st.files, st.lines, st.added, st.duplicates, st.not_stored(),
                       why.empty() ? "" : fmt::format(" ({})", fmt::join(why, ", ")), db.record_count(),
                       db.probe_count() > 0 ? fmt::format(", {} probe records", db.probe_count()) : "");
}

std::string ingest_failure(const IngestStats& st) {
    if (st.usable()) return {};
    if (st.lines == 0) return fmt::format("nothing stored: the {} file{} held no records", st.files, st.files == 1 ? "" : "s");
    return fmt::format("nothing stored: none of the {} line{} read is a usable record ({} not stored, reasons above)",
                       st.lines, st.lines == 1 ? "" : "s", st.not_stored());
}

std::optional<Winner> pick_winner(const json& problem, std::vector<Measurement> ms) {
    if (ms.empty()) return std::nullopt;
    // The same configuration measured several times: keep its fastest median.
    std::sort(ms.begin(), ms.end(), [](const auto& a, const auto& b) { return a.median_ms < b.median_ms; });
    std::vector<Measurement> unique;
    for (auto& m : ms)
        if (std::none_of(unique.begin(), unique.end(), [&](const auto& u) { return u.key == m.key; }))
            unique.push_back(std::move(m));
    Winner w;
    w.problem = problem;
    w.best = unique.front();
    w.candidates = static_cast<int>(unique.size());
    if (unique.size() == 1) {
        w.verdict = "only one";
        return w;
    }
    w.runner_up = unique[1];
    const Measurement &a = w.best, &b = *w.runner_up;
    w.margin = a.median_ms > 0 ? b.median_ms / a.median_ms - 1 : 0;
    // Disjoint 99% CIs: faster. Each median inside the other's CI: the same within noise.
    if (a.ci_high < b.ci_low) w.verdict = "faster";
    else if (b.median_ms <= a.ci_high && a.median_ms >= b.ci_low) w.verdict = "same within noise";
    else w.verdict = "ambiguous";
    return w;
}

}  // namespace fftune
