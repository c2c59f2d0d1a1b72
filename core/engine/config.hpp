// Data-only descriptions of a problem and of one configuration that solves it,
// with their JSON form and a canonical key (used by records, the database, plots).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/base/box.hpp"
#include "core/base/names.hpp"

namespace fftune {

struct Problem {
    std::string kind = "fft3d";
    std::array<index_t, 3> size{0, 0, 0};  // Nx, Ny, Nz of the real data
    Precision precision = Precision::double_;
    Direction direction = Direction::forward;
    int ranks = 1;
    // Most ranks on one node (DESIGN.md section 6 key): the runner records it
    // for its job; 0 = not known (records written before the field) or, in a
    // lookup, any.
    int ranks_per_node = 0;
};

struct Config {
    std::string backend = "fftw";
    std::string decomposition = "slab_2d1d";
    LayoutVariant layout = LayoutVariant::default_;
    std::array<int, 2> process_grid{1, 1};  // P1 x P2; slabs use P x 1
    std::vector<std::string> redistribution{"p2p_sync"};  // one method per phase
    bool gpu_aware = false;
    // Chunks K of comm/compute overlap: each FFT stage next to a reshape is
    // split into K slices along an untransformed axis, and the reshape of one
    // slice runs while the next is transformed. 1: no overlap.
    int overlap = 1;
    // The FFT before each reshape stores the rank's self block (the part it
    // keeps) straight into the reshape's destination, so that no transport
    // copies it (cuFFT store callbacks; backends that cannot skip the point).
    bool fft_stores_kept = false;
    // Sizes of the overlap slices: even, or tapered (tapered_lo): the slice
    // whose FFT runs alone, the first forward and the last inverse, is the
    // smallest and each next one larger, so that the pipeline fills and
    // drains sooner while each FFT slice still takes no longer than the
    // exchange beside it.
    SliceSchedule overlap_slices = SliceSchedule::even;

    // e.g. "fftw/pencil/realigned/2x2/a2a_sync+p2p_sync/host", plus
    // "/overlap4" when overlap > 1 ("/overlap4/tapered" with tapered slices)
    // and "/kept_by_fft" with fft_stores_kept
    // (keys of older records stay valid)
    std::string key() const;
    // Overlapped with tapered slices (one slice has no sizes to taper).
    bool tapered() const { return overlap > 1 && overlap_slices == SliceSchedule::tapered; }
};

void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);
void to_json(nlohmann::json& j, const Config& c);
void from_json(const nlohmann::json& j, Config& c);


}  // namespace fftune
