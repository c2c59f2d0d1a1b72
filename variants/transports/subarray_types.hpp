// MPI subarray datatypes that describe each peer's block inside the source and
// destination arrays (thesis 4.5.1 Peer2Peer-MPI_Type, 4.5.2 All2All-MPI_Type):
// the MPI library walks the strides, no pack or unpack phase.
#pragma once

#include <vector>

#include "core/engine/reshape.hpp"

namespace fftune {

struct SubarrayTypes {
    std::vector<Datatype> send;  // by phase rank; null type for empty blocks
    std::vector<Datatype> recv;
};

SubarrayTypes make_subarray_types(const ReshapeContext& ctx);

}  // namespace fftune
