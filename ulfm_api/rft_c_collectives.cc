// The C API (rft.h): collectives, blocking and non-blocking. Each pair shares one function that
// checks the arguments and has collectives.cc build the algorithm; the blocking form runs it,
// the non-blocking one hands it to the session with the caller's request.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ulfm_api/binding.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/inter_collectives.h"
#include "ulfm_api/node_collectives.h"

using rft::ArgError;
using rft::Rank;
using rft::Status;
using rft::api::BlockLayout;
using rft::api::Communicator;
using rft::api::NodeCollectives;
using rft::api::ReduceOp;
using rft::api::Schedule;
using rft::api::binding::CheckComm;
using rft::api::binding::kTypeSizes;
using rft::api::binding::Raise;
using rft::api::binding::session;

namespace {

// Runs the collective that `build` writes, or starts it (`nonblocking`: `request` gets it).
// `build` checks the remaining arguments: it runs after the communicator's collective call
// count moved, so that every member's next collective uses the same tag even when one member's
// arguments were bad.
template <class Build>
int Collective(rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking,
               Build&& build) {
  if (Status s = CheckComm(comm, what); !s.ok()) [[unlikely]]
    return Raise(comm, s);
  if (!nonblocking) return Raise(comm, session()->RunCollective(*comm->comm, what, build));
  if (request == nullptr) [[unlikely]]
    return Raise(comm, ArgError(std::string(what) + ": request is NULL"));
  rft::api::Request* started = nullptr;  // stays null when the collective does not start
  const Status result = session()->StartCollective(*comm->comm, what, build, &started);
  *request = rft::api::binding::ToHandle(started);
  return Raise(comm, result);
}

Status ToBytes(const char* what, size_t count, rft_datatype_t type, size_t* bytes) {
  Status s = rft::api::binding::Bytes(count, type, bytes);
  if (s.ok()) [[likely]]
    return s;
  return ArgError(std::string(what) + ": " + s.message());
}

Status FindOp(const char* what, rft_op_t op, rft_datatype_t type, ReduceOp* out) {
  Status s = rft::api::binding::FindReduceOp(op, type, out);
  if (s.ok()) [[likely]]
    return s;
  return ArgError(std::string(what) + ": " + s.message());
}

// A "v" collective's per-member counts and displacements (elements of `type`): both present,
// and every block's end representable in bytes. One entry per member; on an intercommunicator,
// per member of the remote group.
Status Layout(const char* what, const char* name, const Communicator& comm, const size_t* counts,
              const size_t* displacements, rft_datatype_t type, BlockLayout* layout) {
  const uint32_t members = comm.is_inter() ? comm.remote_group().size() : comm.size();
  size_t ignored = 0;
  RFT_RETURN_IF_ERROR(ToBytes(what, 0, type, &ignored));
  if (counts == nullptr || displacements == nullptr) {
    return ArgError(std::string(what) + ": " + name +
                    (counts == nullptr ? " counts" : " displacements") +
                    " is NULL; expected an array of " + std::to_string(members) + " entries");
  }
  const size_t size = kTypeSizes[type];
  for (uint32_t r = 0; r < members; ++r) {
    size_t end = 0;
    if (__builtin_add_overflow(displacements[r], counts[r], &end) ||
        __builtin_mul_overflow(end, size, &end)) {
      return ArgError(std::string(what) + ": " + name + " block of member " + std::to_string(r) +
                      " (displacement " + std::to_string(displacements[r]) + ", count " +
                      std::to_string(counts[r]) + ") overflows a size_t");
    }
  }
  *layout = BlockLayout{.counts = counts, .displacements = displacements, .element_size = size};
  return Status::Ok();
}

// On an intercommunicator RFT_IN_PLACE has no meaning (MPI's rule).
Status InterArgs(const char* what, const void* send) {
  if (send == RFT_IN_PLACE) {
    return ArgError(std::string(what) + ": RFT_IN_PLACE on an intercommunicator; give a buffer");
  }
  return Status::Ok();
}

bool IsRoot(const Communicator& comm, int root) {
  return root >= 0 && static_cast<uint32_t>(root) == comm.rank();
}

// The blocking barrier, bcast, reduce and allreduce first ask for the communicator's node area
// (node_collectives.h), set up at the first of them: `*area` stays null when the call goes
// through messages, and so it does when an argument is bad (the schedule's checks report it).
Status NodeArea(rft_comm_t comm, const char* what, size_t bytes, NodeCollectives** area) {
  *area = nullptr;
  RFT_RETURN_IF_ERROR(CheckComm(comm, what));
  if (comm->comm->is_inter()) return Status::Ok();
  return NodeCollectives::For(*session(), *comm->comm, what, bytes, area);
}

bool ValidRoot(const Communicator& comm, int root) {
  return root >= 0 && static_cast<uint32_t>(root) < comm.size();
}

int Barrier(rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking) {
  if (!nonblocking) {
    NodeCollectives* area = nullptr;
    const Status s = NodeArea(comm, what, 0, &area);
    if (!s.ok()) return Raise(comm, s);
    if (area != nullptr) return Raise(comm, area->Barrier(*session(), what));
  }
  return Collective(comm, what, request, nonblocking,
                    [](Schedule& s) { return rft::api::BuildBarrier(s); });
}

int Bcast(void* buffer, size_t count, rft_datatype_t type, int root, rft_comm_t comm,
          const char* what, rft_request_t* request, bool nonblocking) {
  size_t bytes = 0;
  if (!nonblocking && ToBytes(what, count, type, &bytes).ok()) {
    NodeCollectives* area = nullptr;
    const Status s = NodeArea(comm, what, bytes, &area);
    if (!s.ok()) return Raise(comm, s);
    if (area != nullptr && ValidRoot(*comm->comm, root)) {
      return Raise(comm, area->Bcast(*session(), what, buffer, bytes, root));
    }
  }
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    if (s.comm().is_inter()) return rft::api::BuildInterBcast(s, buffer, bytes, root);
    return rft::api::BuildBcast(s, buffer, bytes, root);
  });
}

// Reduce (`root` >= 0) or allreduce (`root` < 0) through the node area; false when the call goes
// through messages.
bool NodeReduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
                int root, rft_comm_t comm, const char* what, int* rc) {
  size_t bytes = 0;
  ReduceOp reduce;
  // Bad arguments go through messages, whose schedule names them.
  if (!rft::api::binding::BytesOk(count, type, &bytes) ||
      !rft::api::binding::ReduceOpOk(op, type, &reduce)) [[unlikely]] {
    return false;
  }
  NodeCollectives* area = nullptr;
  if (const Status s = NodeArea(comm, what, bytes, &area); !s.ok()) {
    *rc = Raise(comm, s);
    return true;
  }
  if (area == nullptr || (root >= 0 && !ValidRoot(*comm->comm, root))) return false;
  *rc = Raise(comm, area->Reduce(*session(), what, send == RFT_IN_PLACE ? receive : send, receive,
                                 count, reduce, root));
  return true;
}

int Allreduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
              rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking) {
  int rc = RFT_SUCCESS;
  if (!nonblocking && NodeReduce(send, receive, count, type, op, -1, comm, what, &rc)) return rc;
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    ReduceOp reduce;
    RFT_RETURN_IF_ERROR(FindOp(what, op, type, &reduce));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      return rft::api::BuildInterAllreduce(s, send, receive, count, reduce);
    }
    return rft::api::BuildAllreduce(s, send == RFT_IN_PLACE ? receive : send, receive, count,
                                    reduce);
  });
}

int Reduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
           int root, rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking) {
  int rc = RFT_SUCCESS;
  if (!nonblocking && root >= 0 &&
      NodeReduce(send, receive, count, type, op, root, comm, what, &rc)) {
    return rc;
  }
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    ReduceOp reduce;
    RFT_RETURN_IF_ERROR(FindOp(what, op, type, &reduce));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      return rft::api::BuildInterReduce(s, send, receive, count, reduce, root);
    }
    return rft::api::BuildReduce(s, send == RFT_IN_PLACE ? receive : send, receive, count, reduce,
                                 root);
  });
}

int Allgather(const void* send, size_t count, rft_datatype_t type, void* receive, rft_comm_t comm,
              const char* what, rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      return rft::api::BuildInterAllgather(s, send, bytes, receive);
    }
    const size_t mine = s.comm().rank() * bytes;
    return rft::api::BuildAllgather(
        s, send == RFT_IN_PLACE ? static_cast<const std::byte*>(receive) + mine : send, bytes,
        receive);
  });
}

int Allgatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
               const size_t* counts, const size_t* displacements, rft_comm_t comm, const char* what,
               rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    BlockLayout layout;
    RFT_RETURN_IF_ERROR(Layout(what, "receive", s.comm(), counts, displacements, type, &layout));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      size_t bytes = 0;
      RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
      return rft::api::BuildInterAllgatherv(s, send, bytes, receive, layout);
    }
    const Rank me = s.comm().rank();
    if (send == RFT_IN_PLACE) {
      send = static_cast<const std::byte*>(receive) + displacements[me] * layout.element_size;
    } else if (count != counts[me]) {
      return ArgError(std::string(what) + ": count " + std::to_string(count) +
                      " differs from this member's entry in counts (" + std::to_string(counts[me]) +
                      ")");
    }
    return rft::api::BuildAllgatherv(s, send, receive, layout);
  });
}

int Gather(const void* send, size_t count, rft_datatype_t type, void* receive, int root,
           rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      return rft::api::BuildInterGather(s, send, bytes, receive, root);
    }
    if (send == RFT_IN_PLACE) {
      if (!IsRoot(s.comm(), root)) {
        return ArgError(std::string(what) + ": RFT_IN_PLACE is for the root's send buffer only");
      }
      send = static_cast<const std::byte*>(receive) + static_cast<size_t>(root) * bytes;
    }
    return rft::api::BuildGather(s, send, bytes, receive, root);
  });
}

int Gatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
            const size_t* counts, const size_t* displacements, int root, rft_comm_t comm,
            const char* what, rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    BlockLayout layout{.element_size = kTypeSizes[type]};
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, send));
      if (root == RFT_ROOT) {
        RFT_RETURN_IF_ERROR(
            Layout(what, "receive", s.comm(), counts, displacements, type, &layout));
      }
      return rft::api::BuildInterGatherv(s, send, bytes, receive, layout, root);
    }
    if (IsRoot(s.comm(), root)) {
      RFT_RETURN_IF_ERROR(Layout(what, "receive", s.comm(), counts, displacements, type, &layout));
      const Rank me = s.comm().rank();
      if (send == RFT_IN_PLACE) {
        send = static_cast<const std::byte*>(receive) + displacements[me] * layout.element_size;
        bytes = counts[me] * layout.element_size;
      } else if (count != counts[me]) {
        return ArgError(std::string(what) + ": count " + std::to_string(count) +
                        " differs from the root's entry in counts (" + std::to_string(counts[me]) +
                        ")");
      }
    } else if (send == RFT_IN_PLACE) {
      return ArgError(std::string(what) + ": RFT_IN_PLACE is for the root's send buffer only");
    }
    return rft::api::BuildGatherv(s, send, bytes, receive, layout, root);
  });
}

int Scatter(const void* send, void* receive, size_t count, rft_datatype_t type, int root,
            rft_comm_t comm, const char* what, rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, receive));
      return rft::api::BuildInterScatter(s, send, receive, bytes, root);
    }
    return rft::api::BuildScatter(s, send, receive, bytes, root);
  });
}

int Scatterv(const void* send, const size_t* counts, const size_t* displacements, void* receive,
             size_t count, rft_datatype_t type, int root, rft_comm_t comm, const char* what,
             rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    BlockLayout layout{.element_size = kTypeSizes[type]};
    if (s.comm().is_inter()) {
      RFT_RETURN_IF_ERROR(InterArgs(what, receive));
      if (root == RFT_ROOT) {
        RFT_RETURN_IF_ERROR(Layout(what, "send", s.comm(), counts, displacements, type, &layout));
      }
      return rft::api::BuildInterScatterv(s, send, layout, receive, bytes, root);
    }
    if (IsRoot(s.comm(), root)) {
      RFT_RETURN_IF_ERROR(Layout(what, "send", s.comm(), counts, displacements, type, &layout));
      const Rank me = s.comm().rank();
      if (count != counts[me]) {
        return ArgError(std::string(what) + ": count " + std::to_string(count) +
                        " differs from the root's entry in counts (" + std::to_string(counts[me]) +
                        ")");
      }
    }
    return rft::api::BuildScatterv(s, send, layout, receive, bytes, root);
  });
}

int Alltoall(const void* send, size_t count, rft_datatype_t type, void* receive, rft_comm_t comm,
             const char* what, rft_request_t* request, bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    size_t bytes = 0;
    RFT_RETURN_IF_ERROR(ToBytes(what, count, type, &bytes));
    if (send == RFT_IN_PLACE) {
      return ArgError(std::string(what) + ": RFT_IN_PLACE is not supported; give a send buffer");
    }
    if (s.comm().is_inter()) return rft::api::BuildInterAlltoall(s, send, bytes, receive);
    return rft::api::BuildAlltoall(s, send, bytes, receive);
  });
}

int Alltoallv(const void* send, const size_t* send_counts, const size_t* send_displacements,
              void* receive, const size_t* receive_counts, const size_t* receive_displacements,
              rft_datatype_t type, rft_comm_t comm, const char* what, rft_request_t* request,
              bool nonblocking) {
  return Collective(comm, what, request, nonblocking, [&](Schedule& s) {
    if (send == RFT_IN_PLACE) {
      return ArgError(std::string(what) + ": RFT_IN_PLACE is not supported; give a send buffer");
    }
    BlockLayout out;
    BlockLayout in;
    RFT_RETURN_IF_ERROR(
        Layout(what, "send", s.comm(), send_counts, send_displacements, type, &out));
    RFT_RETURN_IF_ERROR(
        Layout(what, "receive", s.comm(), receive_counts, receive_displacements, type, &in));
    if (s.comm().is_inter()) return rft::api::BuildInterAlltoallv(s, send, out, receive, in);
    return rft::api::BuildAlltoallv(s, send, out, receive, in);
  });
}

}  // namespace

// ---- Blocking ----

extern "C" int rft_barrier(rft_comm_t comm) { return Barrier(comm, "rft_barrier", nullptr, false); }

extern "C" int rft_bcast(void* buffer, size_t count, rft_datatype_t type, int root,
                         rft_comm_t comm) {
  return Bcast(buffer, count, type, root, comm, "rft_bcast", nullptr, false);
}

extern "C" int rft_allreduce(const void* send, void* receive, size_t count, rft_datatype_t type,
                             rft_op_t op, rft_comm_t comm) {
  return Allreduce(send, receive, count, type, op, comm, "rft_allreduce", nullptr, false);
}

extern "C" int rft_reduce(const void* send, void* receive, size_t count, rft_datatype_t type,
                          rft_op_t op, int root, rft_comm_t comm) {
  return Reduce(send, receive, count, type, op, root, comm, "rft_reduce", nullptr, false);
}

extern "C" int rft_allgather(const void* send, size_t count, rft_datatype_t type, void* receive,
                             rft_comm_t comm) {
  return Allgather(send, count, type, receive, comm, "rft_allgather", nullptr, false);
}

extern "C" int rft_allgatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                              const size_t* counts, const size_t* displacements, rft_comm_t comm) {
  return Allgatherv(send, count, type, receive, counts, displacements, comm, "rft_allgatherv",
                    nullptr, false);
}

extern "C" int rft_gather(const void* send, size_t count, rft_datatype_t type, void* receive,
                          int root, rft_comm_t comm) {
  return Gather(send, count, type, receive, root, comm, "rft_gather", nullptr, false);
}

extern "C" int rft_gatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                           const size_t* counts, const size_t* displacements, int root,
                           rft_comm_t comm) {
  return Gatherv(send, count, type, receive, counts, displacements, root, comm, "rft_gatherv",
                 nullptr, false);
}

extern "C" int rft_scatter(const void* send, void* receive, size_t count, rft_datatype_t type,
                           int root, rft_comm_t comm) {
  return Scatter(send, receive, count, type, root, comm, "rft_scatter", nullptr, false);
}

extern "C" int rft_scatterv(const void* send, const size_t* counts, const size_t* displacements,
                            void* receive, size_t count, rft_datatype_t type, int root,
                            rft_comm_t comm) {
  return Scatterv(send, counts, displacements, receive, count, type, root, comm, "rft_scatterv",
                  nullptr, false);
}

extern "C" int rft_alltoall(const void* send, size_t count, rft_datatype_t type, void* receive,
                            rft_comm_t comm) {
  return Alltoall(send, count, type, receive, comm, "rft_alltoall", nullptr, false);
}

extern "C" int rft_alltoallv(const void* send, const size_t* send_counts,
                             const size_t* send_displacements, void* receive,
                             const size_t* receive_counts, const size_t* receive_displacements,
                             rft_datatype_t type, rft_comm_t comm) {
  return Alltoallv(send, send_counts, send_displacements, receive, receive_counts,
                   receive_displacements, type, comm, "rft_alltoallv", nullptr, false);
}

// ---- Non-blocking ----

extern "C" int rft_ibarrier(rft_comm_t comm, rft_request_t* request) {
  return Barrier(comm, "rft_ibarrier", request, true);
}

extern "C" int rft_ibcast(void* buffer, size_t count, rft_datatype_t type, int root,
                          rft_comm_t comm, rft_request_t* request) {
  return Bcast(buffer, count, type, root, comm, "rft_ibcast", request, true);
}

extern "C" int rft_iallreduce(const void* send, void* receive, size_t count, rft_datatype_t type,
                              rft_op_t op, rft_comm_t comm, rft_request_t* request) {
  return Allreduce(send, receive, count, type, op, comm, "rft_iallreduce", request, true);
}

extern "C" int rft_ireduce(const void* send, void* receive, size_t count, rft_datatype_t type,
                           rft_op_t op, int root, rft_comm_t comm, rft_request_t* request) {
  return Reduce(send, receive, count, type, op, root, comm, "rft_ireduce", request, true);
}

extern "C" int rft_iallgather(const void* send, size_t count, rft_datatype_t type, void* receive,
                              rft_comm_t comm, rft_request_t* request) {
  return Allgather(send, count, type, receive, comm, "rft_iallgather", request, true);
}

extern "C" int rft_iallgatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                               const size_t* counts, const size_t* displacements, rft_comm_t comm,
                               rft_request_t* request) {
  return Allgatherv(send, count, type, receive, counts, displacements, comm, "rft_iallgatherv",
                    request, true);
}

extern "C" int rft_igather(const void* send, size_t count, rft_datatype_t type, void* receive,
                           int root, rft_comm_t comm, rft_request_t* request) {
  return Gather(send, count, type, receive, root, comm, "rft_igather", request, true);
}

extern "C" int rft_igatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                            const size_t* counts, const size_t* displacements, int root,
                            rft_comm_t comm, rft_request_t* request) {
  return Gatherv(send, count, type, receive, counts, displacements, root, comm, "rft_igatherv",
                 request, true);
}

extern "C" int rft_iscatter(const void* send, void* receive, size_t count, rft_datatype_t type,
                            int root, rft_comm_t comm, rft_request_t* request) {
  return Scatter(send, receive, count, type, root, comm, "rft_iscatter", request, true);
}

extern "C" int rft_iscatterv(const void* send, const size_t* counts, const size_t* displacements,
                             void* receive, size_t count, rft_datatype_t type, int root,
                             rft_comm_t comm, rft_request_t* request) {
  return Scatterv(send, counts, displacements, receive, count, type, root, comm, "rft_iscatterv",
                  request, true);
}

extern "C" int rft_ialltoall(const void* send, size_t count, rft_datatype_t type, void* receive,
                             rft_comm_t comm, rft_request_t* request) {
  return Alltoall(send, count, type, receive, comm, "rft_ialltoall", request, true);
}

extern "C" int rft_ialltoallv(const void* send, const size_t* send_counts,
                              const size_t* send_displacements, void* receive,
                              const size_t* receive_counts, const size_t* receive_displacements,
                              rft_datatype_t type, rft_comm_t comm, rft_request_t* request) {
  return Alltoallv(send, send_counts, send_displacements, receive, receive_counts,
                   receive_displacements, type, comm, "rft_ialltoallv", request, true);
}
