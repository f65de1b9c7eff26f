// What the blocking and the non-blocking collectives share (mpi_coll.cc defines it): argument
// checks, packing around a call, the rank-order fold of reductions rft has no native form for,
// the byte layout of a "v" collective, and a request for a collective started in rft.
#ifndef RFT_ULFM_API_MPI_MPI_COLL_INTERNAL_H_
#define RFT_ULFM_API_MPI_MPI_COLL_INTERNAL_H_

#include <functional>
#include <memory>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi::coll {

// MPI_IN_PLACE as rft's RFT_IN_PLACE.
inline const void* ToRftSend(const void* send) {
  return send == MPI_IN_PLACE ? RFT_IN_PLACE : send;
}
// A buffer description: count >= 0, a committed type (*type_out). MPI_SUCCESS or what Raise gave.
int CheckData(MPI_Comm comm, int count, MPI_Datatype type, const char* function,
              const Datatype** type_out);
int CheckRoot(const Comm& c, int root, MPI_Comm comm, const char* function);
size_t Bytes(const Datatype& t, int count);
// The bytes `count` elements of `t` reach from the origin: past count * extent when the type was
// resized smaller than its data (a column resized to one element, as collectives lay it out).
MPI_Aint ElementsSpan(const Datatype& t, int count);
// `count` elements at `buffer` as contiguous bytes: the buffer itself, or packed into *scratch.
const void* Packed(const Datatype& t, const void* buffer, int count, std::vector<char>* scratch);
// Folds contributions `first`..`last` of `count` elements each (packed, `packed_bytes` apiece,
// member 0's first in `all`) in rank order into `out`, laid out as `t` says.
int Fold(MPI_Op op, MPI_Datatype type, const Datatype& t, int count, const char* all,
         size_t packed_bytes, int first, int last, void* out);
// The checks of a reduction; *c and *t set. `root` < 0 for the all-reductions.
int CheckReduction(MPI_Comm comm, Comm** c, int count, MPI_Datatype type, MPI_Op op, int root,
                   const char* function, const Datatype** t);

// The members a "v" collective's arrays have an entry for: the communicator's, or on an
// intercommunicator the remote group's.
inline int Members(const Comm& c) { return c.remote_size >= 0 ? c.remote_size : c.size; }

// Per-member counts and displacements (elements of a type) as rft's byte counts and byte
// displacements: of the caller's buffer when the type is contiguous (`direct`), else of a
// packed staging buffer of `staging_bytes`. One entry per member (Members).
struct VLayout {
  std::vector<size_t> counts;
  std::vector<size_t> displacements;
  size_t staging_bytes = 0;
  bool direct = true;
};
int MakeVLayout(const Comm& c, const Datatype& t, const int counts[], const int displs[],
                MPI_Comm comm, const char* function, VLayout* out);
void UnpackV(const Datatype& t, const VLayout& layout, const char* staging, const int counts[],
             const int displs[], int members, void* recv);
void PackV(const Datatype& t, const VLayout& layout, const void* send, const int counts[],
           const int displs[], int members, char* staging);
// `layout`'s blocks one after another in a staging buffer: an in-place all-to-all sends from a
// packed copy of its receive buffer, since rft overwrites that buffer while it still reads.
VLayout PackedLayout(const VLayout& layout);

// *request for a collective rft started as `inner` (`rc` its result), owning `scratch`, with
// `finish` run when it completes.
using Finish = std::function<int(Request&, const rft_status_t&)>;
int Started(MPI_Comm comm, int rc, rft_request_t inner, std::vector<char> scratch, Finish finish,
            MPI_Request* request, const char* function);

// The non-blocking "v" forms (mpi_coll_nonblocking_v.cc), also carrying the non-blocking gathers,
// scatters and all-to-alls of an intercommunicator (as "v" forms of equal counts). `function`
// names the MPI call in errors; Igatherv with `all` is Iallgatherv.
int IgathervCommon(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm, bool all, MPI_Request* request, const char* function);
int IscattervCommon(const void* sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request* request, const char* function);
int IalltoallvCommon(const void* sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request, const char* function);

// Staging in a request's scratch, for data of a non-contiguous type (mpi_coll_nonblocking.cc):
// room for `bytes` more at its end, and their offset. Pointers into the scratch are taken once it
// has all its parts, since it moves as it grows.
size_t Reserve(std::vector<char>* scratch, size_t bytes);
// A finish step that unpacks `elements` of `t` from the request's scratch at `at` into `recv`.
// The type is copied, since the program may free its handle before the collective completes;
// `layouts` (rft reads them until then) stay alive as long.
Finish UnpackAt(const Datatype& t, size_t at, size_t elements, void* recv,
                std::shared_ptr<std::vector<VLayout>> layouts = nullptr);

}  // namespace rft::mpi::coll

#endif  // RFT_ULFM_API_MPI_MPI_COLL_INTERNAL_H_
