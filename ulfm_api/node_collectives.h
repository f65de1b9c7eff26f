// rft::api::NodeCollectives: the blocking barrier, bcast, reduce and allreduce of up to kMaxBytes
// on a communicator whose members all run on this node, through an area of shared memory the
// members map instead of messages (docs/shm.md, "Node collectives").
//
// The area: per member, kSlots slots (call g uses slot g % kSlots), each starting a cache line
// with the number of the last call the member published in it and the length of its data, the
// data right after (8 bytes travel in the flag's own line). A member writes only its own slots:
// one killed while writing leaves at most its own slot unpublished, and the others, waiting for
// it, learn of the failure from the registry and return RFT_ERR_PROC_FAILED, as a schedule of
// messages would; a revocation ends the waits with RFT_ERR_REVOKED.
//
// Call g (every member counts its calls on the area alike: members call collectives in one
// order): a member that writes data into its slot first waits until every member published
// g - kSlots + 1 (so none still reads what the slot held at g - kSlots), then publishes g with
// release order. Then it waits for the publications it needs: barrier and allreduce everyone's,
// bcast the root's; at reduce the root waits for everyone's and the others for nobody. So a bcast
// root and the others of a reduce run up to kSlots - 1 calls ahead (Open MPI's eager messages
// pipeline those two the same way), while barrier and allreduce cost one exchange of cache lines.
// Contributions are combined in member order, from the highest down, so an allreduce gives the
// same bits at every member.
//
// Waiting spins and, every kSpinsPerPoll rounds, progresses the session (the point-to-point
// traffic and non-blocking collectives a peer may be waiting on) and checks the communicator
// (Schedule::CheckCanRun). Only processes that poll use the area: a process that sleeps when
// idle (RFT_PROGRESS=block, more processes than cores) would never be woken by a store.
//
// Set-up: at the communicator's first blocking call of these four, every member of an eligible
// communicator (an intracommunicator of 2..kMaxMembers members, all on this node and reachable
// through a pidfd) takes part, with messages: member 0 creates the area (a memfd) and broadcasts
// its descriptor number; the others copy it with pidfd_getfd and map it; an allreduce tells all
// whether all can use it. The outcome is the same at every member: the area, or messages for the
// communicator's life.
#ifndef RFT_ULFM_API_NODE_COLLECTIVES_H_
#define RFT_ULFM_API_NODE_COLLECTIVES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ulfm_api/communicator.h"
#include "ulfm_api/schedule.h"

namespace rft::api {

class Session;

class NodeCollectives {
 public:
  // The largest payload (bcast bytes, reduce count x element size) that goes through the area.
  static constexpr size_t kMaxBytes = 1024;
  static constexpr uint32_t kMaxMembers = 64;
  static constexpr uint64_t kSlots = 8;

  // The area `comm` uses for a blocking call of `bytes`, set up at the first call that may use
  // one (every member calls this at the same calls): `*area` is nullptr when the call goes
  // through messages. An error of the set-up (a member failed, the communicator was revoked) is
  // the call's.
  static Status For(Session& session, Communicator& comm, const char* what, size_t bytes,
                    NodeCollectives** area);

  ~NodeCollectives();
  NodeCollectives(const NodeCollectives&) = delete;
  NodeCollectives& operator=(const NodeCollectives&) = delete;

  Status Barrier(Session& session, const char* what);
  Status Bcast(Session& session, const char* what, void* buffer, size_t bytes, int root);
  // `root` < 0: an allreduce (`receive` at every member). `send` may equal `receive`.
  Status Reduce(Session& session, const char* what, const void* send, void* receive, size_t count,
                const ReduceOp& op, int root);

 private:
  struct alignas(128) Slot {
    std::atomic<uint64_t> call;  // the last call published here (0: none yet)
    uint64_t bytes;              // that call's data
    std::byte data[kMaxBytes];
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free);
  static constexpr unsigned kSpinsPerPoll = 64;
  static constexpr uint64_t kSpinsBeforeYield = 1 << 16;

  NodeCollectives(Communicator& comm, void* mapping, size_t bytes);
  static Status SetUp(Session& session, Communicator& comm, std::unique_ptr<NodeCollectives>* out);

  Slot& SlotOf(Rank member, uint64_t call) const { return slots_[kSlots * member + call % kSlots]; }
  // Whether `member` published `call` (or a later one), remembering what it saw.
  bool Published(Rank member, uint64_t call);
  // Spins until `ready()`, progressing the session and checking the communicator on the way.
  template <class Ready>
  Status Await(Session& session, const char* what, Ready&& ready);
  Status AwaitAll(Session& session, const char* what, uint64_t call);
  // Starts the next call: the communicator can run it, and (with `writes`) no member still
  // reads this member's slot for it.
  Status Begin(Session& session, const char* what, bool writes, uint64_t* call);
  // Publishes `call` in this member's slot, with `bytes` of `data` in the second form.
  void Publish(uint64_t call);
  void Publish(uint64_t call, const void* data, size_t bytes);
  // RFT_ERR_TRUNCATE: `who` ("root 1 sent ", "member 2 gave ") published `given` bytes where this
  // member expected `expected`.
  Status Mismatch(const char* what, const std::string& who, uint64_t given, size_t expected) const;

  Communicator& comm_;
  Slot* slots_;
  size_t mapping_bytes_;
  Rank rank_;
  uint32_t size_;
  uint64_t calls_ = 0;
  std::vector<uint64_t> seen_;  // per member: the highest call seen published
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_NODE_COLLECTIVES_H_
