#include "core/engine/transport.hpp"

namespace fftune {

FFTUNE_DEFINE_REGISTRY(Transport);

}  // namespace fftune
