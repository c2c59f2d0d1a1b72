// COCG (complex symmetric operators): CG of cg.hpp over complex scalars. Its
// dots are the kernels' unconjugated a^T b, so the iteration is CG's line for
// line; every fusion of CG applies.
#include "families/krylov/cg.hpp"

namespace fftune::krylov {
namespace {

const bool registered = register_variant<SolverT<complex>, Cg<complex, false>>("cocg/none") &&
                        register_variant<SolverT<complex>, Cg<complex, true>>("cocg/fused") &&
                        register_variant<SolverT<complex>, CgFolded<complex>>("cocg/folded") &&
                        register_variant<SolverT<complex>, CgOnePass<complex>>("cocg/one_pass");

}  // namespace
}  // namespace fftune::krylov
