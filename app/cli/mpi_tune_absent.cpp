// Built when CMake finds no MPI (app/cli/CMakeLists.txt): `tessel tune` runs alone, and refuses to
// run as N copies under mpirun, which would each tune alone and append to the same log.
#include <cstdlib>

#include "app/cli/mpi_tune.h"
#include "core/support/error.h"

namespace tessel::cli {

std::unique_ptr<MpiTuneSession> MpiTuneSession::start_if_launched(double) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* size = std::getenv(name); size && std::atoi(size) > 1)
      throw Error(
          "tune: started by an MPI launcher, but this tessel was built without MPI (install libopenmpi-dev "
          "and configure again)");
  return nullptr;
}

}  // namespace tessel::cli
