#include "app/command.hpp"

#include <cstdlib>

namespace fftune::cli {

bool under_launcher() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(var)) return true;
    return false;
}

}  // namespace fftune::cli
