#include "core/registry.hpp"

#include "core/backend.hpp"
#include "core/decomposition.hpp"
#include "core/transport.hpp"

namespace fftune {

template <class Interface>
Registry<Interface>& Registry<Interface>::instance() {
    static Registry registry;
    return registry;
}

template class Registry<Backend>;
template class Registry<Decomposition>;
template class Registry<Transport>;

}  // namespace fftune
