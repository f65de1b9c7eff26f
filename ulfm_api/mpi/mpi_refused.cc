// The functions of mpi_refused.h: exported so that programs mentioning them link; each call
// returns MPI_ERR_UNSUPPORTED_OPERATION through COMM_WORLD's error handler, naming itself.
#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

namespace {
int Refuse(const char* function) {
  return rft::mpi::Raise(
      MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION,
      std::string(function) + " is not supported by rft's MPI layer (docs/mpi.md lists what is)");
}
}  // namespace

// Each definition takes the declared parameters and ignores them.
#define RFT_MPI_DECLARE(ret, name, params)                           \
  extern "C" ret PMPI_##name params { return Refuse("MPI_" #name); } \
  extern "C" __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "ulfm_api/mpi/mpi_refused.h"
#pragma GCC diagnostic pop
#undef RFT_MPI_DECLARE

// The link-time constants of mpi.h.
extern "C" {
static int unweighted_marker, weights_empty_marker;
int* const MPI_UNWEIGHTED = &unweighted_marker;
int* const MPI_WEIGHTS_EMPTY = &weights_empty_marker;
}
