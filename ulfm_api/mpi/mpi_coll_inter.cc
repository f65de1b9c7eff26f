// Collectives on intercommunicators (MPI-4.1 §6.2.2): rft's intercommunicator collectives carry
// them (rft.h, "Intercommunicators"); data of derived types is packed around the call. A root
// argument is MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, and the root's rank
// in its group at the other group's members. Pieces of different sizes (the "v" and "w" forms,
// blocks whose size differs between the groups) and reductions rft has no native form for go
// through mpi_coll_inter_v.cc. The scans are not defined on an intercommunicator (MPI_ERR_COMM).
// The non-blocking forms are in mpi_coll_nonblocking.cc and mpi_coll_nonblocking_v.cc.
#include "ulfm_api/mpi/mpi_coll_inter.h"

#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_internal.h"

namespace rft::mpi::coll {

namespace {

int Done(MPI_Comm comm, const char* function, int rc) {
  return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, function, rc);
}

// Checks a send and a receive description; *differ: both are given and their blocks differ in
// size (the two groups send blocks of different sizes), which goes in frames
// (mpi_coll_inter_v.cc).
int CheckBlocks(MPI_Comm comm, const char* function, const void* send, int send_count,
                MPI_Datatype send_type, bool sends, int recv_count, MPI_Datatype recv_type,
                bool receives, const Datatype** st, const Datatype** rt, bool* differ) {
  if (send == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  if (sends) {
    if (int rc = CheckData(comm, send_count, send_type, function, st); rc) return rc;
  }
  if (receives) {
    if (int rc = CheckData(comm, recv_count, recv_type, function, rt); rc) return rc;
  }
  *differ = sends && receives && Bytes(**st, send_count) != Bytes(**rt, recv_count);
  return MPI_SUCCESS;
}

// Unpacks `count` blocks of `recv_count` elements from packed `staging` into `recv` (when the
// type is not contiguous).
void UnpackBlocks(const Datatype& t, const std::vector<char>& staging, int blocks, int count,
                  void* recv) {
  if (t.contiguous || staging.empty()) return;
  const size_t block = Bytes(t, count);
  for (int b = 0; b < blocks; ++b) {
    Unpack(t, staging.data() + block * static_cast<size_t>(b), static_cast<size_t>(count),
           static_cast<char*>(recv) + static_cast<MPI_Aint>(b) * count * t.extent);
  }
}
void PackBlocks(const Datatype& t, const void* send, int blocks, int count,
                std::vector<char>* staging) {
  const size_t block = Bytes(t, count);
  staging->resize(block * static_cast<size_t>(blocks));
  for (int b = 0; b < blocks; ++b) {
    Pack(t, static_cast<const char*>(send) + static_cast<MPI_Aint>(b) * count * t.extent,
         static_cast<size_t>(count), staging->data() + block * static_cast<size_t>(b));
  }
}

}  // namespace

// The root argument as rft's (MPI_ROOT and RFT_ROOT are both -3).
int InterRoot(const Comm& c, int root, MPI_Comm comm, const char* function, int* out) {
  if (root == MPI_ROOT) {
    *out = RFT_ROOT;
  } else if (root == MPI_PROC_NULL) {
    *out = RFT_PROC_NULL;
  } else if (root >= 0 && root < c.remote_size) {
    *out = root;
  } else {
    return Raise(comm, MPI_ERR_ROOT,
                 std::string(function) + ": root " + std::to_string(root) +
                     " on an intercommunicator: expected MPI_ROOT, MPI_PROC_NULL or 0.." +
                     std::to_string(c.remote_size - 1) + " (the root's rank in the remote group)");
  }
  return MPI_SUCCESS;
}

int InterGatherRoot(const Comm& c, int root, bool all, MPI_Comm comm, const char* function,
                    int* rft_root, GatherRoles* roles) {
  *rft_root = 0;
  if (!all) {
    if (int rc = InterRoot(c, root, comm, function, rft_root); rc) return rc;
  }
  *roles = GatherRolesOf(*rft_root, all);
  return MPI_SUCCESS;
}

int RefuseInPlace(MPI_Comm comm, const char* function) {
  return Raise(comm, MPI_ERR_ARG,
               std::string(function) + ": MPI_IN_PLACE on an intercommunicator; give a buffer");
}

int InterBcast(Comm& c, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const char* function = "MPI_Bcast";
  int rft_root = 0;
  if (int rc = InterRoot(c, root, comm, function, &rft_root); rc) return rc;
  if (rft_root == RFT_PROC_NULL)
    return Done(comm, function, rft_bcast(nullptr, 0, RFT_BYTE, rft_root, c.rft));
  const Datatype* t;
  if (int rc = CheckData(comm, count, type, function, &t); rc) return rc;
  std::vector<char> staging;
  void* data = buffer;
  if (!t->contiguous) {
    staging.resize(Bytes(*t, count));
    if (rft_root == RFT_ROOT) Pack(*t, buffer, static_cast<size_t>(count), staging.data());
    data = staging.data();
  }
  const int rc = rft_bcast(data, Bytes(*t, count), RFT_BYTE, rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (rft_root != RFT_ROOT) UnpackBlocks(*t, staging, 1, count, buffer);
  return MPI_SUCCESS;
}

int InterReduce(Comm& c, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                int root, bool all, MPI_Comm comm, const char* function) {
  int rft_root = 0;
  GatherRoles roles;
  if (int rc = InterGatherRoot(c, root, all, comm, function, &rft_root, &roles); rc) return rc;
  if (send == MPI_IN_PLACE) return RefuseInPlace(comm, function);
  if (count < 0) return CheckCountArg(count, function, comm);
  rft_op_t rop;
  rft_datatype_t rtype;
  if (!IsSimpleBuiltin(type) || !RftReduction(op, type, &rop, &rtype)) {
    // User operators, derived types: folded here after a gather (mpi_coll_inter_v.cc).
    const Datatype* t;
    if (int rc = CheckData(comm, count, type, function, &t); rc) return rc;
    std::string message;
    if (int rc = CheckOp(op, type, &message); rc) {
      return Raise(comm, rc, std::string(function) + ": " + message);
    }
    return InterFoldedReduce(c, send, recv, count, type, *t, op, rft_root, all, comm, function);
  }
  const int rc =
      all ? rft_allreduce(send, recv, static_cast<size_t>(count), rtype, rop, c.rft)
          : rft_reduce(send, recv, static_cast<size_t>(count), rtype, rop, rft_root, c.rft);
  return Done(comm, function, rc);
}

int InterGather(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                int recv_count, MPI_Datatype recv_type, int root, bool all, MPI_Comm comm,
                const char* function) {
  int rft_root = 0;
  GatherRoles roles;
  if (int rc = InterGatherRoot(c, root, all, comm, function, &rft_root, &roles); rc) return rc;
  const bool sends = roles.sends;
  const bool receives = roles.receives;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  bool differ = false;
  if (int rc = CheckBlocks(comm, function, send, send_count, send_type, sends, recv_count,
                           recv_type, receives, &st, &rt, &differ);
      rc) {
    return rc;
  }
  if (differ) {  // an allgather whose groups send blocks of different sizes
    std::vector<int> counts(static_cast<size_t>(c.remote_size), recv_count);
    std::vector<Piece> theirs;
    if (int rc = MakePieces(c, *rt, counts.data(), nullptr, comm, function, &theirs); rc) return rc;
    return InterGatherv(c, send, Piece{st, send_count, 0, Bytes(*st, send_count)}, recv, theirs,
                        rft_root, all, comm, function);
  }
  std::vector<char> send_scratch, staging;
  const void* mine = sends ? Packed(*st, send, send_count, &send_scratch) : nullptr;
  const size_t block = sends ? Bytes(*st, send_count) : receives ? Bytes(*rt, recv_count) : 0;
  void* into = recv;
  if (receives && !rt->contiguous) {
    staging.resize(block * static_cast<size_t>(c.remote_size));
    into = staging.data();
  }
  const int rc = all ? rft_allgather(mine, block, RFT_BYTE, into, c.rft)
                     : rft_gather(mine, block, RFT_BYTE, into, rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (receives) UnpackBlocks(*rt, staging, c.remote_size, recv_count, recv);
  return MPI_SUCCESS;
}

int InterScatter(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const char* function = "MPI_Scatter";
  int rft_root = 0;
  if (int rc = InterRoot(c, root, comm, function, &rft_root); rc) return rc;
  const bool sends = rft_root == RFT_ROOT;
  const bool receives = rft_root >= 0;
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  bool differ = false;  // never: one side sends, the other receives
  if (int rc = CheckBlocks(comm, function, recv, send_count, send_type, sends, recv_count,
                           recv_type, receives, &st, &rt, &differ);
      rc) {
    return rc;
  }
  std::vector<char> send_staging, recv_staging;
  const void* from = send;
  if (sends && !st->contiguous) {
    PackBlocks(*st, send, c.remote_size, send_count, &send_staging);
    from = send_staging.data();
  }
  const size_t block = sends ? Bytes(*st, send_count) : receives ? Bytes(*rt, recv_count) : 0;
  void* into = recv;
  if (receives && !rt->contiguous) {
    recv_staging.resize(block);
    into = recv_staging.data();
  }
  const int rc = rft_scatter(from, into, block, RFT_BYTE, rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (receives) UnpackBlocks(*rt, recv_staging, 1, recv_count, recv);
  return MPI_SUCCESS;
}

int InterAlltoall(Comm& c, const void* send, int send_count, MPI_Datatype send_type, void* recv,
                  int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  const char* function = "MPI_Alltoall";
  const Datatype* st = nullptr;
  const Datatype* rt = nullptr;
  bool differ = false;
  if (int rc = CheckBlocks(comm, function, send, send_count, send_type, true, recv_count, recv_type,
                           true, &st, &rt, &differ);
      rc) {
    return rc;
  }
  if (differ) {  // the groups send blocks of different sizes
    std::vector<int> send_counts(static_cast<size_t>(c.remote_size), send_count);
    std::vector<int> recv_counts(static_cast<size_t>(c.remote_size), recv_count);
    std::vector<Piece> to, from;
    if (int rc = MakePieces(c, *st, send_counts.data(), nullptr, comm, function, &to); rc)
      return rc;
    if (int rc = MakePieces(c, *rt, recv_counts.data(), nullptr, comm, function, &from); rc) {
      return rc;
    }
    return InterAlltoallw(c, send, to, recv, from, comm, function);
  }
  std::vector<char> send_staging, recv_staging;
  const void* from = send;
  if (!st->contiguous) {
    PackBlocks(*st, send, c.remote_size, send_count, &send_staging);
    from = send_staging.data();
  }
  const size_t block = Bytes(*st, send_count);
  void* into = recv;
  if (!rt->contiguous) {
    recv_staging.resize(block * static_cast<size_t>(c.remote_size));
    into = recv_staging.data();
  }
  const int rc = rft_alltoall(from, block, RFT_BYTE, into, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  UnpackBlocks(*rt, recv_staging, c.remote_size, recv_count, recv);
  return MPI_SUCCESS;
}

int RefuseInter(MPI_Comm comm, const char* function) {
  return Raise(comm, MPI_ERR_COMM,
               std::string(function) +
                   " on an intercommunicator is not supported by rft's MPI layer (docs/mpi.md)");
}

}  // namespace rft::mpi::coll
