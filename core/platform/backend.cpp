#include "core/platform/backend.hpp"

namespace fftune {

FFTUNE_DEFINE_REGISTRY(Backend);

Buffer::Buffer(Backend& backend, std::size_t bytes, bool host)
    : backend_(&backend), bytes_(bytes), host_(host) {
    // Allocate at least one byte so that empty boxes still get a valid pointer.
    const std::size_t n = bytes == 0 ? 1 : bytes;
    ptr_ = host ? backend.allocate_host(n) : backend.allocate(n);
}

Buffer::~Buffer() {
    if (give_back_) {
        give_back_();
        return;
    }
    if (!ptr_) return;
    if (host_)
        backend_->deallocate_host(ptr_);
    else
        backend_->deallocate(ptr_);
}

namespace {

class StandaloneFft final : public FftPlan {
public:
    StandaloneFft(Backend& backend, std::unique_ptr<FftPlan> plan) : plan_(std::move(plan)) {
        if (plan_->work_bytes() > 0) {
            area_ = Buffer(backend, plan_->work_bytes());
            plan_->set_work_area(area_.data());
        }
    }
    void execute(void* in, void* out) override { plan_->execute(in, out); }

private:
    std::unique_ptr<FftPlan> plan_;
    Buffer area_;
};

}  // namespace

std::unique_ptr<FftPlan> make_standalone_fft(Backend& backend, const FftDescriptor& desc) {
    return std::make_unique<StandaloneFft>(backend, backend.make_fft(desc));
}

}  // namespace fftune
