// Collectives on intracommunicators.
//
// Contiguous data of a predefined type, and the predefined operators on the types rft reduces
// natively, go straight to rft's collectives. The rest is carried by them too: data of derived
// types packed around the call, and reductions rft has no native form for (user operators,
// MINLOC/MAXLOC, LXOR, long double, complex, bool) as an allgather (a gather for reduce) of
// every member's contribution, folded here in rank order, x0 op x1 op ... op xn-1 — the order MPI
// requires for non-commutative operators.
#include <string.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"
#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi::coll {

// Validates a buffer description: count >= 0, a committed type. Sets *type_out.
int CheckData(MPI_Comm comm, int count, MPI_Datatype type, const char* function,
              const Datatype** type_out) {
  if (int rc = CheckCountArg(count, function, comm); rc) return rc;
  std::string message;
  if (int rc = CheckDatatype(type, function, &message); rc) return Raise(comm, rc, message);
  *type_out = FindDatatype(type);
  return MPI_SUCCESS;
}

int CheckRoot(const Comm& c, int root, MPI_Comm comm, const char* function) {
  if (root >= 0 && root < c.size) return MPI_SUCCESS;
  return Raise(comm, MPI_ERR_ROOT,
               std::string(function) + ": root " + std::to_string(root) + ": expected 0.." +
                   std::to_string(c.size - 1));
}

size_t Bytes(const Datatype& t, int count) {
  return static_cast<size_t>(count) * static_cast<size_t>(t.size);
}

// `count` elements at `buffer` as contiguous bytes: the buffer itself, or packed into *scratch.
const void* Packed(const Datatype& t, const void* buffer, int count, std::vector<char>* scratch) {
  if (t.contiguous) return buffer;
  scratch->resize(Bytes(t, count));
  Pack(t, buffer, static_cast<size_t>(count), scratch->data());
  return scratch->data();
}

// Folds `n` contributions of `count` elements (packed, `packed_bytes` each, in `all`, member 0's
// first) in rank order and leaves the result in `out` (laid out as `type` says). `first` and
// `last` bound the members folded (scan: 0..rank).
int Fold(MPI_Op op, MPI_Datatype type, const Datatype& t, int count, const char* all,
         size_t packed_bytes, int first, int last, void* out) {
  // The bytes `count` elements touch: from the lowest data byte (or the origin) to the end of the
  // last element's data, which lies past count * extent when the type was resized smaller than
  // its data.
  const MPI_Aint base = std::min<MPI_Aint>(0, t.true_lb);
  const size_t span = static_cast<size_t>(ElementsSpan(t, count) - base);
  std::vector<char> acc(span), next(span);
  char* acc_at = acc.data() - base;
  char* next_at = next.data() - base;
  Unpack(t, all + packed_bytes * static_cast<size_t>(last), static_cast<size_t>(count), acc_at);
  for (int r = last - 1; r >= first; --r) {
    Unpack(t, all + packed_bytes * static_cast<size_t>(r), static_cast<size_t>(count), next_at);
    const int rc = ApplyOp(op, type, next_at, acc_at, count);  // acc = x_r op acc
    if (rc != MPI_SUCCESS) return rc;
  }
  std::vector<char> packed(packed_bytes);
  Pack(t, acc_at, static_cast<size_t>(count), packed.data());
  Unpack(t, packed.data(), static_cast<size_t>(count), out);
  return MPI_SUCCESS;
}

MPI_Aint ElementsSpan(const Datatype& t, int count) {
  if (count <= 0) return 0;
  return std::max<MPI_Aint>(
      static_cast<MPI_Aint>(count) * t.extent,
      static_cast<MPI_Aint>(count - 1) * t.extent + t.true_lb + t.true_extent);
}

// The checks of a reduction; sets *t. `root` < 0 for all-reductions.
int CheckReduction(MPI_Comm comm, Comm** c, int count, MPI_Datatype type, MPI_Op op, int root,
                   const char* function, const Datatype** t) {
  *c = FindComm(comm);
  if (*c == nullptr) return BadComm(comm, function);
  if (int rc = CheckData(comm, count, type, function, t); rc) return rc;
  std::string message;
  if (int rc = CheckOp(op, type, &message); rc) {
    return Raise(comm, rc, std::string(function) + ": " + message);
  }
  // An intercommunicator's roots are checked where its collectives start (mpi_coll_inter.h).
  if ((*c)->remote_size < 0 && (root >= 0 || root == MPI_ROOT)) {
    return CheckRoot(**c, root, comm, function);
  }
  return MPI_SUCCESS;
}

int MakeVLayout(const Comm& c, const Datatype& t, const int counts[], const int displs[],
                MPI_Comm comm, const char* function, VLayout* out) {
  out->direct = t.contiguous;
  const int members = Members(c);
  out->counts.resize(members);
  out->displacements.resize(members);
  size_t packed_at = 0;
  for (int r = 0; r < members; ++r) {
    if (counts[r] < 0 || (out->direct && displs[r] < 0)) {
      return Raise(comm, MPI_ERR_COUNT,
                   std::string(function) + ": member " + std::to_string(r) + "'s count " +
                       std::to_string(counts[r]) + " or displacement " + std::to_string(displs[r]) +
                       ": expected >= 0");
    }
    out->counts[r] = Bytes(t, counts[r]);
    out->displacements[r] =
        out->direct ? static_cast<size_t>(displs[r]) * static_cast<size_t>(t.extent) : packed_at;
    packed_at += out->counts[r];
  }
  out->staging_bytes = packed_at;
  return MPI_SUCCESS;
}

void UnpackV(const Datatype& t, const VLayout& layout, const char* staging, const int counts[],
             const int displs[], int members, void* recv) {
  for (int r = 0; r < members; ++r) {
    Unpack(t, staging + layout.displacements[r], static_cast<size_t>(counts[r]),
           static_cast<char*>(recv) + static_cast<MPI_Aint>(displs[r]) * t.extent);
  }
}

void PackV(const Datatype& t, const VLayout& layout, const void* send, const int counts[],
           const int displs[], int members, char* staging) {
  for (int r = 0; r < members; ++r) {
    Pack(t, static_cast<const char*>(send) + static_cast<MPI_Aint>(displs[r]) * t.extent,
         static_cast<size_t>(counts[r]), staging + layout.displacements[r]);
  }
}

VLayout PackedLayout(const VLayout& layout) {
  VLayout packed = layout;
  packed.direct = false;
  size_t at = 0;
  for (size_t r = 0; r < packed.counts.size(); ++r) {
    packed.displacements[r] = at;
    at += packed.counts[r];
  }
  packed.staging_bytes = at;
  return packed;
}

// A request for a non-blocking collective started in rft as `inner`.
int Started(MPI_Comm comm, int rc, rft_request_t inner, std::vector<char> scratch, Finish finish,
            MPI_Request* request, const char* function) {
  if (rc != RFT_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, function, rc);
  }
  Request r;
  r.comm = comm;
  r.rft = inner;
  r.scratch = std::move(scratch);
  r.finish = std::move(finish);
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

}  // namespace rft::mpi::coll

namespace rft::mpi {
namespace {

using namespace rft::mpi::coll;

// The folded all-reduction (and reduce, with `root` >= 0): every contribution gathered, then
// folded where the result is wanted.
int FoldedReduce(const void* send, void* recv, int count, MPI_Datatype type, const Datatype& t,
                 MPI_Op op, int root, Comm& c, MPI_Comm comm, const char* function) {
  const bool in_place = send == MPI_IN_PLACE;
  std::vector<char> mine_scratch;
  const void* mine = Packed(t, in_place ? recv : send, count, &mine_scratch);
  const size_t bytes = Bytes(t, count);
  const bool here = root < 0 || root == c.rank;
  std::vector<char> all(here ? bytes * static_cast<size_t>(c.size) : 0);
  const int rc = root < 0 ? rft_allgather(mine, bytes, RFT_BYTE, all.data(), c.rft)
                          : rft_gather(mine, bytes, RFT_BYTE, all.data(), root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (!here || count == 0) return MPI_SUCCESS;
  const int folded = Fold(op, type, t, count, all.data(), bytes, 0, c.size - 1, recv);
  return folded == MPI_SUCCESS ? MPI_SUCCESS
                               : Raise(comm, folded, std::string(function) + ": op failed");
}

int ReduceCommon(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm, const char* function) {
  Comm* c;
  const Datatype* t;
  if (int rc = CheckReduction(comm, &c, count, type, op, root, function, &t); rc) return rc;
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, function);
  rft_op_t rop;
  rft_datatype_t rtype;
  if (t->contiguous && RftReduction(op, type, &rop, &rtype)) [[likely]] {
    // rft's reduce takes IN_PLACE only at the root; MPI too.
    const int rc = root < 0 ? rft_allreduce(ToRftSend(send), recv, count, rtype, rop, c->rft)
                            : rft_reduce(ToRftSend(send), recv, count, rtype, rop, root, c->rft);
    return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, function, rc);
  }
  return FoldedReduce(send, recv, count, type, *t, op, root, *c, comm, function);
}

// Gathers (all_members: allgather) `send_count` of `send_type` from each member into `recv`,
// `recv_count` of `recv_type` per member at r * recv_count * extent.
int GatherCommon(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm, bool all,
                 const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  if (c->remote_size >= 0) [[unlikely]] {
    return InterGather(*c, send, send_count, send_type, recv, recv_count, recv_type, root, all,
                       comm, function);
  }
  if (!all) {
    if (int rc = CheckRoot(*c, root, comm, function); rc) return rc;
  }
  const bool receiver = all || c->rank == root;
  const bool in_place = send == MPI_IN_PLACE;
  const Datatype* rt = nullptr;
  const Datatype* st = nullptr;
  if (receiver) {
    if (int rc = CheckData(comm, recv_count, recv_type, function, &rt); rc) return rc;
  }
  if (!(in_place && receiver)) {
    if (int rc = CheckData(comm, send_count, send_type, function, &st); rc) return rc;
  }
  const size_t block = receiver ? Bytes(*rt, recv_count) : Bytes(*st, send_count);
  if (!in_place && st != nullptr && Bytes(*st, send_count) != block) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 std::string(function) + ": this member sends " +
                     std::to_string(Bytes(*st, send_count)) + " bytes, the receive blocks hold " +
                     std::to_string(block));
  }
  std::vector<char> send_scratch;
  const void* mine = in_place ? RFT_IN_PLACE : Packed(*st, send, send_count, &send_scratch);
  const bool direct = !receiver || rt->contiguous;
  std::vector<char> staging;
  void* into = recv;
  if (!direct) {
    staging.resize(block * static_cast<size_t>(c->size));
    into = staging.data();
    if (in_place) {  // this member's block, packed into its place
      Pack(*rt, static_cast<char*>(recv) + static_cast<MPI_Aint>(c->rank) * recv_count * rt->extent,
           static_cast<size_t>(recv_count), staging.data() + block * static_cast<size_t>(c->rank));
    }
  }
  const int rc = all ? rft_allgather(mine, block, RFT_BYTE, into, c->rft)
                     : rft_gather(mine, block, RFT_BYTE, into, root, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (!direct) {
    for (int r = 0; r < c->size; ++r) {
      Unpack(*rt, staging.data() + block * static_cast<size_t>(r), static_cast<size_t>(recv_count),
             static_cast<char*>(recv) + static_cast<MPI_Aint>(r) * recv_count * rt->extent);
    }
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rft::mpi

using namespace rft::mpi;
using namespace rft::mpi::coll;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) [[unlikely]]
    return BadComm(comm, "MPI_Barrier");
  const int rc = rft_barrier(c->rft);
  return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, "MPI_Barrier", rc);
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) [[unlikely]]
    return BadComm(comm, "MPI_Bcast");
  if (c->remote_size >= 0) [[unlikely]]
    return InterBcast(*c, buffer, count, datatype, root, comm);
  if (IsSimpleBuiltin(datatype) && count >= 0 && root >= 0 && root < c->size) [[likely]] {
    const int rc = rft_bcast(buffer, static_cast<size_t>(count) * SimpleBuiltinSize(datatype),
                             RFT_BYTE, root, c->rft);
    return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, "MPI_Bcast", rc);
  }
  const Datatype* t;
  if (int rc = CheckData(comm, count, datatype, "MPI_Bcast", &t); rc) return rc;
  if (int rc = CheckRoot(*c, root, comm, "MPI_Bcast"); rc) return rc;
  std::vector<char> staging(Bytes(*t, count));
  if (c->rank == root) Pack(*t, buffer, static_cast<size_t>(count), staging.data());
  const int rc = rft_bcast(staging.data(), staging.size(), RFT_BYTE, root, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Bcast", rc);
  if (c->rank != root) Unpack(*t, staging.data(), static_cast<size_t>(count), buffer);
  return MPI_SUCCESS;
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  // The fast path: a predefined type and operator rft reduces natively (RftReduction says the
  // operator applies), on a live communicator.
  Comm* c = FindComm(comm);
  if (c != nullptr && c->remote_size >= 0) [[unlikely]]
    return InterReduce(*c, sendbuf, recvbuf, count, datatype, op, 0, true, comm, "MPI_Allreduce");
  rft_op_t rop;
  rft_datatype_t rtype;
  if (c != nullptr && count >= 0 && IsSimpleBuiltin(datatype) &&
      RftReduction(op, datatype, &rop, &rtype)) [[likely]] {
    const int rc = rft_allreduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, c->rft);
    return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, "MPI_Allreduce", rc);
  }
  return ReduceCommon(sendbuf, recvbuf, count, datatype, op, -1, comm, "MPI_Allreduce");
}

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c != nullptr && c->remote_size >= 0) [[unlikely]]
    return InterReduce(*c, sendbuf, recvbuf, count, datatype, op, root, false, comm, "MPI_Reduce");
  // The fast path, as MPI_Allreduce's: the general checks cost more than the reduction itself
  // (~600 instructions at 8 bytes, where the node area's reduce takes ~100).
  rft_op_t rop;
  rft_datatype_t rtype;
  if (c != nullptr && count >= 0 && root >= 0 && root < c->size && IsSimpleBuiltin(datatype) &&
      RftReduction(op, datatype, &rop, &rtype)) [[likely]] {
    const int rc = rft_reduce(ToRftSend(sendbuf), recvbuf, count, rtype, rop, root, c->rft);
    return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, "MPI_Reduce", rc);
  }
  if (root < 0) {  // ReduceCommon reads a negative root as "all"
    if (c == nullptr) return BadComm(comm, "MPI_Reduce");
    return CheckRoot(*c, root, comm, "MPI_Reduce");
  }
  return ReduceCommon(sendbuf, recvbuf, count, datatype, op, root, comm, "MPI_Reduce");
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
  std::string message;
  if (int rc = CheckDatatype(datatype, "MPI_Reduce_local", &message); rc) {
    return Raise(MPI_COMM_WORLD, rc, message);
  }
  if (int rc = CheckOp(op, datatype, &message); rc) {
    return Raise(MPI_COMM_WORLD, rc, "MPI_Reduce_local: " + message);
  }
  return ApplyOp(op, datatype, inbuf, inoutbuf, count);
}

// The reduction a reduce_scatter scatters, whole, into `result` (`total` elements). On an
// intercommunicator each group gets the reduction of the other group's data (MPI-4.1 §6.11.1,
// as MPICH computes it: the groups' totals agree), and takes its part of that.
static int ReduceToScatter(Comm& c, const void* sendbuf, void* recvbuf, void* result, int total,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char* function) {
  if (c.remote_size >= 0) [[unlikely]]
    return InterReduce(c, sendbuf, result, total, datatype, op, 0, true, comm, function);
  const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return ReduceCommon(send, result, total, datatype, op, -1, comm, function);
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Reduce_scatter_block");
  const Datatype* t;
  if (int rc = CheckData(comm, recvcount, datatype, "MPI_Reduce_scatter_block", &t); rc) return rc;
  const int total = recvcount * c->size;
  const MPI_Aint base = std::min<MPI_Aint>(0, t->true_lb);
  std::vector<char> result(static_cast<size_t>(ElementsSpan(*t, total) - base) + 1);
  const int rc = ReduceToScatter(*c, sendbuf, recvbuf, result.data() - base, total, datatype, op,
                                 comm, "MPI_Reduce_scatter_block");
  if (rc != MPI_SUCCESS) return rc;
  std::vector<char> packed(Bytes(*t, recvcount));
  Pack(*t, result.data() - base + static_cast<MPI_Aint>(c->rank) * recvcount * t->extent,
       static_cast<size_t>(recvcount), packed.data());
  Unpack(*t, packed.data(), static_cast<size_t>(recvcount), recvbuf);
  return MPI_SUCCESS;
}

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Reduce_scatter");
  const Datatype* t;
  if (int rc = CheckData(comm, 0, datatype, "MPI_Reduce_scatter", &t); rc) return rc;
  int total = 0, before = 0;
  for (int r = 0; r < c->size; ++r) {
    if (recvcounts[r] < 0) {
      return Raise(comm, MPI_ERR_COUNT,
                   "MPI_Reduce_scatter: member " + std::to_string(r) + "'s count is negative");
    }
    if (r < c->rank) before += recvcounts[r];
    total += recvcounts[r];
  }
  const MPI_Aint base = std::min<MPI_Aint>(0, t->true_lb);
  std::vector<char> result(static_cast<size_t>(ElementsSpan(*t, total) - base) + 1);
  const int rc = ReduceToScatter(*c, sendbuf, recvbuf, result.data() - base, total, datatype, op,
                                 comm, "MPI_Reduce_scatter");
  if (rc != MPI_SUCCESS) return rc;
  const int mine = recvcounts[c->rank];
  std::vector<char> packed(Bytes(*t, mine));
  Pack(*t, result.data() - base + static_cast<MPI_Aint>(before) * t->extent,
       static_cast<size_t>(mine), packed.data());
  Unpack(*t, packed.data(), static_cast<size_t>(mine), recvbuf);
  return MPI_SUCCESS;
}

static int ScanCommon(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, bool exclusive, const char* function) {
  Comm* c;
  const Datatype* t;
  if (int rc = CheckReduction(comm, &c, count, datatype, op, -1, function, &t); rc) return rc;
  if (c->remote_size >= 0) [[unlikely]]
    return RefuseInter(comm, function);
  std::vector<char> mine_scratch;
  const void* mine = Packed(*t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, &mine_scratch);
  const size_t bytes = Bytes(*t, count);
  std::vector<char> all(bytes * static_cast<size_t>(c->size));
  const int rc = rft_allgather(mine, bytes, RFT_BYTE, all.data(), c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  const int last = exclusive ? c->rank - 1 : c->rank;
  if (last < 0 || count == 0) return MPI_SUCCESS;  // Exscan: rank 0's result is undefined
  const int folded = Fold(op, datatype, *t, count, all.data(), bytes, 0, last, recvbuf);
  return folded == MPI_SUCCESS ? MPI_SUCCESS : Raise(comm, folded, std::string(function));
}

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  return ScanCommon(sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Scan");
}

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  return ScanCommon(sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Exscan");
}

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return GatherCommon(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, false,
                      "MPI_Gather");
}

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return GatherCommon(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm, true,
                      "MPI_Allgather");
}

// The "v" forms on an intercommunicator: the arguments as pieces (mpi_coll_inter.h).
static int InterGathervArgs(Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm, bool all,
                            const char* function) {
  int rft_root = 0;
  GatherRoles roles;
  if (int rc = InterGatherRoot(c, root, all, comm, function, &rft_root, &roles); rc) return rc;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  Piece mine;
  std::vector<Piece> theirs;
  if (roles.sends) {
    if (int rc = CheckData(comm, sendcount, sendtype, function, &st); rc) return rc;
    mine = Piece{st, sendcount, 0, Bytes(*st, sendcount)};
  }
  if (roles.receives) {
    if (int rc = CheckData(comm, 0, recvtype, function, &rt); rc) return rc;
    if (int rc = MakePieces(c, *rt, recvcounts, displs, comm, function, &theirs); rc) return rc;
  }
  return InterGatherv(c, sendbuf, mine, recvbuf, theirs, rft_root, all, comm, function);
}

static int InterScattervArgs(Comm& c, const void* sendbuf, const int sendcounts[],
                             const int displs[], MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const char* function = "MPI_Scatterv";
  int rft_root = 0;
  if (int rc = InterRoot(c, root, comm, function, &rft_root); rc) return rc;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  Piece mine;
  std::vector<Piece> theirs;
  if (rft_root == RFT_ROOT) {
    if (int rc = CheckData(comm, 0, sendtype, function, &st); rc) return rc;
    if (int rc = MakePieces(c, *st, sendcounts, displs, comm, function, &theirs); rc) return rc;
  }
  if (rft_root >= 0) {
    if (int rc = CheckData(comm, recvcount, recvtype, function, &rt); rc) return rc;
    mine = Piece{rt, recvcount, 0, Bytes(*rt, recvcount)};
  }
  return InterScatterv(c, sendbuf, theirs, recvbuf, mine, rft_root, comm, function);
}

static int InterAlltoallvArgs(Comm& c, const void* sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm) {
  const char* function = "MPI_Alltoallv";
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  std::vector<Piece> to, from;
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = CheckData(comm, 0, sendtype, function, &st); rc) return rc;
    if (int rc = MakePieces(c, *st, sendcounts, sdispls, comm, function, &to); rc) return rc;
  }
  if (int rc = CheckData(comm, 0, recvtype, function, &rt); rc) return rc;
  if (int rc = MakePieces(c, *rt, recvcounts, rdispls, comm, function, &from); rc) return rc;
  return InterAlltoallw(c, sendbuf, to, recvbuf, from, comm, function);
}

static int GathervCommon(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, bool all, const char* function) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  if (c->remote_size >= 0) [[unlikely]] {
    return InterGathervArgs(*c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm, all, function);
  }
  if (!all) {
    if (int rc = CheckRoot(*c, root, comm, function); rc) return rc;
  }
  const bool receiver = all || c->rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE && receiver;
  const Datatype* rt = nullptr;
  const Datatype* st = nullptr;
  VLayout layout;
  if (receiver) {
    if (int rc = CheckData(comm, 0, recvtype, function, &rt); rc) return rc;
    if (int rc = MakeVLayout(*c, *rt, recvcounts, displs, comm, function, &layout); rc) return rc;
  }
  if (!in_place) {
    if (int rc = CheckData(comm, sendcount, sendtype, function, &st); rc) return rc;
  }
  std::vector<char> send_scratch, staging;
  const void* mine = in_place ? RFT_IN_PLACE : Packed(*st, sendbuf, sendcount, &send_scratch);
  const size_t my_bytes = in_place ? layout.counts[c->rank] : Bytes(*st, sendcount);
  void* into = recvbuf;
  if (receiver && !layout.direct) {
    staging.resize(layout.staging_bytes);
    into = staging.data();
    if (in_place) {
      Pack(*rt, static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(displs[c->rank]) * rt->extent,
           static_cast<size_t>(recvcounts[c->rank]),
           staging.data() + layout.displacements[c->rank]);
    }
  }
  const int rc =
      all ? rft_allgatherv(mine, my_bytes, RFT_BYTE, into, layout.counts.data(),
                           layout.displacements.data(), c->rft)
          : rft_gatherv(mine, my_bytes, RFT_BYTE, into, receiver ? layout.counts.data() : nullptr,
                        receiver ? layout.displacements.data() : nullptr, root, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (receiver && !layout.direct) {
    UnpackV(*rt, layout, staging.data(), recvcounts, displs, c->size, recvbuf);
  }
  return MPI_SUCCESS;
}

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return GathervCommon(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm, false, "MPI_Gatherv");
}

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
  return GathervCommon(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0, comm,
                       true, "MPI_Allgatherv");
}

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Scatter");
  if (c->remote_size >= 0) [[unlikely]] {
    return InterScatter(*c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  if (int rc = CheckRoot(*c, root, comm, "MPI_Scatter"); rc) return rc;
  const bool sender = c->rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE && sender;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  if (sender) {
    if (int rc = CheckData(comm, sendcount, sendtype, "MPI_Scatter", &st); rc) return rc;
  }
  if (!in_place) {
    if (int rc = CheckData(comm, recvcount, recvtype, "MPI_Scatter", &rt); rc) return rc;
  }
  const size_t block = sender ? Bytes(*st, sendcount) : Bytes(*rt, recvcount);
  std::vector<char> staging, mine;
  const void* from = sendbuf;
  if (sender && !st->contiguous) {
    staging.resize(block * static_cast<size_t>(c->size));
    Pack(*st, sendbuf, static_cast<size_t>(sendcount) * static_cast<size_t>(c->size),
         staging.data());
    from = staging.data();
  }
  void* into = recvbuf;
  if (in_place) {
    mine.resize(block);  // rft has no in-place scatter: the root's block lands in scratch
    into = mine.data();
  } else if (!rt->contiguous) {
    mine.resize(Bytes(*rt, recvcount));
    into = mine.data();
  }
  const int rc = rft_scatter(from, into, block, RFT_BYTE, root, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Scatter", rc);
  if (!in_place && !rt->contiguous)
    Unpack(*rt, mine.data(), static_cast<size_t>(recvcount), recvbuf);
  return MPI_SUCCESS;
}

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Scatterv");
  if (c->remote_size >= 0) [[unlikely]] {
    return InterScattervArgs(*c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
  }
  if (int rc = CheckRoot(*c, root, comm, "MPI_Scatterv"); rc) return rc;
  const bool sender = c->rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE && sender;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  VLayout layout;
  std::vector<char> staging, mine;
  const void* from = sendbuf;
  if (sender) {
    if (int rc = CheckData(comm, 0, sendtype, "MPI_Scatterv", &st); rc) return rc;
    if (int rc = MakeVLayout(*c, *st, sendcounts, displs, comm, "MPI_Scatterv", &layout); rc) {
      return rc;
    }
    if (!layout.direct) {
      staging.resize(layout.staging_bytes);
      PackV(*st, layout, sendbuf, sendcounts, displs, c->size, staging.data());
      from = staging.data();
    }
  }
  if (!in_place) {
    if (int rc = CheckData(comm, recvcount, recvtype, "MPI_Scatterv", &rt); rc) return rc;
  }
  const size_t my_bytes = in_place ? layout.counts[c->rank] : Bytes(*rt, recvcount);
  void* into = recvbuf;
  if (in_place || !rt->contiguous) {
    mine.resize(my_bytes);
    into = mine.data();
  }
  const int rc = rft_scatterv(from, sender ? layout.counts.data() : nullptr,
                              sender ? layout.displacements.data() : nullptr, into, my_bytes,
                              RFT_BYTE, root, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Scatterv", rc);
  if (!in_place && !rt->contiguous)
    Unpack(*rt, mine.data(), static_cast<size_t>(recvcount), recvbuf);
  return MPI_SUCCESS;
}

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Alltoall");
  if (c->remote_size >= 0) [[unlikely]] {
    return InterAlltoall(*c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  const Datatype* rt;
  if (int rc = CheckData(comm, recvcount, recvtype, "MPI_Alltoall", &rt); rc) return rc;
  const size_t block = Bytes(*rt, recvcount);
  const size_t members = static_cast<size_t>(c->size);
  std::vector<char> send_staging(block * members), recv_staging;
  if (sendbuf == MPI_IN_PLACE) {
    Pack(*rt, recvbuf, static_cast<size_t>(recvcount) * members, send_staging.data());
  } else {
    const Datatype* st;
    if (int rc = CheckData(comm, sendcount, sendtype, "MPI_Alltoall", &st); rc) return rc;
    if (Bytes(*st, sendcount) != block) {
      return Raise(comm, MPI_ERR_TRUNCATE, "MPI_Alltoall: send and receive blocks differ in size");
    }
    if (st->contiguous) {
      send_staging.clear();
    } else {
      Pack(*st, sendbuf, static_cast<size_t>(sendcount) * members, send_staging.data());
    }
  }
  const void* from = send_staging.empty() ? sendbuf : send_staging.data();
  void* into = recvbuf;
  if (!rt->contiguous) {
    recv_staging.resize(block * members);
    into = recv_staging.data();
  }
  const int rc = rft_alltoall(from, block, RFT_BYTE, into, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Alltoall", rc);
  if (!rt->contiguous) {
    Unpack(*rt, recv_staging.data(), static_cast<size_t>(recvcount) * members, recvbuf);
  }
  return MPI_SUCCESS;
}

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Alltoallv");
  if (c->remote_size >= 0) [[unlikely]] {
    return InterAlltoallvArgs(*c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
  }
  const Datatype* rt;
  if (int rc = CheckData(comm, 0, recvtype, "MPI_Alltoallv", &rt); rc) return rc;
  VLayout recv_layout, send_layout;
  if (int rc = MakeVLayout(*c, *rt, recvcounts, rdispls, comm, "MPI_Alltoallv", &recv_layout); rc) {
    return rc;
  }
  std::vector<char> send_staging, recv_staging;
  const void* from = sendbuf;
  if (sendbuf == MPI_IN_PLACE) {
    send_layout = PackedLayout(recv_layout);
    send_staging.resize(send_layout.staging_bytes);
    PackV(*rt, send_layout, recvbuf, recvcounts, rdispls, c->size, send_staging.data());
    from = send_staging.data();
  } else {
    const Datatype* st;
    if (int rc = CheckData(comm, 0, sendtype, "MPI_Alltoallv", &st); rc) return rc;
    if (int rc = MakeVLayout(*c, *st, sendcounts, sdispls, comm, "MPI_Alltoallv", &send_layout);
        rc) {
      return rc;
    }
    if (!send_layout.direct) {
      send_staging.resize(send_layout.staging_bytes);
      PackV(*st, send_layout, sendbuf, sendcounts, sdispls, c->size, send_staging.data());
      from = send_staging.data();
    }
  }
  void* into = recvbuf;
  if (!recv_layout.direct) {
    recv_staging.resize(recv_layout.staging_bytes);
    into = recv_staging.data();
  }
  const int rc =
      rft_alltoallv(from, send_layout.counts.data(), send_layout.displacements.data(), into,
                    recv_layout.counts.data(), recv_layout.displacements.data(), RFT_BYTE, c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Alltoallv", rc);
  if (!recv_layout.direct) {
    UnpackV(*rt, recv_layout, recv_staging.data(), recvcounts, rdispls, c->size, recvbuf);
  }
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Barrier)
RFT_MPI_ALIAS(Bcast)
RFT_MPI_ALIAS(Allreduce)
RFT_MPI_ALIAS(Reduce)
RFT_MPI_ALIAS(Reduce_local)
RFT_MPI_ALIAS(Reduce_scatter_block)
RFT_MPI_ALIAS(Reduce_scatter)
RFT_MPI_ALIAS(Scan)
RFT_MPI_ALIAS(Exscan)
RFT_MPI_ALIAS(Gather)
RFT_MPI_ALIAS(Allgather)
RFT_MPI_ALIAS(Gatherv)
RFT_MPI_ALIAS(Allgatherv)
RFT_MPI_ALIAS(Scatter)
RFT_MPI_ALIAS(Scatterv)
RFT_MPI_ALIAS(Alltoall)
RFT_MPI_ALIAS(Alltoallv)
