// MPI_Alltoallw and MPI_Ialltoallw (MPI-4.1 §6.8): a count, a type and a byte displacement per
// member on each side (on an intercommunicator, per member of the remote group), carried by rft's
// all-to-all of bytes. On an intercommunicator the blocking form sends each piece in a frame
// (mpi_coll_inter_v.cc). A side whose
// types are all contiguous goes from (or into) the caller's buffer as it is; any other is staged,
// every member's block packed (unpacked) with its own type.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"

using namespace rft::mpi;
using namespace rft::mpi::coll;

namespace {

// One side of the exchange: the caller's description, and its byte layout for rft.
struct WSide {
  std::vector<int> counts;
  std::vector<MPI_Aint> displs;  // bytes from the caller's buffer
  // Copies: the non-blocking form unpacks after the program may have freed its handles.
  std::vector<Datatype> types;
  VLayout layout;
};

// Checks and lays out one side. A member's type is read only when its count is positive, as the
// MPICH family does: programs pass MPI_DATATYPE_NULL for the members they exchange nothing with.
int MakeWSide(const Comm& c, const int counts[], const int displs[], const MPI_Datatype types[],
              MPI_Comm comm, const char* function, const char* side, WSide* out) {
  const size_t members = static_cast<size_t>(Members(c));
  out->counts.assign(counts, counts + members);
  out->displs.assign(displs, displs + members);
  out->types.assign(members, Datatype{});
  VLayout& l = out->layout;
  l.counts.assign(members, 0);
  l.displacements.assign(members, 0);
  l.direct = true;
  for (size_t r = 0; r < members; ++r) {
    if (counts[r] < 0) {
      return Raise(comm, MPI_ERR_COUNT,
                   std::string(function) + ": member " + std::to_string(r) + "'s " + side +
                       " count " + std::to_string(counts[r]) + ": expected >= 0");
    }
    if (counts[r] == 0) continue;
    const Datatype* t;
    if (int rc = CheckData(comm, counts[r], types[r], function, &t); rc) return rc;
    out->types[r] = *t;
    l.counts[r] = Bytes(*t, counts[r]);
    // rft takes displacements as unsigned byte offsets from one buffer.
    if (!t->contiguous || displs[r] < 0) l.direct = false;
  }
  size_t packed_at = 0;
  for (size_t r = 0; r < members; ++r) {
    l.displacements[r] = !l.direct ? packed_at : counts[r] > 0 ? static_cast<size_t>(displs[r]) : 0;
    packed_at += l.counts[r];
  }
  l.staging_bytes = packed_at;
  return MPI_SUCCESS;
}

void PackW(const WSide& s, const void* buffer, char* staging) {
  for (size_t r = 0; r < s.counts.size(); ++r) {
    if (s.counts[r] == 0) continue;
    Pack(s.types[r], static_cast<const char*>(buffer) + s.displs[r],
         static_cast<size_t>(s.counts[r]), staging + s.layout.displacements[r]);
  }
}

void UnpackW(const WSide& s, const char* staging, void* buffer) {
  for (size_t r = 0; r < s.counts.size(); ++r) {
    if (s.counts[r] == 0) continue;
    Unpack(s.types[r], staging + s.layout.displacements[r], static_cast<size_t>(s.counts[r]),
           static_cast<char*>(buffer) + s.displs[r]);
  }
}

// One side of the blocking form on an intercommunicator as pieces (mpi_coll_inter.h); the
// types are copied into `types`, which outlives the pieces.
int MakeWPieces(const Comm& c, const int counts[], const int displs[], const MPI_Datatype types[],
                MPI_Comm comm, const char* function, std::vector<Datatype>* kept,
                std::vector<Piece>* out) {
  const size_t members = static_cast<size_t>(c.remote_size);
  kept->assign(members, Datatype{});
  out->assign(members, Piece{});
  for (size_t j = 0; j < members; ++j) {
    if (counts[j] < 0) {
      return Raise(comm, MPI_ERR_COUNT,
                   std::string(function) + ": remote member " + std::to_string(j) + "'s count " +
                       std::to_string(counts[j]) + ": expected >= 0");
    }
    if (counts[j] == 0) continue;  // its type is not read (MPI_DATATYPE_NULL is common)
    const Datatype* t;
    if (int rc = CheckData(comm, counts[j], types[j], function, &t); rc) return rc;
    (*kept)[j] = *t;
    (*out)[j] = Piece{&(*kept)[j], counts[j], displs[j], Bytes(*t, counts[j])};
  }
  return MPI_SUCCESS;
}

int InterAlltoallwArgs(Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       const char* function) {
  std::vector<Datatype> send_types, recv_types;
  std::vector<Piece> to, from;
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = MakeWPieces(c, sendcounts, sdispls, sendtypes, comm, function, &send_types, &to);
        rc) {
      return rc;
    }
  }
  if (int rc = MakeWPieces(c, recvcounts, rdispls, recvtypes, comm, function, &recv_types, &from);
      rc) {
    return rc;
  }
  return InterAlltoallw(c, sendbuf, to, recvbuf, from, comm, function);
}

// The blocking form when `request` is null, else the non-blocking one.
int AlltoallwCommon(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  if (c->remote_size >= 0) [[unlikely]] {
    if (request == nullptr) {
      return InterAlltoallwArgs(*c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm, function);
    }
    // The non-blocking form: rft's intercommunicator all-to-all "v" (mpi_coll_nonblocking_v.cc).
    if (sendbuf == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  }
  // Shared with the finish step: rft reads the layouts until the exchange completes.
  auto sides = std::make_shared<std::array<WSide, 2>>();
  WSide& s = (*sides)[0];
  WSide& r = (*sides)[1];
  if (int rc = MakeWSide(*c, recvcounts, rdispls, recvtypes, comm, function, "receive", &r); rc) {
    return rc;
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {
    // Sent from a packed copy of the receive buffer, which rft overwrites while it reads.
    s = r;
    s.layout = PackedLayout(r.layout);
  } else if (int rc = MakeWSide(*c, sendcounts, sdispls, sendtypes, comm, function, "send", &s);
             rc) {
    return rc;
  }
  std::vector<char> scratch;
  const size_t send_at = s.layout.direct ? 0 : Reserve(&scratch, s.layout.staging_bytes);
  const size_t recv_at = r.layout.direct ? 0 : Reserve(&scratch, r.layout.staging_bytes);
  const void* from = sendbuf;
  if (!s.layout.direct) {
    PackW(s, in_place ? recvbuf : sendbuf, scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = r.layout.direct ? recvbuf : scratch.data() + recv_at;
  if (request == nullptr) {
    const int rc =
        rft_alltoallv(from, s.layout.counts.data(), s.layout.displacements.data(), into,
                      r.layout.counts.data(), r.layout.displacements.data(), RFT_BYTE, c->rft);
    if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
    if (!r.layout.direct) UnpackW(r, scratch.data() + recv_at, recvbuf);
    return MPI_SUCCESS;
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ialltoallv(from, s.layout.counts.data(), s.layout.displacements.data(), into,
                                r.layout.counts.data(), r.layout.displacements.data(), RFT_BYTE,
                                c->rft, &inner);
  return Started(
      comm, rc, inner, std::move(scratch),
      [sides, recv_at, recvbuf](Request& self, const rft_status_t&) {
        const WSide& received = (*sides)[1];
        if (!received.layout.direct) UnpackW(received, self.scratch.data() + recv_at, recvbuf);
        return MPI_SUCCESS;
      },
      request, function);
}

}  // namespace

extern "C" {

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return AlltoallwCommon(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, nullptr, "MPI_Alltoallw");
}

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  return AlltoallwCommon(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, request, "MPI_Ialltoallw");
}

}  // extern "C"

RFT_MPI_ALIAS(Alltoallw)
RFT_MPI_ALIAS(Ialltoallw)
