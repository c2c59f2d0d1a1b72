#include "core/engine/transport.hpp"

#include <stdexcept>

namespace fftune {

FFTUNE_DEFINE_REGISTRY(Transport);

void Transport::queue_slice(const ReshapeContext& ctx, const void* src, void* dst) {
    (void)ctx;
    (void)src;
    (void)dst;
    throw std::logic_error("queue_slice called on a transport that does not queue slices (Transport::queues_slices)");
}

}  // namespace fftune

namespace fftune {

ReshapePhaseTraffic phase_traffic(const ReshapePlan& plan, const Transport& transport, const ReshapePhases& phases) {
    const ReshapeTraffic t = traffic(plan);
    const bool pack_apart = phases.pack >= 0;
    const bool unpack_apart = phases.unpack >= 0 && transport.uses_recv_buffer();
    ReshapePhaseTraffic out;
    out.pack.device_bytes = pack_apart ? t.pack : 0;
    out.unpack.device_bytes = unpack_apart ? t.unpack : 0;
    out.exchange = {t.self_copy + (pack_apart ? 0 : t.pack) + (unpack_apart ? 0 : t.unpack), t.sent, t.received};
    return out;
}

}  // namespace fftune
