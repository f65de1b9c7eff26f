#include "ulfm_api/inter_collectives.h"

#include <string>

namespace rft::api {

namespace {

std::byte* At(void* buffer, size_t offset) { return static_cast<std::byte*>(buffer) + offset; }
const std::byte* At(const void* buffer, size_t offset) {
  return static_cast<const std::byte*>(buffer) + offset;
}

// Where the two groups sit among the intercommunicator's members (contiguous, see
// communicator.h).
struct Sides {
  Rank local_first;
  uint32_t local_size;
  Rank remote_first;
  uint32_t remote_size;
  bool leader;  // this process is its group's rank 0
};
Sides SidesOf(const Communicator& comm) {
  const uint32_t local = comm.local_size();
  const uint32_t remote = comm.remote_group().size();
  return Sides{.local_first = comm.local_first() ? 0 : remote,
               .local_size = local,
               .remote_first = comm.local_first() ? local : 0,
               .remote_size = remote,
               .leader = comm.local_rank() == 0};
}

// A shrink can leave an intercommunicator whose remote group is gone: nothing to exchange with.
Status HasRemote(const Schedule& s, const Sides& sides) {
  if (sides.remote_size > 0) [[likely]]
    return Status::Ok();
  return ProcFailedError(std::string(s.what()) + " on intercommunicator " + s.comm().name() +
                         ": every member of the remote group failed");
}

// A root argument at a member of the other group: a rank of the root's group.
Status CheckRemoteRoot(const Schedule& s, const Sides& sides, int root) {
  if (root >= 0 && static_cast<uint32_t>(root) < sides.remote_size) [[likely]]
    return Status::Ok();
  return ArgError(std::string(s.what()) + " on intercommunicator " + s.comm().name() + ": root " +
                  std::to_string(root) + ": expected RFT_ROOT, RFT_PROC_NULL or 0.." +
                  std::to_string(static_cast<int64_t>(sides.remote_size) - 1) +
                  " (the root's rank in the remote group)");
}

// Runs `build` on the caller's own group.
template <class Build>
Status OnLocalGroup(Schedule& s, const Sides& sides, Build&& build) {
  s.Restrict(sides.local_first, sides.local_size);
  Status status = build();
  s.Unrestrict();
  return status;
}

// A "v" form's block j: where it is and how many bytes.
const std::byte* BlockAt(const void* buffer, const BlockLayout& layout, uint32_t j) {
  return At(buffer, layout.displacements[j] * layout.element_size);
}
std::byte* BlockAt(void* buffer, const BlockLayout& layout, uint32_t j) {
  return At(buffer, layout.displacements[j] * layout.element_size);
}
size_t BlockBytes(const BlockLayout& layout, uint32_t j) {
  return layout.counts[j] * layout.element_size;
}

}  // namespace

Status BuildInterBcast(Schedule& s, void* buffer, size_t bytes, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  if (root == kRootHere) {
    s.Send(buffer, bytes, sides.remote_first);
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  if (sides.leader) {
    s.Receive(buffer, bytes, sides.remote_first + static_cast<Rank>(root));
    s.EndRound();
  }
  return OnLocalGroup(s, sides, [&] { return BuildBcast(s, buffer, bytes, 0); });
}

Status BuildInterReduce(Schedule& s, const void* send, void* receive, size_t count,
                        const ReduceOp& op, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  const size_t bytes = count * op.element_size;
  if (root == kRootHere) {
    s.Receive(receive, bytes, sides.remote_first);
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  std::byte* partial = sides.leader ? s.Scratch(bytes) : nullptr;
  RFT_RETURN_IF_ERROR(
      OnLocalGroup(s, sides, [&] { return BuildReduce(s, send, partial, count, op, 0); }));
  if (sides.leader) s.Send(partial, bytes, sides.remote_first + static_cast<Rank>(root));
  return Status::Ok();
}

Status BuildInterAllreduce(Schedule& s, const void* send, void* receive, size_t count,
                           const ReduceOp& op) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  const size_t bytes = count * op.element_size;
  std::byte* partial = sides.leader ? s.Scratch(bytes) : nullptr;
  RFT_RETURN_IF_ERROR(
      OnLocalGroup(s, sides, [&] { return BuildReduce(s, send, partial, count, op, 0); }));
  if (sides.leader) {
    s.Send(partial, bytes, sides.remote_first);
    s.Receive(receive, bytes, sides.remote_first);
    s.EndRound();
  }
  return OnLocalGroup(s, sides, [&] { return BuildBcast(s, receive, bytes, 0); });
}

Status BuildInterAllgather(Schedule& s, const void* send, size_t bytes, void* receive) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  std::byte* gathered = sides.leader ? s.Scratch(sides.local_size * bytes) : nullptr;
  RFT_RETURN_IF_ERROR(
      OnLocalGroup(s, sides, [&] { return BuildGather(s, send, bytes, gathered, 0); }));
  if (sides.leader) {
    s.Send(gathered, sides.local_size * bytes, sides.remote_first);
    s.Receive(receive, sides.remote_size * bytes, sides.remote_first);
    s.EndRound();
  }
  return OnLocalGroup(s, sides,
                      [&] { return BuildBcast(s, receive, sides.remote_size * bytes, 0); });
}

Status BuildInterGather(Schedule& s, const void* send, size_t bytes, void* receive, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  if (root == kRootHere) {
    s.Receive(receive, sides.remote_size * bytes, sides.remote_first);
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  std::byte* gathered = sides.leader ? s.Scratch(sides.local_size * bytes) : nullptr;
  RFT_RETURN_IF_ERROR(
      OnLocalGroup(s, sides, [&] { return BuildGather(s, send, bytes, gathered, 0); }));
  if (sides.leader) {
    s.Send(gathered, sides.local_size * bytes, sides.remote_first + static_cast<Rank>(root));
  }
  return Status::Ok();
}

Status BuildInterScatter(Schedule& s, const void* send, void* receive, size_t bytes, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  if (root == kRootHere) {
    s.Send(send, sides.remote_size * bytes, sides.remote_first);
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  std::byte* blocks = nullptr;
  if (sides.leader) {
    blocks = s.Scratch(sides.local_size * bytes);
    s.Receive(blocks, sides.local_size * bytes, sides.remote_first + static_cast<Rank>(root));
    s.EndRound();
  }
  return OnLocalGroup(s, sides, [&] { return BuildScatter(s, blocks, receive, bytes, 0); });
}

Status BuildInterAlltoall(Schedule& s, const void* send, size_t bytes, void* receive) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  const uint32_t n = sides.remote_size;
  // Each member starts at a different peer, so that not all send to the same one first.
  const Rank start = s.comm().local_rank() % n;
  for (uint32_t k = 0; k < n; ++k) {
    const Rank from = (start + k) % n;
    s.Receive(At(receive, from * bytes), bytes, sides.remote_first + from);
  }
  for (uint32_t k = 0; k < n; ++k) {
    const Rank to = (start + k) % n;
    s.Send(At(send, to * bytes), bytes, sides.remote_first + to);
  }
  return Status::Ok();
}

Status BuildInterGatherv(Schedule& s, const void* send, size_t send_bytes, void* receive,
                         const BlockLayout& layout, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  if (root == kRootHere) {
    for (uint32_t j = 0; j < sides.remote_size; ++j) {
      s.Receive(BlockAt(receive, layout, j), BlockBytes(layout, j), sides.remote_first + j);
    }
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  s.Send(send, send_bytes, sides.remote_first + static_cast<Rank>(root));
  return Status::Ok();
}

Status BuildInterScatterv(Schedule& s, const void* send, const BlockLayout& layout, void* receive,
                          size_t receive_bytes, int root) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  if (root == kRootHere) {
    for (uint32_t j = 0; j < sides.remote_size; ++j) {
      s.Send(BlockAt(send, layout, j), BlockBytes(layout, j), sides.remote_first + j);
    }
    return Status::Ok();
  }
  if (root == kRootNone) return Status::Ok();
  RFT_RETURN_IF_ERROR(CheckRemoteRoot(s, sides, root));
  s.Receive(receive, receive_bytes, sides.remote_first + static_cast<Rank>(root));
  return Status::Ok();
}

Status BuildInterAllgatherv(Schedule& s, const void* send, size_t send_bytes, void* receive,
                            const BlockLayout& layout) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  const uint32_t n = sides.remote_size;
  const Rank start = s.comm().local_rank() % n;
  for (uint32_t k = 0; k < n; ++k) {
    const Rank from = (start + k) % n;
    s.Receive(BlockAt(receive, layout, from), BlockBytes(layout, from), sides.remote_first + from);
  }
  for (uint32_t k = 0; k < n; ++k) s.Send(send, send_bytes, sides.remote_first + (start + k) % n);
  return Status::Ok();
}

Status BuildInterAlltoallv(Schedule& s, const void* send, const BlockLayout& send_layout,
                           void* receive, const BlockLayout& receive_layout) {
  const Sides sides = SidesOf(s.comm());
  RFT_RETURN_IF_ERROR(HasRemote(s, sides));
  const uint32_t n = sides.remote_size;
  const Rank start = s.comm().local_rank() % n;
  for (uint32_t k = 0; k < n; ++k) {
    const Rank from = (start + k) % n;
    s.Receive(BlockAt(receive, receive_layout, from), BlockBytes(receive_layout, from),
              sides.remote_first + from);
  }
  for (uint32_t k = 0; k < n; ++k) {
    const Rank to = (start + k) % n;
    s.Send(BlockAt(send, send_layout, to), BlockBytes(send_layout, to), sides.remote_first + to);
  }
  return Status::Ok();
}

}  // namespace rft::api
