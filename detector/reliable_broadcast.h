// rft::detector::ReliableBroadcast: the sans-I/O core of the reliable broadcast that spreads
// failures (and, later, revocations) to every live process.
//
// The graph is binomial: the neighbours of a process are the ranks at self ± 2^i (mod size) for
// i = 0..⌈log2 size⌉-1 that are not known failed, plus its nearest live successor and
// predecessor, so the distance-1 ring edges are repaired around failures. Without failures any
// rank is at most ⌈log2 size⌉ hops away (write the distance in binary).
//
// Every process delivers and forwards a message once: a message is identified by its key
// (kind, context, epoch, subject) — not by its origin, so two processes announcing the same
// failure produce one flood. Each process keeps a log of the messages it delivered; when a
// failure gives it a ring neighbour it did not have, it sends that neighbour its whole log. As
// the live ranks stay connected by the repaired ring, a message delivered by one process that
// stays live reaches every process that stays live (docs/detector.md, "Reliable broadcast").
//
// Epochs: the core keeps a current epoch per context (SetContextEpoch); a message whose epoch is
// below its context's current epoch is dropped and counted, and raising an epoch prunes the log
// entries it makes stale. The log therefore holds one entry per distinct live key: bounded by
// the number of failures plus the number of (context, epoch) revocations not yet superseded.
//
// The core does no I/O; the driver sends, delivers and feeds failures back. Not thread-safe.
#ifndef RFT_DETECTOR_RELIABLE_BROADCAST_H_
#define RFT_DETECTOR_RELIABLE_BROADCAST_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::detector {

enum class BroadcastKind : uint8_t {
  kFailure = 1,  // subject: the failed rank
  kRevoke = 2,   // the communicator context `context` at `epoch` is revoked; subject unused (0)
  kAborted = 3,  // subject: a rank another process aborted (it fails, and its failure is an abort)
};

struct BroadcastMessage {
  BroadcastKind kind = BroadcastKind::kFailure;
  uint32_t context = 0;
  uint32_t epoch = 0;
  Rank origin = 0;  // the process that started the flood; informative, not part of the key
  uint64_t subject = 0;
  friend bool operator==(const BroadcastMessage&, const BroadcastMessage&) = default;
};

// The wire form: kind u8, three zero bytes, context u32, epoch u32, origin u32, subject u64, all
// little-endian.
inline constexpr size_t kBroadcastMessageSize = 24;
void EncodeBroadcastMessage(const BroadcastMessage& message,
                            std::span<std::byte, kBroadcastMessageSize> out);
// RFT_ERR_ARG naming the offending field for a wrong length, an unknown kind, non-zero reserved
// bytes, origin kInvalidRank, or a kFailure or kAborted subject that is not a rank.
StatusOr<BroadcastMessage> DecodeBroadcastMessage(std::span<const std::byte> in);

// Send `message` to `to` (deliver there with OnMessage(self, message)).
struct SendBroadcast {
  Rank to;
  BroadcastMessage message;
  friend bool operator==(const SendBroadcast&, const SendBroadcast&) = default;
};
// Hand `message` to the layer above (the registry, the revoke logic). Once per key.
struct DeliverBroadcast {
  BroadcastMessage message;
  friend bool operator==(const DeliverBroadcast&, const DeliverBroadcast&) = default;
};
using BroadcastAction = std::variant<SendBroadcast, DeliverBroadcast>;

class ReliableBroadcast {
 public:
  // Every rank in 0..size-1 starts live; `self` < size.
  ReliableBroadcast(Rank self, Rank size);

  // Event handlers append their actions to *out in order and never clear it (the driver reuses
  // one vector). A DeliverBroadcast always comes before the sends that forward it.

  // Starts a flood from this process: `message.origin` is set to self, then the message is
  // delivered here and sent to every neighbour. Returns false, doing nothing, if its key was
  // already delivered or its epoch is stale.
  bool Broadcast(BroadcastMessage message, std::vector<BroadcastAction>* out);

  // `message` arrived from `from`. First time for its key: deliver, log, and forward to every
  // neighbour but `from`. Duplicates and stale epochs are dropped and counted. Messages from
  // ranks known failed are still taken: they were sent before the failure and remain true.
  void OnMessage(Rank from, const BroadcastMessage& message, std::vector<BroadcastAction>* out);

  // `rank` is known failed. Idempotent. No message goes to it from now on; a new ring neighbour
  // that results (one that was not a neighbour already) is sent the whole log.
  void OnFailure(Rank rank, std::vector<BroadcastAction>* out);

  // Ranks [size(), new_size) join the job (replacements for failed processes; a growth never
  // revives a rank). The graph is recomputed over the new size; every neighbour this process
  // did not have before is sent the whole log, so what was delivered here before the growth
  // reaches the new ranks. Messages from ranks beyond the size are taken before the growth
  // too: a new rank may broadcast before this process has grown. new_size below size() is a
  // bug; equal is a no-op.
  void Grow(Rank new_size, std::vector<BroadcastAction>* out);

  // Raises the current epoch of `context` (lowering is ignored: epochs only move forward).
  void SetContextEpoch(uint32_t context, uint32_t epoch);
  // 0 for a context never set.
  uint32_t ContextEpoch(uint32_t context) const;

  // The current neighbours, ascending.
  std::vector<Rank> Neighbors() const;

  Rank self() const { return self_; }
  Rank size() const { return size_; }
  const RankSet& failed() const { return failed_; }
  // Messages delivered and not pruned by an epoch change, in key order.
  const std::vector<BroadcastMessage>& log() const { return log_; }
  size_t log_size() const { return log_.size(); }
  // The neighbours of `self` in a job of `size` ranks while none has failed: the ranks at
  // self ± 2^i (the ring's two included), sorted, without `self`. A symmetric relation (a is b's
  // neighbour exactly when b is a's), of at most 2 · ceil(log2 size) ranks: the control plane's
  // message channel connects these pairs at start-up (docs/verbs.md).
  static std::vector<Rank> StaticNeighbors(Rank self, Rank size);
  bool Delivered(const BroadcastMessage& message) const;
  uint64_t duplicates_dropped() const { return duplicates_dropped_; }
  uint64_t stale_dropped() const { return stale_dropped_; }

 private:
  struct ContextEpochEntry {
    uint32_t context;
    uint32_t epoch;
  };

  // StaticNeighbors appended to *out, its earlier entries untouched: allocation-free once *out
  // holds enough. AppendNeighbors starts from it, so the two agree by construction.
  static void AppendStaticNeighbors(Rank self, Rank size, std::vector<Rank>* out);
  // Appends the neighbours (sorted, unique, excluding failed ranks and self) to *out.
  void AppendNeighbors(std::vector<Rank>* out) const;
  // True when `rank` sits at self ± 2^i for some i.
  bool AtPowerOfTwoDistance(Rank rank) const;
  bool IsStale(const BroadcastMessage& message) const;
  // Delivers, logs and forwards a message seen for the first time.
  void Accept(Rank from, const BroadcastMessage& message, std::vector<BroadcastAction>* out);

  Rank self_;
  Rank size_;
  uint32_t log2_size_;  // ⌈log2 size⌉: the number of power-of-two distances
  RankSet failed_;
  std::vector<BroadcastMessage> log_;      // sorted by key
  std::vector<ContextEpochEntry> epochs_;  // sorted by context; few entries
  std::vector<Rank> scratch_;              // neighbour list reused by each forward
  uint64_t duplicates_dropped_ = 0;
  uint64_t stale_dropped_ = 0;
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_RELIABLE_BROADCAST_H_
