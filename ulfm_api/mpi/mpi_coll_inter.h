// The collectives on intercommunicators (mpi_coll_inter.cc): the blocking collectives of
// mpi_coll.cc call these when the communicator is an intercommunicator (Comm::remote_size >= 0).
#ifndef RFT_ULFM_API_MPI_MPI_COLL_INTER_H_
#define RFT_ULFM_API_MPI_MPI_COLL_INTER_H_

#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi::coll {

// A rooted collective's root on an intercommunicator as rft's (RFT_ROOT, RFT_PROC_NULL, or the
// root's rank in the remote group): MPI_ERR_ROOT naming the value otherwise.
int InterRoot(const Comm& c, int root, MPI_Comm comm, const char* function, int* out);
// Who sends and who receives in a gather or a reduction on an intercommunicator: the other
// group's members send to the root; with `all` (allgather, allreduce) every member does both.
struct GatherRoles {
  bool sends = false;
  bool receives = false;
};
inline GatherRoles GatherRolesOf(int rft_root, bool all) {
  return {.sends = all || rft_root >= 0, .receives = all || rft_root == RFT_ROOT};
}
// A gather's or reduction's root as rft's (InterRoot; 0 for the `all` forms, which have none),
// and the caller's roles.
int InterGatherRoot(const Comm& c, int root, bool all, MPI_Comm comm, const char* function,
                    int* rft_root, GatherRoles* roles);
// MPI_ERR_ARG: MPI_IN_PLACE has no meaning on an intercommunicator.
int RefuseInPlace(MPI_Comm comm, const char* function);
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

// Pieces of different sizes (mpi_coll_inter_v.cc): the "v" and "w" forms, and blocks whose size
// differs between the groups. A piece is `count` elements of `type` at byte `at` of a buffer.
struct Piece {
  const Datatype* type = nullptr;
  int count = 0;
  MPI_Aint at = 0;
  size_t bytes = 0;
};
// One piece per remote member: counts[j] elements at displs[j] (or, with no displs, at j blocks
// of counts[j]). MPI_ERR_COUNT for a negative count.
int MakePieces(const Comm& c, const Datatype& t, const int counts[], const int displs[],
               MPI_Comm comm, const char* function, std::vector<Piece>* out);
// Gatherv (`all` false, to `rft_root`) or allgatherv: `mine` from `send`, `theirs` into `recv`.
int InterGatherv(Comm& c, const void* send, const Piece& mine, void* recv,
                 const std::vector<Piece>& theirs, int rft_root, bool all, MPI_Comm comm,
                 const char* function);
int InterScatterv(Comm& c, const void* send, const std::vector<Piece>& theirs, void* recv,
                  const Piece& mine, int rft_root, MPI_Comm comm, const char* function);
// Piece j of `to` goes to remote member j; piece j of `from` comes from it. With MPI_IN_PLACE as
// `send` (`to` empty) the call still takes part and fails, and so do its partners, naming it.
int InterAlltoallw(Comm& c, const void* send, const std::vector<Piece>& to, void* recv,
                   const std::vector<Piece>& from, MPI_Comm comm, const char* function);
// A reduction rft has no native form for: the remote group's contributions gathered where the
// result goes and folded in their rank order.
int InterFoldedReduce(Comm& c, const void* send, void* recv, int count, MPI_Datatype type,
                      const Datatype& t, MPI_Op op, int rft_root, bool all, MPI_Comm comm,
                      const char* function);

}  // namespace rft::mpi::coll

#endif  // RFT_ULFM_API_MPI_MPI_COLL_INTER_H_
