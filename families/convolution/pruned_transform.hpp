// The octree's pruned local transform (Kulkarni et al., seed 003, section 3.1,
// "Local FFT and convolution with compression": zero structure is implicit
// in the 1D calls, which skip what is known to be zero). An octree rank's
// input on the padded grid M = 2N is zero outside its x-planes [x0, x1) and
// y < Ny, z < Nz; its output is read only at x < Nx, y < Ny, z < Nz. The
// 3D transform is three passes of batched 1D FFTs, each over the rows it
// needs, on PaddedConvolution's arrays (the engine Plan's input and spectrum
// layouts, in any axis order), so the kernel multiply is the same:
//   forward: z (r2c) on the rows x ∈ [x0, x1), y < Ny; y (c2c, in place) on
//            the x-planes [x0, x1); x (c2c, in place) on the whole spectrum.
//            The spectrum's other x-planes and rows y ≥ Ny are zeroed first:
//            zero input rows transform to zero, so the result is the full
//            transform's.
//   inverse: x on the whole spectrum; y on x < Nx; z (c2r) on x < Nx,
//            y < Ny into the input array. Nothing else of the result is
//            written (or read: the octree samples and keeps x < Nx, y < Ny).
// Work, in units of one full pass (Mx My (Mz/2 + 1) complex points; an r2c
// or c2r pass over all rows counts 1 as well), with p = (x1 − x0) / Mx
// (1/(2P) for even slabs) against 3 per direction for the full transform:
//   forward 1 + p + p/2 (Ny / My = 1/2 of the z rows), saving 2 − 3p/2 passes
//   (1.81 at P = 4), plus a write of the (1 − p) zeroed planes;
//   inverse 1 + 1/2 + 1/4, saving 1.25 passes at any P.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/base/box.hpp"
#include "core/platform/backend.hpp"

namespace fftune::convolution {

class PrunedTransform {
public:
    // `real`: the padded grid 2n (doubles), `spectrum`: its r2c transform
    // (2n_x × 2n_y × (n_z + 1) complex), both boxes from the origin; `own`:
    // the x-planes [x0, x1) of n whose input is nonzero (may be empty).
    // Throws std::invalid_argument for anything else.
    PrunedTransform(Backend& backend, const Layout& real, const Layout& spectrum, const std::array<index_t, 3>& n,
                    index_t x0, index_t x1);
    // The work area its plans share (the largest any asks for), without
    // making one: for a memory check before anything is allocated.
    static std::size_t work_bytes(Backend& backend, const Layout& real, const Layout& spectrum,
                                  const std::array<index_t, 3>& n, index_t x0, index_t x1);

    // spectrum = the r2c transform of `in`, whose points outside own_box()
    // must be zero where this reads them: rows x ∈ [x0, x1), y < Ny (so their
    // z ≥ Nz too). Unnormalised, as Plan::forward. Queued.
    void forward(const void* in, void* spectrum);
    // in = the c2r transform of `spectrum` (destroyed) on the rows x < Nx,
    // y < Ny; in's other points are left as they are. Queued.
    void inverse(void* spectrum, void* in);
    // The input forward() reads, after inverse() wrote over it: the own
    // rows' z ≥ Nz zeroed, own_box() copied in from `packed` (packed in the
    // real layout's axis order, as packed_region packs it). Queued.
    void restore(void* in, const void* packed);

    // The input's nonzero points: [x0, x1) × [0, Ny) × [0, Nz).
    const Box3& own_box() const { return own_; }
    // Backend memory it holds: the shared work area and one zero element.
    std::size_t bytes() const { return area_.bytes() + zero_.bytes(); }
    // Bytes read and written in backend memory by forward() (zeroing
    // included) and inverse(): one pass over each pass's input and output.
    std::size_t forward_device_bytes() const;
    std::size_t inverse_device_bytes() const;
    // 1D FFT work (rows × length, r2c and c2r rows at half) over the full
    // transform's, per direction (header comment).
    double forward_work_fraction() const;
    double inverse_work_fraction() const;

private:
    // One batched 1D FFT over some rows, its arrays' offsets to their first.
    struct Pass {
        std::unique_ptr<FftPlan> plan;
        index_t in_at = 0, out_at = 0;       // elements
        std::size_t in_elem = 0, out_elem = 0;  // bytes: 8 real, 16 complex
        std::size_t device_bytes = 0;
        double work = 0;  // rows × length, halved for r2c/c2r
        void run(const void* in, void* out) const;  // nothing where its rows are none
    };
    enum Step { fwd_z, fwd_y, fwd_x, inv_x, inv_y, inv_z, steps };
    static std::vector<Pass> make_passes(Backend& backend, const Layout& real, const Layout& spectrum,
                                         const std::array<index_t, 3>& n, index_t x0, index_t x1);
    // data[box of layout] = 0, queued: one memset where contiguous, else a
    // strided copy from one zero element (source strides 0).
    void zero_box(void* data, const Layout& layout, const Box3& box, std::size_t elem_bytes);

    Backend* backend_;
    Layout real_, spectrum_;
    std::array<index_t, 3> n_;
    Box3 own_;
    std::vector<Box3> zeroed_;  // of the spectrum, before the forward passes
    std::vector<Pass> passes_;  // by Step; an empty plan where its rows are none
    Buffer area_, zero_;
};

}  // namespace fftune::convolution
