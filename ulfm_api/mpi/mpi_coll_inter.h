// The collectives on intercommunicators (mpi_coll_inter.cc): the blocking collectives of
// mpi_coll.cc call these when the communicator is an intercommunicator (Comm::remote_size >= 0).
#ifndef RFT_ULFM_API_MPI_MPI_COLL_INTER_H_
#define RFT_ULFM_API_MPI_MPI_COLL_INTER_H_

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi::coll {

// A rooted collective's root on an intercommunicator as rft's (RFT_ROOT, RFT_PROC_NULL, or the
// root's rank in the remote group): MPI_ERR_ROOT naming the value otherwise.
int InterRoot(const Comm& c, int root, MPI_Comm comm, const char* function, int* out);
int InterBcast(Comm& c, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
// Reduce (`all` false, to `root`) or allreduce.
int InterReduce(Comm& c, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                int root, bool all, MPI_Comm comm, const char* function);
// Gather (`all` false, to `root`) or allgather.
int InterGather(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                int recv_count, MPI_Datatype recv_type, int root, bool all, MPI_Comm comm,
                const char* function);
int InterScatter(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm);
int InterAlltoall(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                  int recv_count, MPI_Datatype recv_type, MPI_Comm comm);
// MPI_ERR_COMM: `function` is not carried on an intercommunicator.
int RefuseInter(MPI_Comm comm, const char* function);

}  // namespace rft::mpi::coll

#endif  // RFT_ULFM_API_MPI_MPI_COLL_INTER_H_
