// QMR-SYM (Freund): QMR of qmr.hpp on the symmetric Lanczos process of a
// complex symmetric operator, one SpMV per iteration, unfused.
#include "families/krylov/qmr.hpp"

namespace fftune::krylov {
namespace {

const bool registered = register_variant<SolverT<complex>, Qmr<complex, false>>("qmr_sym/none");

}  // namespace
}  // namespace fftune::krylov
