// Built when RELPOS_MPI is off (the default): there is no MPI communicator to start.
#include "experiments/train/distributed.hpp"

namespace relpos {

std::unique_ptr<Communicator> start_mpi() { return nullptr; }

}  // namespace relpos
