// One step of a sweep point or probe, run on every rank of a communicator,
// with its outcome agreed: every rank learns whether any rank failed, and why.
#pragma once

#include <mpi.h>

#include <functional>
#include <optional>
#include <string>

namespace fftune {

// Runs `step` on every rank; returns the agreed error, if any rank threw.
// `unsupported`, when given, is set on every rank when the ranks that threw
// all threw Unsupported (the library refused the configuration): the point
// is then skipped, not failed. A real failure on any rank wins, and the error
// of a rank that failed on its own wins over a PeerFailed that only echoes it
// (named "rank N: ..." unless every rank threw it). Collective.
std::optional<std::string> collective_try(MPI_Comm comm, const std::function<void()>& step,
                                          bool* unsupported = nullptr);

}  // namespace fftune
