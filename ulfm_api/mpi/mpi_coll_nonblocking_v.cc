// The non-blocking "v" collectives. rft reads the byte layout until the collective completes, so
// it lives in the request (a shared owner the finish step holds). Data of a non-contiguous type is
// staged in the request as the blocking forms stage it: packed at the call, unpacked when the
// collective completes.
//
// On an intercommunicator the layouts have one entry per member of the remote group and rft's
// intercommunicator "v" forms carry the blocks straight between the members they concern; the
// root arguments are MPI_ROOT, MPI_PROC_NULL or the root's rank in the remote group. MPI_IN_PLACE
// has no meaning there and is refused at the call (MPI_ERR_ARG). Unlike the blocking forms
// (mpi_coll_inter_v.cc), which agree on a frame size first and so detect every count mismatch
// and fail a refused member's partners too, these take one step: a block longer than its
// receive count is MPI_ERR_TRUNCATE at the receiver, a shorter one is not detected.
#include <memory>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"

using namespace rft::mpi;
using namespace rft::mpi::coll;

namespace {

// The layouts kept alive until the collective completes.
Finish KeepLayouts(std::shared_ptr<std::vector<VLayout>> layouts) {
  return [layouts](Request&, const rft_status_t&) { return MPI_SUCCESS; };
}

// A finish step that unpacks the blocks of a "v" form, laid out as (*layouts)[which] says, from
// the request's scratch at `at`. The type, counts and displacements are copied: the program may
// free or reuse them before the collective completes.
Finish UnpackVAt(const Datatype& t, std::shared_ptr<std::vector<VLayout>> layouts, int which,
                 size_t at, const int counts[], const int displs[], int members, void* recv) {
  return [plan = t, layouts, which, at, counts_copy = std::vector<int>(counts, counts + members),
          displs_copy = std::vector<int>(displs, displs + members),
          recv](Request& self, const rft_status_t&) {
    UnpackV(plan, (*layouts)[which], self.scratch.data() + at, counts_copy.data(),
            displs_copy.data(), static_cast<int>(counts_copy.size()), recv);
    return MPI_SUCCESS;
  };
}

}  // namespace

namespace rft::mpi::coll {

int IgathervCommon(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm, bool all, MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  const bool inter = c->remote_size >= 0;
  int rft_root = root;
  bool receiver = all || c->rank == root;
  bool sender = true;
  if (inter) [[unlikely]] {
    GatherRoles roles;
    if (int rc = InterGatherRoot(*c, root, all, comm, function, &rft_root, &roles); rc) return rc;
    receiver = roles.receives;
    sender = roles.sends;
    if (sender && sendbuf == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  } else if (!all) {
    if (int rc = CheckRoot(*c, root, comm, function); rc) return rc;
  }
  const bool in_place = !inter && sendbuf == MPI_IN_PLACE && receiver;
  auto layouts = std::make_shared<std::vector<VLayout>>(1);
  VLayout& l = (*layouts)[0];
  const Datatype* rt = nullptr;
  const Datatype* st = nullptr;
  if (receiver) {
    if (int rc = CheckData(comm, 0, recvtype, function, &rt); rc) return rc;
    if (int rc = MakeVLayout(*c, *rt, recvcounts, displs, comm, function, &l); rc) return rc;
  }
  size_t my_bytes = in_place ? l.counts[c->rank] : 0;
  if (!in_place && sender) {
    if (int rc = CheckData(comm, sendcount, sendtype, function, &st); rc) return rc;
    my_bytes = Bytes(*st, sendcount);
  }
  const bool pack = st != nullptr && !st->contiguous;
  const bool unpack = receiver && !l.direct;
  std::vector<char> scratch;
  const size_t send_at = pack ? Reserve(&scratch, my_bytes) : 0;
  const size_t recv_at = unpack ? Reserve(&scratch, l.staging_bytes) : 0;
  const void* from = ToRftSend(sendbuf);
  if (pack) {
    Pack(*st, sendbuf, static_cast<size_t>(sendcount), scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = unpack ? scratch.data() + recv_at : recvbuf;
  if (unpack && in_place) {
    Pack(*rt, static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(displs[c->rank]) * rt->extent,
         static_cast<size_t>(recvcounts[c->rank]),
         static_cast<char*>(into) + l.displacements[c->rank]);
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc =
      all ? rft_iallgatherv(from, my_bytes, RFT_BYTE, into, l.counts.data(), l.displacements.data(),
                            c->rft, &inner)
          : rft_igatherv(from, my_bytes, RFT_BYTE, into, receiver ? l.counts.data() : nullptr,
                         receiver ? l.displacements.data() : nullptr, rft_root, c->rft, &inner);
  Finish finish =
      unpack ? UnpackVAt(*rt, layouts, 0, recv_at, recvcounts, displs, Members(*c), recvbuf)
             : KeepLayouts(layouts);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, function);
}

int IscattervCommon(const void* sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  const bool inter = c->remote_size >= 0;
  int rft_root = root;
  bool sender = c->rank == root;
  bool receiver = true;
  if (inter) [[unlikely]] {
    if (int rc = InterRoot(*c, root, comm, function, &rft_root); rc) return rc;
    sender = rft_root == RFT_ROOT;
    receiver = rft_root >= 0;
    if (receiver && recvbuf == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  } else if (int rc = CheckRoot(*c, root, comm, function); rc) {
    return rc;
  }
  const bool in_place = !inter && recvbuf == MPI_IN_PLACE && sender;
  auto layouts = std::make_shared<std::vector<VLayout>>(1);
  VLayout& l = (*layouts)[0];
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  if (sender) {
    if (int rc = CheckData(comm, 0, sendtype, function, &st); rc) return rc;
    if (int rc = MakeVLayout(*c, *st, sendcounts, displs, comm, function, &l); rc) {
      return rc;
    }
  }
  size_t my_bytes = in_place ? l.counts[c->rank] : 0;
  if (!in_place && receiver) {
    if (int rc = CheckData(comm, recvcount, recvtype, function, &rt); rc) return rc;
    my_bytes = Bytes(*rt, recvcount);
  }
  const bool pack = sender && !l.direct;
  const bool unpack = rt != nullptr && !rt->contiguous;
  std::vector<char> scratch;
  const size_t send_at = pack ? Reserve(&scratch, l.staging_bytes) : 0;
  // In place, the root's block lands in the scratch: rft has no in-place scatter.
  const size_t recv_at = unpack || in_place ? Reserve(&scratch, my_bytes) : 0;
  const void* from = sendbuf;
  if (pack) {
    PackV(*st, l, sendbuf, sendcounts, displs, Members(*c), scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = unpack || in_place ? scratch.data() + recv_at : recvbuf;
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iscatterv(from, sender ? l.counts.data() : nullptr,
                               sender ? l.displacements.data() : nullptr, into, my_bytes, RFT_BYTE,
                               rft_root, c->rft, &inner);
  Finish finish = unpack ? UnpackAt(*rt, recv_at, static_cast<size_t>(recvcount), recvbuf, layouts)
                         : KeepLayouts(layouts);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, function);
}

int IalltoallvCommon(const void* sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  if (c->remote_size >= 0 && sendbuf == MPI_IN_PLACE) [[unlikely]]
    return RefuseInPlace(comm, function);
  auto layouts = std::make_shared<std::vector<VLayout>>(2);
  VLayout& s = (*layouts)[0];
  VLayout& r = (*layouts)[1];
  const Datatype* rt;
  if (int rc = CheckData(comm, 0, recvtype, function, &rt); rc) return rc;
  if (int rc = MakeVLayout(*c, *rt, recvcounts, rdispls, comm, function, &r); rc) {
    return rc;
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Datatype* st = rt;
  if (in_place) {
    // Sent from a packed copy of the receive buffer, which rft overwrites while it reads.
    s = PackedLayout(r);
  } else {
    if (int rc = CheckData(comm, 0, sendtype, function, &st); rc) return rc;
    if (int rc = MakeVLayout(*c, *st, sendcounts, sdispls, comm, function, &s); rc) {
      return rc;
    }
  }
  std::vector<char> scratch;
  const size_t send_at = s.direct ? 0 : Reserve(&scratch, s.staging_bytes);
  const size_t recv_at = r.direct ? 0 : Reserve(&scratch, r.staging_bytes);
  const void* from = sendbuf;
  if (!s.direct) {
    PackV(*st, s, in_place ? recvbuf : sendbuf, in_place ? recvcounts : sendcounts,
          in_place ? rdispls : sdispls, Members(*c), scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = r.direct ? recvbuf : scratch.data() + recv_at;
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ialltoallv(from, s.counts.data(), s.displacements.data(), into,
                                r.counts.data(), r.displacements.data(), RFT_BYTE, c->rft, &inner);
  Finish finish =
      r.direct ? KeepLayouts(layouts)
               : UnpackVAt(*rt, layouts, 1, recv_at, recvcounts, rdispls, Members(*c), recvbuf);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, function);
}

}  // namespace rft::mpi::coll

extern "C" {

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return IgathervCommon(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, false, request, "MPI_Igatherv");
}

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  return IgathervCommon(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0,
                        comm, true, request, "MPI_Iallgatherv");
}

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  return IscattervCommon(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request, "MPI_Iscatterv");
}

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return IalltoallvCommon(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request, "MPI_Ialltoallv");
}

}  // extern "C"

RFT_MPI_ALIAS(Igatherv)
RFT_MPI_ALIAS(Iscatterv)
RFT_MPI_ALIAS(Iallgatherv)
RFT_MPI_ALIAS(Ialltoallv)
