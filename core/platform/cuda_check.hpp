// The one CUDA runtime error check (sources built with the CUDA toolkit only):
// a failed call throws std::runtime_error naming what was called and CUDA's
// error, as FFTUNE_MPI_CHECK does for MPI. Files with their own overloads of
// check() for other libraries (cuFFT, cuBLAS, NCCL) bring this one in with
// `using fftune::check;`.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace fftune {

inline void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace fftune
