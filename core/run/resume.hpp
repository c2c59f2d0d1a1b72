// Resuming: what a result file of one rank count already holds, checked
// against the testcase's points before anything is added to it, and where a
// job that continues it starts. Records are appended in point order, so a run
// goes on after the last stored record: nothing stored is measured again.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/run/family.hpp"

namespace fftune {

// A result file that cannot be continued: what() names the file, the line and what to do.
struct ResumeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct StoredRecords {
    std::vector<nlohmann::json> records;  // in file order
    int next = 0;                         // the point after the last stored record; 0 when there is none
};

// The records of `path` (none when it does not exist). Throws ResumeError when
// a line other than a torn last one is not a JSON record, when a record is not
// of the point of `points` its point_index names (another testcase, or this
// one changed, wrote to the same folder), or when a point has two records.
StoredRecords read_stored(const std::string& path, const std::vector<Point>& points);

// For a job that continues `path` (collective over `comm`): rank 0 reads it
// (read_stored; errors agreed) and every rank gets `next`.
int resume_index(MPI_Comm comm, const std::string& path, const std::vector<Point>& points);

}  // namespace fftune
