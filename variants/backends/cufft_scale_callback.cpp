#include "variants/backends/cufft_scale_callback.hpp"

#include <cuda_runtime.h>
#include <cufftXt.h>
#include <nvrtc.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/platform/backend.hpp"

namespace fftune {
namespace {

// The store callback's element types are cufftComplex / cufftDoubleComplex
// (float2 / double2): structs of the same size and alignment, so NVRTC needs no
// CUDA header.
constexpr const char* source = R"(
struct alignas(8) C { float x, y; };
struct alignas(16) Z { double x, y; };
extern "C" __device__ void fftune_scale_c(void* out, unsigned long long i, C e, void* factor, void*) {
    const float f = static_cast<const float*>(factor)[i];
    static_cast<C*>(out)[i] = C{e.x * f, e.y * f};
}
extern "C" __device__ void fftune_scale_z(void* out, unsigned long long i, Z e, void* factor, void*) {
    const double f = static_cast<const double*>(factor)[i];
    static_cast<Z*>(out)[i] = Z{e.x * f, e.y * f};
}
)";

// LTO-IR of `source` for the current device's architecture, compiled once.
const std::vector<char>& lto_ir() {
    static std::mutex mutex;
    static std::map<int, std::vector<char>> made;  // by compute capability
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
        throw Unsupported("cuFFT scale callback: no CUDA device to compile it for");
    const int cc = 10 * major + minor;
    std::lock_guard lock(mutex);
    if (auto it = made.find(cc); it != made.end()) return it->second;
    nvrtcProgram prog{};
    if (nvrtcCreateProgram(&prog, source, "fftune_scale.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        throw Unsupported("cuFFT scale callback: nvrtcCreateProgram failed");
    const std::string arch = fmt::format("--gpu-architecture=compute_{}", cc);
    const char* options[] = {arch.c_str(), "--relocatable-device-code=true", "-dlto", "--std=c++17"};
    const nvrtcResult compiled = nvrtcCompileProgram(prog, 4, options);
    std::string log;
    if (std::size_t n = 0; nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
        log.resize(n);
        nvrtcGetProgramLog(prog, log.data());
    }
    std::vector<char> ir;
    std::size_t size = 0;
    const bool ok = compiled == NVRTC_SUCCESS && nvrtcGetLTOIRSize(prog, &size) == NVRTC_SUCCESS && size > 0 &&
                    (ir.resize(size), nvrtcGetLTOIR(prog, ir.data()) == NVRTC_SUCCESS);
    nvrtcDestroyProgram(&prog);
    if (!ok)
        throw Unsupported(fmt::format("cuFFT scale callback: NVRTC could not compile it to LTO-IR ({}): {}",
                                      nvrtcGetErrorString(compiled), log));
    return made.emplace(cc, std::move(ir)).first->second;
}

}  // namespace

void attach_scale_callback(cufftHandle plan, Precision precision, const void* factor) {
    const auto& ir = lto_ir();
    const bool single = precision == Precision::single;
    void* info = const_cast<void*>(factor);  // caller_info: one device pointer per GPU of the plan
    const cufftResult r = cufftXtSetJITCallback(plan, single ? "fftune_scale_c" : "fftune_scale_z", ir.data(), ir.size(),
                                                single ? CUFFT_CB_ST_COMPLEX : CUFFT_CB_ST_COMPLEX_DOUBLE, &info);
    if (r != CUFFT_SUCCESS)
        throw Unsupported(fmt::format("cuFFT refused the scale callback (cufftXtSetJITCallback: error {})",
                                      static_cast<int>(r)));
}

}  // namespace fftune
