// Non-blocking collectives: rft's non-blocking collectives with MPI's arguments, and a fold at
// completion for the reductions rft has no native form for.
#include <string.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"

using namespace rft::mpi;
using namespace rft::mpi::coll;

extern "C" {

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Ibarrier");
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ibarrier(c->rft, &inner);
  return Started(comm, rc, inner, {}, nullptr, request, "MPI_Ibarrier");
}

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Ibcast");
  const Datatype* t;
  if (int rc = CheckData(comm, count, datatype, "MPI_Ibcast", &t); rc) return rc;
  if (c->remote_size >= 0) [[unlikely]] {
    int rft_root = 0;
    if (int rc = InterRoot(*c, root, comm, "MPI_Ibcast", &rft_root); rc) return rc;
    if (!t->contiguous) return RefuseInter(comm, "MPI_Ibcast of a non-contiguous datatype");
    rft_request_t inner = RFT_REQUEST_NULL;
    const int rc = rft_ibcast(buffer, Bytes(*t, count), RFT_BYTE, rft_root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, "MPI_Ibcast");
  }
  if (int rc = CheckRoot(*c, root, comm, "MPI_Ibcast"); rc) return rc;
  rft_request_t inner = RFT_REQUEST_NULL;
  if (t->contiguous) {
    const int rc = rft_ibcast(buffer, Bytes(*t, count), RFT_BYTE, root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, "MPI_Ibcast");
  }
  std::vector<char> staging(Bytes(*t, count));
  if (c->rank == root) Pack(*t, buffer, static_cast<size_t>(count), staging.data());
  const int rc = rft_ibcast(staging.data(), staging.size(), RFT_BYTE, root, c->rft, &inner);
  const Datatype plan = *t;
  const bool receiver = c->rank != root;
  return Started(
      comm, rc, inner, std::move(staging),
      [plan, buffer, count, receiver](Request& self, const rft_status_t&) {
        if (receiver) Unpack(plan, self.scratch.data(), static_cast<size_t>(count), buffer);
        return MPI_SUCCESS;
      },
      request, "MPI_Ibcast");
}

// IreduceCommon's root for the all-reductions (MPI_PROC_NULL and MPI_ROOT are roots of an
// intercommunicator's reduce).
constexpr int kAllRoot = INT_MIN;

static int IreduceCommon(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, int root, MPI_Comm comm, MPI_Request* request,
                         const char* function) {
  Comm* c;
  const Datatype* t;
  if (int rc = CheckReduction(comm, &c, count, datatype, op, root, function, &t); rc) return rc;
  rft_op_t rop;
  rft_datatype_t rtype;
  rft_request_t inner = RFT_REQUEST_NULL;
  if (c->remote_size >= 0) [[unlikely]] {
    int rft_root = 0;
    if (root != kAllRoot) {
      if (int rc = InterRoot(*c, root, comm, function, &rft_root); rc) return rc;
    }
    if (!t->contiguous || !RftReduction(op, datatype, &rop, &rtype)) {
      return RefuseInter(comm, (std::string(function) + " with an operator rft has no native form "
                                                        "for")
                                   .c_str());
    }
    const int rc =
        root == kAllRoot
            ? rft_iallreduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, c->rft, &inner)
            : rft_ireduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, rft_root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, function);
  }
  if (t->contiguous && RftReduction(op, datatype, &rop, &rtype)) {
    const int rc =
        root == kAllRoot
            ? rft_iallreduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, c->rft, &inner)
            : rft_ireduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, function);
  }
  // Folded: the contributions gathered by a non-blocking allgather (gather), folded when it
  // completes. The scratch holds this member's packed contribution, then everyone's.
  const size_t bytes = Bytes(*t, count);
  const bool here = root == kAllRoot || root == c->rank;
  std::vector<char> scratch(bytes * (1 + (here ? static_cast<size_t>(c->size) : 0)));
  const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Pack(*t, mine, static_cast<size_t>(count), scratch.data());
  char* all = scratch.data() + bytes;
  const int rc = root == kAllRoot
                     ? rft_iallgather(scratch.data(), bytes, RFT_BYTE, all, c->rft, &inner)
                     : rft_igather(scratch.data(), bytes, RFT_BYTE, here ? all : nullptr, root,
                                   c->rft, &inner);
  const Datatype plan = *t;
  const int members = c->size;
  return Started(
      comm, rc, inner, std::move(scratch),
      [=](Request& self, const rft_status_t&) {
        if (!here || count == 0) return MPI_SUCCESS;
        return Fold(op, datatype, plan, count, self.scratch.data() + bytes, bytes, 0, members - 1,
                    recvbuf);
      },
      request, function);
}

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  return IreduceCommon(sendbuf, recvbuf, count, datatype, op, kAllRoot, comm, request,
                       "MPI_Iallreduce");
}

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
  if (root < 0) {
    Comm* c = FindComm(comm);
    if (c == nullptr) return BadComm(comm, "MPI_Ireduce");
    if (c->remote_size < 0) return CheckRoot(*c, root, comm, "MPI_Ireduce");
  }
  return IreduceCommon(sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce");
}

// The non-blocking gathers and scatters carry contiguous data of one size on both sides (the
// common case); other layouts are refused with a message naming the call, for now.
static int ContiguousPair(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          const void* recvbuf, int recvcount, MPI_Datatype recvtype, bool send_used,
                          bool recv_used, size_t* block, const char* function) {
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  if (send_used && sendbuf != MPI_IN_PLACE) {
    if (int rc = CheckData(comm, sendcount, sendtype, function, &st); rc) return rc;
  }
  if (recv_used && recvbuf != MPI_IN_PLACE) {
    if (int rc = CheckData(comm, recvcount, recvtype, function, &rt); rc) return rc;
  }
  if ((st != nullptr && !st->contiguous) || (rt != nullptr && !rt->contiguous)) {
    return Raise(comm, MPI_ERR_UNSUPPORTED_OPERATION,
                 std::string(function) +
                     ": non-contiguous datatypes are not carried by the non-blocking form yet "
                     "(the blocking form carries them)");
  }
  *block = st != nullptr ? Bytes(*st, sendcount) : (rt != nullptr ? Bytes(*rt, recvcount) : 0);
  return MPI_SUCCESS;
}

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Igather");
  int rft_root = root;
  bool sends = true, receives = c->rank == root;
  if (c->remote_size >= 0) [[unlikely]] {
    if (int rc = InterRoot(*c, root, comm, "MPI_Igather", &rft_root); rc) return rc;
    sends = rft_root >= 0;
    receives = rft_root == RFT_ROOT;
  } else if (int rc = CheckRoot(*c, root, comm, "MPI_Igather"); rc) {
    return rc;
  }
  size_t block = 0;
  if (int rc = ContiguousPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              sends, receives, &block, "MPI_Igather");
      rc) {
    return rc;
  }
  root = rft_root;
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_igather(ToRftSend(sendbuf), block, RFT_BYTE, recvbuf, root, c->rft, &inner);
  return Started(comm, rc, inner, {}, nullptr, request, "MPI_Igather");
}

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iscatter");
  int rft_root = root;
  bool sends = c->rank == root, receives = true;
  if (c->remote_size >= 0) [[unlikely]] {
    if (int rc = InterRoot(*c, root, comm, "MPI_Iscatter", &rft_root); rc) return rc;
    sends = rft_root == RFT_ROOT;
    receives = rft_root >= 0;
  } else if (int rc = CheckRoot(*c, root, comm, "MPI_Iscatter"); rc) {
    return rc;
  }
  size_t block = 0;
  if (int rc = ContiguousPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              sends, receives, &block, "MPI_Iscatter");
      rc) {
    return rc;
  }
  root = rft_root;
  std::vector<char> scratch;
  void* into = recvbuf;
  if (recvbuf == MPI_IN_PLACE) {
    scratch.resize(block);
    into = scratch.data();
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iscatter(sendbuf, into, block, RFT_BYTE, root, c->rft, &inner);
  return Started(comm, rc, inner, std::move(scratch), nullptr, request, "MPI_Iscatter");
}

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iallgather");
  size_t block;
  if (int rc = ContiguousPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              true, true, &block, "MPI_Iallgather");
      rc) {
    return rc;
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iallgather(ToRftSend(sendbuf), block, RFT_BYTE, recvbuf, c->rft, &inner);
  return Started(comm, rc, inner, {}, nullptr, request, "MPI_Iallgather");
}

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Ialltoall");
  if (c->remote_size >= 0 && sendbuf == MPI_IN_PLACE) [[unlikely]]
    return RefuseInter(comm, "MPI_Ialltoall with MPI_IN_PLACE");
  size_t block;
  if (int rc = ContiguousPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              true, true, &block, "MPI_Ialltoall");
      rc) {
    return rc;
  }
  std::vector<char> scratch;
  const void* from = sendbuf;
  if (sendbuf == MPI_IN_PLACE) {
    scratch.assign(static_cast<const char*>(recvbuf),
                   static_cast<const char*>(recvbuf) + block * static_cast<size_t>(c->size));
    from = scratch.data();
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ialltoall(from, block, RFT_BYTE, recvbuf, c->rft, &inner);
  return Started(comm, rc, inner, std::move(scratch), nullptr, request, "MPI_Ialltoall");
}

// The non-blocking "v" forms: rft reads the byte layout until the collective completes, so it
// lives in the request (a shared owner the finish step holds).
static int VStarted(MPI_Comm comm, int rc, rft_request_t inner,
                    const std::shared_ptr<std::vector<VLayout>>& layouts, MPI_Request* request,
                    const char* function) {
  return Started(
      comm, rc, inner, {}, [layouts](Request&, const rft_status_t&) { return MPI_SUCCESS; },
      request, function);
}

// A contiguous type for a non-blocking "v" form (packing around it is not carried yet).
static int ContiguousV(MPI_Comm comm, MPI_Datatype type, const char* function, const Datatype** t) {
  if (int rc = CheckData(comm, 0, type, function, t); rc) return rc;
  if ((*t)->contiguous) return MPI_SUCCESS;
  return Raise(comm, MPI_ERR_UNSUPPORTED_OPERATION,
               std::string(function) +
                   ": non-contiguous datatypes are not carried by the non-blocking form yet "
                   "(the blocking form carries them)");
}

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Igatherv");
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, "MPI_Igatherv");
  if (int rc = CheckRoot(*c, root, comm, "MPI_Igatherv"); rc) return rc;
  const bool receiver = c->rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE && receiver;
  auto layouts = std::make_shared<std::vector<VLayout>>(1);
  const Datatype* t = nullptr;
  if (receiver) {
    if (int rc = ContiguousV(comm, recvtype, "MPI_Igatherv", &t); rc) return rc;
    if (int rc = MakeVLayout(*c, *t, recvcounts, displs, comm, "MPI_Igatherv", &(*layouts)[0]);
        rc) {
      return rc;
    }
  }
  size_t my_bytes = in_place ? (*layouts)[0].counts[c->rank] : 0;
  if (!in_place) {
    const Datatype* st;
    if (int rc = ContiguousV(comm, sendtype, "MPI_Igatherv", &st); rc) return rc;
    if (int rc = CheckCountArg(sendcount, "MPI_Igatherv", comm); rc) return rc;
    my_bytes = Bytes(*st, sendcount);
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const VLayout& l = (*layouts)[0];
  const int rc = rft_igatherv(ToRftSend(sendbuf), my_bytes, RFT_BYTE, recvbuf,
                              receiver ? l.counts.data() : nullptr,
                              receiver ? l.displacements.data() : nullptr, root, c->rft, &inner);
  return VStarted(comm, rc, inner, layouts, request, "MPI_Igatherv");
}

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iscatterv");
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, "MPI_Iscatterv");
  if (int rc = CheckRoot(*c, root, comm, "MPI_Iscatterv"); rc) return rc;
  const bool sender = c->rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE && sender;
  auto layouts = std::make_shared<std::vector<VLayout>>(1);
  const Datatype* t = nullptr;
  if (sender) {
    if (int rc = ContiguousV(comm, sendtype, "MPI_Iscatterv", &t); rc) return rc;
    if (int rc = MakeVLayout(*c, *t, sendcounts, displs, comm, "MPI_Iscatterv", &(*layouts)[0]);
        rc) {
      return rc;
    }
  }
  const VLayout& l = (*layouts)[0];
  size_t my_bytes = in_place ? l.counts[c->rank] : 0;
  std::vector<char> scratch;
  void* into = recvbuf;
  if (in_place) {
    scratch.resize(my_bytes);  // rft has no in-place scatter: the root's block lands here
    into = scratch.data();
  } else {
    const Datatype* rt;
    if (int rc = ContiguousV(comm, recvtype, "MPI_Iscatterv", &rt); rc) return rc;
    if (int rc = CheckCountArg(recvcount, "MPI_Iscatterv", comm); rc) return rc;
    my_bytes = Bytes(*rt, recvcount);
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iscatterv(sendbuf, sender ? l.counts.data() : nullptr,
                               sender ? l.displacements.data() : nullptr, into, my_bytes, RFT_BYTE,
                               root, c->rft, &inner);
  return Started(
      comm, rc, inner, std::move(scratch),
      [layouts](Request&, const rft_status_t&) { return MPI_SUCCESS; }, request, "MPI_Iscatterv");
}

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iallgatherv");
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, "MPI_Iallgatherv");
  auto layouts = std::make_shared<std::vector<VLayout>>(1);
  const Datatype* t;
  if (int rc = ContiguousV(comm, recvtype, "MPI_Iallgatherv", &t); rc) return rc;
  if (int rc = MakeVLayout(*c, *t, recvcounts, displs, comm, "MPI_Iallgatherv", &(*layouts)[0]);
      rc) {
    return rc;
  }
  const VLayout& l = (*layouts)[0];
  size_t my_bytes = l.counts[c->rank];
  if (sendbuf != MPI_IN_PLACE) {
    const Datatype* st;
    if (int rc = ContiguousV(comm, sendtype, "MPI_Iallgatherv", &st); rc) return rc;
    if (int rc = CheckCountArg(sendcount, "MPI_Iallgatherv", comm); rc) return rc;
    my_bytes = Bytes(*st, sendcount);
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iallgatherv(ToRftSend(sendbuf), my_bytes, RFT_BYTE, recvbuf, l.counts.data(),
                                 l.displacements.data(), c->rft, &inner);
  return VStarted(comm, rc, inner, layouts, request, "MPI_Iallgatherv");
}

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Ialltoallv");
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, "MPI_Ialltoallv");
  auto layouts = std::make_shared<std::vector<VLayout>>(2);
  const Datatype* rt;
  if (int rc = ContiguousV(comm, recvtype, "MPI_Ialltoallv", &rt); rc) return rc;
  if (int rc = MakeVLayout(*c, *rt, recvcounts, rdispls, comm, "MPI_Ialltoallv", &(*layouts)[1]);
      rc) {
    return rc;
  }
  std::vector<char> scratch;
  const void* from = sendbuf;
  if (sendbuf == MPI_IN_PLACE) {
    // The receive layout is the send layout, sent from a copy.
    (*layouts)[0] = (*layouts)[1];
    const VLayout& r = (*layouts)[1];
    size_t end = 0;
    for (int m = 0; m < c->size; ++m) end = std::max(end, r.displacements[m] + r.counts[m]);
    scratch.assign(static_cast<const char*>(recvbuf), static_cast<const char*>(recvbuf) + end);
    from = scratch.data();
  } else {
    const Datatype* st;
    if (int rc = ContiguousV(comm, sendtype, "MPI_Ialltoallv", &st); rc) return rc;
    if (int rc = MakeVLayout(*c, *st, sendcounts, sdispls, comm, "MPI_Ialltoallv", &(*layouts)[0]);
        rc) {
      return rc;
    }
  }
  const VLayout& s = (*layouts)[0];
  const VLayout& r = (*layouts)[1];
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ialltoallv(from, s.counts.data(), s.displacements.data(), recvbuf,
                                r.counts.data(), r.displacements.data(), RFT_BYTE, c->rft, &inner);
  return Started(
      comm, rc, inner, std::move(scratch),
      [layouts](Request&, const rft_status_t&) { return MPI_SUCCESS; }, request, "MPI_Ialltoallv");
}

// Scans and the block reduce-scatter, non-blocking: every member's contribution gathered by a
// non-blocking allgather, folded in rank order when it completes (as the blocking scans are).
enum class Folded { kScan, kExscan, kScatterBlock };
static int IfoldCommon(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Request* request, Folded kind,
                       const char* function) {
  Comm* c;
  const Datatype* t;
  if (int rc = CheckReduction(comm, &c, count, datatype, op, -1, function, &t); rc) return rc;
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, function);
  // Reduce_scatter_block: each member contributes `count` elements per member.
  const int contributed = kind == Folded::kScatterBlock ? count * c->size : count;
  const size_t bytes = Bytes(*t, contributed);
  std::vector<char> scratch(bytes * (1 + static_cast<size_t>(c->size)));
  Pack(*t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, static_cast<size_t>(contributed),
       scratch.data());
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc =
      rft_iallgather(scratch.data(), bytes, RFT_BYTE, scratch.data() + bytes, c->rft, &inner);
  const Datatype plan = *t;
  const int rank = c->rank;
  const int members = c->size;
  return Started(
      comm, rc, inner, std::move(scratch),
      [=](Request& self, const rft_status_t&) {
        const char* all = self.scratch.data() + bytes;
        if (kind == Folded::kScatterBlock) {
          // The whole reduction, then this member's block of it.
          const MPI_Aint base = std::min<MPI_Aint>(0, plan.true_lb);
          std::vector<char> result(static_cast<size_t>(ElementsSpan(plan, contributed) - base) + 1);
          const int folded = Fold(op, datatype, plan, contributed, all, bytes, 0, members - 1,
                                  result.data() - base);
          if (folded != MPI_SUCCESS) return folded;
          std::vector<char> packed(Bytes(plan, count));
          Pack(plan, result.data() - base + static_cast<MPI_Aint>(rank) * count * plan.extent,
               static_cast<size_t>(count), packed.data());
          Unpack(plan, packed.data(), static_cast<size_t>(count), recvbuf);
          return MPI_SUCCESS;
        }
        const int last = kind == Folded::kExscan ? rank - 1 : rank;
        if (last < 0 || count == 0) return MPI_SUCCESS;  // Exscan: rank 0's is undefined
        return Fold(op, datatype, plan, count, all, bytes, 0, last, recvbuf);
      },
      request, function);
}

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  return IfoldCommon(sendbuf, recvbuf, recvcount, datatype, op, comm, request,
                     Folded::kScatterBlock, "MPI_Ireduce_scatter_block");
}

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  return IfoldCommon(sendbuf, recvbuf, count, datatype, op, comm, request, Folded::kScan,
                     "MPI_Iscan");
}

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  return IfoldCommon(sendbuf, recvbuf, count, datatype, op, comm, request, Folded::kExscan,
                     "MPI_Iexscan");
}

}  // extern "C"

RFT_MPI_ALIAS(Ibarrier)
RFT_MPI_ALIAS(Ibcast)
RFT_MPI_ALIAS(Iallreduce)
RFT_MPI_ALIAS(Ireduce)
RFT_MPI_ALIAS(Igather)
RFT_MPI_ALIAS(Iscatter)
RFT_MPI_ALIAS(Iallgather)
RFT_MPI_ALIAS(Ialltoall)
RFT_MPI_ALIAS(Igatherv)
RFT_MPI_ALIAS(Iscatterv)
RFT_MPI_ALIAS(Iallgatherv)
RFT_MPI_ALIAS(Ialltoallv)
RFT_MPI_ALIAS(Ireduce_scatter_block)
RFT_MPI_ALIAS(Iscan)
RFT_MPI_ALIAS(Iexscan)
