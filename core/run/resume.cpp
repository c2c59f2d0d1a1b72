#include "core/run/resume.hpp"

#include <map>

#include <fmt/format.h>

#include "core/platform/log.hpp"
#include "core/platform/mpi_util.hpp"
#include "core/records/json_lines.hpp"

namespace fftune {

using json = nlohmann::json;

namespace {

constexpr const char* other_testcase_advice =
    "give another --out, or --fresh to measure this rank count again (its records there are then discarded)";

}  // namespace

StoredRecords read_stored(const std::string& path, const std::vector<Point>& points) {
    StoredRecords out;
    std::map<int, long> line_of;  // point -> the line of its record
    long number = 0;
    std::string bad;  // the last line that was not a record: an error unless it is the last line (torn)
    long bad_line = 0;
    for_each_line(path, [&](std::string_view line) {
        ++number;
        if (!bad.empty())
            throw ResumeError(fmt::format("{} line {}: not a JSON record ({}...): the file was damaged; remove that line, "
                                          "or {}", path, bad_line, bad.substr(0, 40), other_testcase_advice));
        if (line.empty()) return;
        json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (r.is_discarded() || !r.is_object()) {
            bad = std::string(line.substr(0, 40));
            bad_line = number;
            return;
        }
        const int index = r.value("point_index", -1);
        const int ranks = r.contains("problem") && r["problem"].is_object() ? r["problem"].value("ranks", -1) : -1;
        if (index < 0 || index >= static_cast<int>(points.size()))
            throw ResumeError(fmt::format("{} line {}: a record of point {}, but this testcase has {} points at this rank "
                                          "count: the folder holds results of another testcase; {}",
                                          path, number, index, points.size(), other_testcase_advice));
        const Point& p = points[index];
        const std::string key = r.value("key", "");
        if (ranks != p.ranks() || key != p.key || problem_key(r["problem"]) != problem_key(p.problem))
            throw ResumeError(fmt::format("{} line {}: a record of {} at {} ranks as point {}, but point {} of this "
                                          "testcase is {} at {} ranks: the folder holds results of another testcase "
                                          "(or of this one before it changed); {}",
                                          path, number, key, ranks, index + 1, index + 1, p.label, p.ranks(),
                                          other_testcase_advice));
        if (const auto [it, fresh] = line_of.emplace(index, number); !fresh)
            throw ResumeError(fmt::format("{} line {}: a second record of point {} (the first is line {}): two runs wrote "
                                          "this file at once; remove one of the two lines, or {}",
                                          path, number, index + 1, it->second, other_testcase_advice));
        out.next = std::max(out.next, index + 1);
        out.records.push_back(std::move(r));
    });
    return out;
}

int resume_index(MPI_Comm comm, const std::string& path, const std::vector<Point>& points) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    int next = 0;
    std::string error;
    if (rank == 0) try {
            const auto stored = read_stored(path, points);
            next = stored.next;
            if (!stored.records.empty())
                logging::info(fmt::format("{}: {} records already stored; continuing after point {}", path,
                                          stored.records.size(), next));
        } catch (const std::exception& e) {
            error = e.what();
        }
    if (auto err = agree_error(comm, error, /*name_rank=*/false)) throw ResumeError(*err);
    MPI_Bcast(&next, 1, MPI_INT, 0, comm);
    return next;
}

}  // namespace fftune
