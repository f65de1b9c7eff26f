// Non-blocking collectives: rft's non-blocking collectives with MPI's arguments, and a fold at
// completion for the reductions rft has no native form for. Data of a non-contiguous type is
// staged in the request: packed at the call, unpacked when the collective completes. The "v"
// forms are in mpi_coll_nonblocking_v.cc, and so are, through them, an intercommunicator's
// gathers, scatters and all-to-alls. On an intercommunicator every collective but the scans
// (which MPI does not define there) has its non-blocking form.
#include <string.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"

namespace rft::mpi::coll {

size_t Reserve(std::vector<char>* scratch, size_t bytes) {
  const size_t at = scratch->size();
  scratch->resize(at + bytes);
  return at;
}

Finish UnpackAt(const Datatype& t, size_t at, size_t elements, void* recv,
                std::shared_ptr<std::vector<VLayout>> layouts) {
  return [plan = t, at, elements, recv, layouts](Request& self, const rft_status_t&) {
    Unpack(plan, self.scratch.data() + at, elements, recv);
    return MPI_SUCCESS;
  };
}

}  // namespace rft::mpi::coll

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
  // On an intercommunicator the root is rft's (MPI_ROOT, MPI_PROC_NULL or a remote rank): the
  // root sends, the remote group receives, the root's group's others take no part.
  int rft_root = root;
  bool sender = c->rank == root;
  bool receiver = !sender;
  if (c->remote_size >= 0) [[unlikely]] {
    if (int rc = InterRoot(*c, root, comm, "MPI_Ibcast", &rft_root); rc) return rc;
    sender = rft_root == RFT_ROOT;
    receiver = rft_root >= 0;
  } else if (int rc = CheckRoot(*c, root, comm, "MPI_Ibcast"); rc) {
    return rc;
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  if (t->contiguous) {
    const int rc = rft_ibcast(buffer, Bytes(*t, count), RFT_BYTE, rft_root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, "MPI_Ibcast");
  }
  std::vector<char> staging(Bytes(*t, count));
  if (sender) Pack(*t, buffer, static_cast<size_t>(count), staging.data());
  const int rc = rft_ibcast(staging.data(), staging.size(), RFT_BYTE, rft_root, c->rft, &inner);
  const Datatype plan = *t;
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
  // On an intercommunicator the root is rft's (MPI_ROOT, MPI_PROC_NULL or a remote rank), the
  // contributions are the remote group's, and who sends and who gets the result follows the
  // roles of mpi_coll_inter.h.
  const bool inter = c->remote_size >= 0;
  int rft_root = root == kAllRoot ? 0 : root;
  bool here = root == kAllRoot || root == c->rank;
  bool sends = true;
  if (inter) [[unlikely]] {
    GatherRoles roles;
    if (int rc = InterGatherRoot(*c, root, root == kAllRoot, comm, function, &rft_root, &roles);
        rc) {
      return rc;
    }
    if (sendbuf == MPI_IN_PLACE) return RefuseInPlace(comm, function);
    here = roles.receives;
    sends = roles.sends;
  }
  if (t->contiguous && RftReduction(op, datatype, &rop, &rtype)) {
    const int rc =
        root == kAllRoot
            ? rft_iallreduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, c->rft, &inner)
            : rft_ireduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, rft_root, c->rft, &inner);
    return Started(comm, rc, inner, {}, nullptr, request, function);
  }
  // Folded: the contributions gathered by a non-blocking allgather (gather), folded when it
  // completes. The scratch holds this member's packed contribution, then everyone's.
  const size_t bytes = Bytes(*t, count);
  const int members = Members(*c);
  std::vector<char> scratch(bytes * (1 + (here ? static_cast<size_t>(members) : 0)));
  if (sends)
    Pack(*t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, static_cast<size_t>(count),
         scratch.data());
  char* all = scratch.data() + bytes;
  const int rc = root == kAllRoot
                     ? rft_iallgather(scratch.data(), bytes, RFT_BYTE, all, c->rft, &inner)
                     : rft_igather(scratch.data(), bytes, RFT_BYTE, here ? all : nullptr, rft_root,
                                   c->rft, &inner);
  const Datatype plan = *t;
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

// The types of a gather, scatter or all-to-all's two sides, checked where this member uses them
// (nullptr where it does not, and for MPI_IN_PLACE).
static int CheckPair(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     const void* recvbuf, int recvcount, MPI_Datatype recvtype, bool send_used,
                     bool recv_used, const Datatype** st, const Datatype** rt,
                     const char* function) {
  *st = *rt = nullptr;
  if (send_used && sendbuf != MPI_IN_PLACE) {
    if (int rc = CheckData(comm, sendcount, sendtype, function, st); rc) return rc;
  }
  if (recv_used && recvbuf != MPI_IN_PLACE) {
    if (int rc = CheckData(comm, recvcount, recvtype, function, rt); rc) return rc;
  }
  return MPI_SUCCESS;
}

// An intercommunicator's gathers, scatters and all-to-alls as "v" forms of equal counts: the
// "v" forms stage data of any type, and blocks whose size differs between the groups need
// nothing more.
struct EqualCounts {
  EqualCounts(const Comm& c, int count)
      : counts(static_cast<size_t>(Members(c)), count), displs(counts.size()) {
    for (size_t j = 0; j < displs.size(); ++j) displs[j] = static_cast<int>(j) * count;
  }
  std::vector<int> counts;
  std::vector<int> displs;
};

// An intracommunicator's: both sides checked, and where this member uses both their blocks must
// hold the same bytes (as the blocking forms require), since staging is sized by one of them.
static int IntraPair(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     const void* recvbuf, int recvcount, MPI_Datatype recvtype, bool send_used,
                     bool recv_used, const Datatype** st, const Datatype** rt, size_t* block,
                     const char* function) {
  if (int rc = CheckPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         send_used, recv_used, st, rt, function);
      rc) {
    return rc;
  }
  *block = *rt != nullptr ? Bytes(**rt, recvcount) : (*st != nullptr ? Bytes(**st, sendcount) : 0);
  if (*st != nullptr && Bytes(**st, sendcount) != *block) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 std::string(function) + ": this member sends " +
                     std::to_string(Bytes(**st, sendcount)) + " bytes, the receive blocks hold " +
                     std::to_string(*block));
  }
  return MPI_SUCCESS;
}

// Igather and Iallgather (`all`) on an intracommunicator. Data of a non-contiguous type is staged:
// this member's block packed now, the received blocks unpacked when the gather completes.
static int IgatherIntra(const Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, bool all,
                        MPI_Comm comm, MPI_Request* request, const char* function) {
  if (!all) {
    if (int rc = CheckRoot(c, root, comm, function); rc) return rc;
  }
  const bool receiver = all || c.rank == root;
  const Datatype* st;
  const Datatype* rt;
  size_t block;
  if (int rc = IntraPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, true,
                         receiver, &st, &rt, &block, function);
      rc) {
    return rc;
  }
  const size_t members = static_cast<size_t>(c.size);
  const bool pack = st != nullptr && !st->contiguous;
  const bool unpack = rt != nullptr && !rt->contiguous;
  std::vector<char> scratch;
  const size_t send_at = pack ? Reserve(&scratch, block) : 0;
  const size_t recv_at = unpack ? Reserve(&scratch, block * members) : 0;
  const void* from = ToRftSend(sendbuf);
  if (pack) {
    Pack(*st, sendbuf, static_cast<size_t>(sendcount), scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = unpack ? scratch.data() + recv_at : recvbuf;
  if (unpack && sendbuf == MPI_IN_PLACE) {  // this member's block, packed into its place
    Pack(*rt, static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(c.rank) * recvcount * rt->extent,
         static_cast<size_t>(recvcount), static_cast<char*>(into) + block * c.rank);
  }
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = all ? rft_iallgather(from, block, RFT_BYTE, into, c.rft, &inner)
                     : rft_igather(from, block, RFT_BYTE, into, root, c.rft, &inner);
  Finish finish;
  if (unpack) finish = UnpackAt(*rt, recv_at, static_cast<size_t>(recvcount) * members, recvbuf);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, function);
}

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Igather");
  if (c->remote_size < 0) [[likely]] {
    return IgatherIntra(*c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, false,
                        comm, request, "MPI_Igather");
  }
  const EqualCounts blocks(*c, recvcount);
  return IgathervCommon(sendbuf, sendcount, sendtype, recvbuf, blocks.counts.data(),
                        blocks.displs.data(), recvtype, root, comm, false, request, "MPI_Igather");
}

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iscatter");
  if (c->remote_size >= 0) [[unlikely]] {
    const EqualCounts blocks(*c, sendcount);
    return IscattervCommon(sendbuf, blocks.counts.data(), blocks.displs.data(), sendtype, recvbuf,
                           recvcount, recvtype, root, comm, request, "MPI_Iscatter");
  }
  if (int rc = CheckRoot(*c, root, comm, "MPI_Iscatter"); rc) return rc;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  size_t block = 0;
  if (int rc = IntraPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         c->rank == root, true, &st, &rt, &block, "MPI_Iscatter");
      rc) {
    return rc;
  }
  // Staged: the root's blocks packed now; this member's block unpacked at completion, or (in
  // place: rft has no in-place scatter) left in the scratch.
  const bool pack = st != nullptr && !st->contiguous;
  const bool unpack = rt != nullptr && !rt->contiguous;
  std::vector<char> scratch;
  const size_t send_at = pack ? Reserve(&scratch, block * static_cast<size_t>(c->size)) : 0;
  const bool stage_recv = unpack || recvbuf == MPI_IN_PLACE;
  const size_t recv_at = stage_recv ? Reserve(&scratch, block) : 0;
  const void* from = sendbuf;
  if (pack) {
    Pack(*st, sendbuf, static_cast<size_t>(sendcount) * static_cast<size_t>(c->size),
         scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = stage_recv ? scratch.data() + recv_at : recvbuf;
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_iscatter(from, into, block, RFT_BYTE, root, c->rft, &inner);
  Finish finish;
  if (unpack) finish = UnpackAt(*rt, recv_at, static_cast<size_t>(recvcount), recvbuf);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, "MPI_Iscatter");
}

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iallgather");
  if (c->remote_size < 0) [[likely]] {
    return IgatherIntra(*c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, true,
                        comm, request, "MPI_Iallgather");
  }
  const EqualCounts blocks(*c, recvcount);
  return IgathervCommon(sendbuf, sendcount, sendtype, recvbuf, blocks.counts.data(),
                        blocks.displs.data(), recvtype, 0, comm, true, request, "MPI_Iallgather");
}

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Ialltoall");
  if (c->remote_size >= 0) [[unlikely]] {
    const EqualCounts to(*c, sendcount), from(*c, recvcount);
    return IalltoallvCommon(sendbuf, to.counts.data(), to.displs.data(), sendtype, recvbuf,
                            from.counts.data(), from.displs.data(), recvtype, comm, request,
                            "MPI_Ialltoall");
  }
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  size_t block;
  if (int rc = IntraPair(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, true,
                         true, &st, &rt, &block, "MPI_Ialltoall");
      rc) {
    return rc;
  }
  const size_t members = static_cast<size_t>(c->size);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool pack = in_place || (st != nullptr && !st->contiguous);
  const bool unpack = rt != nullptr && !rt->contiguous;
  std::vector<char> scratch;
  const size_t send_at = pack ? Reserve(&scratch, block * members) : 0;
  const size_t recv_at = unpack ? Reserve(&scratch, block * members) : 0;
  const void* from = sendbuf;
  if (pack) {
    // In place, the data is sent from a copy: rft writes the receive buffer while it reads.
    Pack(in_place ? *rt : *st, in_place ? recvbuf : sendbuf,
         static_cast<size_t>(in_place ? recvcount : sendcount) * members, scratch.data() + send_at);
    from = scratch.data() + send_at;
  }
  void* into = unpack ? scratch.data() + recv_at : recvbuf;
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc = rft_ialltoall(from, block, RFT_BYTE, into, c->rft, &inner);
  Finish finish;
  if (unpack) finish = UnpackAt(*rt, recv_at, static_cast<size_t>(recvcount) * members, recvbuf);
  return Started(comm, rc, inner, std::move(scratch), std::move(finish), request, "MPI_Ialltoall");
}

// Scans and the block reduce-scatter, non-blocking: every member's contribution gathered by a
// non-blocking allgather, folded in rank order when it completes (as the blocking scans are).
// kScatter is Ireduce_scatter: member r's block is recvcounts[r] elements (`counts`); the
// others take `count`, per member for kScatterBlock.
enum class Folded { kScan, kExscan, kScatterBlock, kScatter };
static int IfoldCommon(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Request* request, Folded kind,
                       const char* function, const int* counts = nullptr) {
  Comm* c;
  const Datatype* t;
  if (int rc = CheckReduction(comm, &c, count, datatype, op, -1, function, &t); rc) return rc;
  // On an intercommunicator (the reduce-scatters only: scans have no meaning there) each group
  // folds the remote group's contributions, which the intercommunicator's allgather brings.
  if (c->remote_size >= 0) [[unlikely]] {
    if (kind == Folded::kScan || kind == Folded::kExscan) return RefuseInter(comm, function);
    if (sendbuf == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  }
  // Reduce_scatter(_block): each member contributes every member's block; this one keeps
  // `mine` elements from element `before` of the reduction.
  int contributed = kind == Folded::kScatterBlock ? count * c->size : count;
  int before = kind == Folded::kScatterBlock ? count * c->rank : 0;
  int mine = count;
  if (kind == Folded::kScatter) {
    contributed = 0;
    for (int r = 0; r < c->size; ++r) {
      if (counts[r] < 0) {
        return Raise(comm, MPI_ERR_COUNT,
                     std::string(function) + ": member " + std::to_string(r) +
                         "'s count is negative (" + std::to_string(counts[r]) + ")");
      }
      if (r < c->rank) before += counts[r];
      contributed += counts[r];
    }
    mine = counts[c->rank];
  }
  const size_t bytes = Bytes(*t, contributed);
  std::vector<char> scratch(bytes * (1 + static_cast<size_t>(Members(*c))));
  Pack(*t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, static_cast<size_t>(contributed),
       scratch.data());
  rft_request_t inner = RFT_REQUEST_NULL;
  const int rc =
      rft_iallgather(scratch.data(), bytes, RFT_BYTE, scratch.data() + bytes, c->rft, &inner);
  const Datatype plan = *t;
  const int rank = c->rank;
  const int members = Members(*c);
  return Started(
      comm, rc, inner, std::move(scratch),
      [=](Request& self, const rft_status_t&) {
        const char* all = self.scratch.data() + bytes;
        if (kind == Folded::kScatterBlock || kind == Folded::kScatter) {
          // The whole reduction, then this member's block of it.
          const MPI_Aint base = std::min<MPI_Aint>(0, plan.true_lb);
          std::vector<char> result(static_cast<size_t>(ElementsSpan(plan, contributed) - base) + 1);
          const int folded = Fold(op, datatype, plan, contributed, all, bytes, 0, members - 1,
                                  result.data() - base);
          if (folded != MPI_SUCCESS) return folded;
          std::vector<char> packed(Bytes(plan, mine));
          Pack(plan, result.data() - base + static_cast<MPI_Aint>(before) * plan.extent,
               static_cast<size_t>(mine), packed.data());
          Unpack(plan, packed.data(), static_cast<size_t>(mine), recvbuf);
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

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (recvcounts == nullptr) {
    return Raise(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter: recvcounts is NULL");
  }
  return IfoldCommon(sendbuf, recvbuf, 0, datatype, op, comm, request, Folded::kScatter,
                     "MPI_Ireduce_scatter", recvcounts);
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
RFT_MPI_ALIAS(Ireduce_scatter_block)
RFT_MPI_ALIAS(Ireduce_scatter)
RFT_MPI_ALIAS(Iscan)
RFT_MPI_ALIAS(Iexscan)
