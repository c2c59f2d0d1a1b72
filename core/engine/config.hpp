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
    // Forward, where an overlapped FFT + reshape pair comes right before the
    // last stage, an FFT (slab_2d1d's and pencil's fft.x): every slice's
    // exchange moves in this many parts along that FFT's slowest untransformed
    // axis, part 0 of the later slices before part 1 of the earlier ones, and
    // the FFT runs part by part, each as soon as its share of every slice has
    // moved, beside the exchange of the next part. 1: the whole exchange first.
    int exchange_parts = 1;

    // e.g. "fftw/pencil/realigned/2x2/a2a_sync+p2p_sync/host", plus
    // "/overlap4" when overlap > 1 ("/overlap4/tapered" with tapered slices,
    // "/overlap4/parts2" with exchange_parts 2) and "/kept_by_fft" with fft_stores_kept
    // (keys of older records stay valid)
    std::string key() const;
    // Overlapped with tapered slices (one slice has no sizes to taper).
    bool tapered() const { return overlap > 1 && overlap_slices == SliceSchedule::tapered; }
    // Overlapped with the exchange in parts (one slice has no exchange beside an FFT).
    bool parted() const { return overlap > 1 && exchange_parts > 1; }
};

void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);
void to_json(nlohmann::json& j, const Config& c);
void from_json(const nlohmann::json& j, Config& c);


}  // namespace fftune
