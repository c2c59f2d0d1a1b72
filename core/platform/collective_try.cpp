#include "core/platform/collective_try.hpp"

#include <exception>

#include "core/platform/backend.hpp"
#include "core/platform/mpi_util.hpp"

namespace fftune {

std::optional<std::string> collective_try(MPI_Comm comm, const std::function<void()>& step, bool* unsupported) {
    std::string error;
    enum { ok, peer_failed, refused, failed };  // the worst over ranks decides
    int kind = ok;
    try {
        step();
    } catch (const PeerFailed& e) {
        error = e.what();
        kind = peer_failed;
    } catch (const Unsupported& e) {
        error = e.what();
        kind = refused;
    } catch (const std::exception& e) {
        error = e.what();
        kind = failed;
    } catch (...) {
        kind = failed;
    }
    if (kind != ok && error.empty()) error = "unknown error";
    int worst = kind;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&kind, &worst, 1, MPI_INT, MPI_MAX, comm));
    if (unsupported) *unsupported = worst == refused;
    // Agree on a message of the kind that decides the outcome; name its rank
    // only when some ranks did not throw it (an error every rank raised, such
    // as an agreed refusal, already says what it needs to).
    int everyone = kind == worst ? 1 : 0, all_threw = 0;
    FFTUNE_MPI_CHECK(MPI_Allreduce(&everyone, &all_threw, 1, MPI_INT, MPI_MIN, comm));
    return agree_error(comm, kind == worst ? error : std::string(), /*name_rank=*/all_threw == 0);
}

}  // namespace fftune
