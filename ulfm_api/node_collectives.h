// rft::api::NodeCollectives: the blocking barrier, bcast, reduce and allreduce of up to kMaxBytes
// on a communicator whose members all run on this node, through an area of shared memory the
// members map instead of messages (docs/shm.md, "Node collectives").
//
// The area, per member: a line with the number of the last call it began ("how far I got"),
// kEntries entries of 16 bytes for the data of a bcast or reduce of at most kEntryBytes (the
// call's number and length in one word, the data in the next: four calls to a cache line), and
// kSlots slots for the rest (the call's number, the number of the call whose data the slot
// holds and its length starting a line, the data right after, so 8 bytes travel in the flag's
// own line). A member writes only its own part: one killed while writing leaves at most its own
// entry or slot unpublished, and the others, waiting for it, learn of the failure from the
// registry and return RFT_ERR_PROC_FAILED, as a schedule of messages would; a revocation ends the
// waits with RFT_ERR_REVOKED.
//
// Call g (every member counts its calls on the area alike: members call collectives in one
// order) uses entry g % kEntries or slot g % kSlots. A member that writes data first waits until
// every member began call g - kEntries + 1 (g - kSlots + 1 for a slot: none still reads what it
// held before), then publishes the data and g with release order, and its "how far" line (a
// barrier publishes g in its slot only: the others wait there, one line a call). Then it waits
// for what it needs: barrier everyone's g, bcast the root's data, allreduce everyone's; at
// reduce the root waits for everyone's and the others for nobody. So a bcast root and the others of
// a reduce run up to kEntries - 1 calls ahead (Open MPI's eager messages pipeline those two the
// same way), and the one behind reads four of their calls in one cache line, while barrier and
// allreduce, in lock step, cost one exchange of cache lines (consecutive calls in different lines:
// a member that publishes its next call does not take away the line another still polls). A member
// remembers how far each other got, and reads its "how far" line again only when that is not far
// enough. Contributions are combined in member order, from the highest down, so an allreduce gives
// the same bits at every member.
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
  static constexpr size_t kEntryBytes = 8;
  static constexpr uint64_t kEntries = 32;

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
  // Data of a bcast or reduce of at most kEntryBytes: (call << 8) | length, then the data.
  struct Entry {
    std::atomic<uint64_t> word;
    std::byte data[kEntryBytes];
  };
  struct alignas(128) Slot {
    std::atomic<uint64_t> call;       // the last call a barrier published here (0: none yet)
    std::atomic<uint64_t> data_call;  // the call whose data the slot holds (0: none yet)
    uint64_t bytes;                   // that call's data
    std::byte data[kMaxBytes];
  };
  // The slots of every member first (as they were before the entries came: barrier and
  // allreduce measured slower with each member's slots moved), then each member's line and
  // entries.
  struct alignas(128) MemberSlots {
    Slot slots[kSlots];
  };
  struct alignas(128) MemberEntries {
    std::atomic<uint64_t> began;  // the last call this member began (0: none yet)
    alignas(128) Entry entries[kEntries];
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free);
  static_assert(sizeof(Entry) == 16);
  static constexpr unsigned kSpinsPerPoll = 64;
  static constexpr uint64_t kSpinsBeforeYield = 1 << 16;

  NodeCollectives(Communicator& comm, void* mapping, size_t bytes);
  static Status SetUp(Session& session, Communicator& comm, std::unique_ptr<NodeCollectives>* out);

  Entry& EntryOf(Rank member, uint64_t call) const {
    return entries_[member].entries[call % kEntries];
  }
  Slot& SlotOf(Rank member, uint64_t call) const { return slots_[member].slots[call % kSlots]; }
  // Whether `member` began `call` (or a later one), remembering how far it got.
  bool Began(Rank member, uint64_t call);
  // Whether `member` reached the barrier `call` (or a later one), remembering it.
  bool PassedBarrier(Rank member, uint64_t call);
  // Whether `member` published its data for `call`; then its length and data. Looked for in an
  // entry first when `in_entry`, else in a slot, then in the other: members whose lengths differ
  // still meet there, and Mismatch names both.
  bool HasData(Rank member, uint64_t call, bool in_entry, uint64_t* bytes, const std::byte** data);
  // Spins until `ready()`, progressing the session and checking the communicator on the way.
  template <class Ready>
  Status Await(Session& session, const char* what, Ready&& ready);
  // Starts the next call: the communicator can run it, and when this member writes data (in an
  // entry when `in_entry`, else in a slot), no member still reads what it held.
  Status Begin(Session& session, const char* what, bool writes, bool in_entry, uint64_t* call);
  // Publishes that this member began `call`: always in its "how far" line, and for a barrier
  // also in the call's slot, where the others wait for it.
  void PublishBegan(uint64_t call, bool in_slot);
  // Publishes this member's data for `call`, in an entry or a slot, then that it began it.
  void PublishData(uint64_t call, bool in_entry, const void* data, size_t bytes);
  Status Mismatch(const char* what, const std::string& who, uint64_t given, size_t expected) const;

  Communicator& comm_;
  MemberSlots* slots_;
  MemberEntries* entries_;
  size_t mapping_bytes_;
  Rank rank_;
  uint32_t size_;
  uint64_t calls_ = 0;
  std::vector<uint64_t> seen_;  // per member: the highest call it was seen to begin
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_NODE_COLLECTIVES_H_
