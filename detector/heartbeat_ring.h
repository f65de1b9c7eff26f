// rft::detector::HeartbeatRing: the sans-I/O core of the heartbeat failure detector.
//
// Every process is observed by its successor on the ring of live ranks (0..size-1, skipping the
// ranks known failed). Every period η the observed process puts one 64-bit word into a single
// slot in its observer's registered memory; the observer reads that slot on its own timer and
// suspects its observed predecessor when it has seen no new word from it for the timeout δ.
//
// The core does no I/O and reads no clock: the driver passes the time in, performs the actions it
// returns (one-sided puts, messages, reports) and feeds back what it learns. The same code runs
// under the real control thread and under the simulator in tests/sim/.
//
// Protocol rules (docs/detector.md, "Heartbeat ring"):
// - Slot word: the writer's rank + 1 in the high 32 bits and a per-writer counter in the low 32
//   (EncodeHeartbeatWord). The observer counts a change of the word as progress only when the
//   word names the process it currently observes and differs from the last word of that
//   process seen, so a late put from a former observed process is not taken for a sign of life
//   of the new one, nor an old word seen again after another writer's. 0 means "never written".
// - Own jitter: a timer that fires more than 2η after the previous one means this process was
//   not scheduled; that lateness (minus the one period that was due anyway) is added to the
//   observed process's grace window instead of being held against it.
// - Suspicion is final (fail-stop is enforced by killing the suspect), so on suspicion the core
//   records the failure itself and repairs the ring at once: it observes the next live
//   predecessor and asks it, with a new generation, to put to this process from now on. The
//   driver must report every Suspect action to the failure registry; the registry's later
//   OnFailure call for the same rank is then a no-op.
// - Observe requests: a process accepts a request from `from` unless `from` is known failed, or
//   lies strictly between this process and its current observer (a request older than the one
//   that installed the current observer), or repeats the current observer with an older
//   generation. A request from beyond the current observer is accepted: the requester skipped
//   the ranks between because they were declared failed, which this process may not know yet.
// - A process that learns its observer failed moves on by itself to the next live rank after
//   that observer, and puts a heartbeat to it at once.
// - Growth (replacements join as new ranks [size, new_size), never in a failed rank's place):
//   the new ranks sit on the ring between the highest live old rank and the lowest, so only the
//   edge that wraps around changes. The process whose observer was across the wrap puts to the
//   first new rank from then on, and keeps putting to its former observer for a hand-over
//   window too (into that observer's second slot, which the driver reads beside the first): the
//   processes grow one by one, and the former observer still watches it until it grows itself. The
//   process whose observed process was across the wrap observes the last new rank from then on,
//   with a fresh grace window (the node excuses a rank that has not put yet; DetectorNode). Every
//   other edge stays.
//
// Not thread-safe: one driver thread owns an instance.
#ifndef RFT_DETECTOR_HEARTBEAT_RING_H_
#define RFT_DETECTOR_HEARTBEAT_RING_H_

#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "base/rank_set.h"

namespace rft::detector {

struct HeartbeatConfig {
  int64_t period_ns = 4'000'000;    // η: how often a process puts its heartbeat
  int64_t timeout_ns = 20'000'000;  // δ: silence after which the observed process is suspected
};

// The slot word a writer puts; `writer` <= kMaxRank.
inline constexpr uint64_t EncodeHeartbeatWord(Rank writer, uint32_t counter) {
  return (static_cast<uint64_t>(writer) + 1) << 32 | counter;
}
// The rank that wrote `word`, or kInvalidRank for the never-written word 0.
inline constexpr Rank HeartbeatWordWriter(uint64_t word) {
  return static_cast<Rank>((word >> 32) - 1);  // 0 - 1 wraps to kInvalidRank
}

// Put `word` into the heartbeat slot of `observer` (one-sided; no reply expected). A hand-over
// put (see "Growth") goes to the observer's second slot, so that it never overwrites the word of
// the process the observer watches after it grew.
struct PutHeartbeat {
  Rank observer;
  uint64_t word;
  bool handover = false;
  friend bool operator==(const PutHeartbeat&, const PutHeartbeat&) = default;
};
// Report `rank` to the failure registry: its observer saw no progress for δ.
struct Suspect {
  Rank rank;
  friend bool operator==(const Suspect&, const Suspect&) = default;
};
// Ask `to` to put its heartbeats to this process from now on (deliver with OnObserveRequest).
// `size`: the job size the requester's ring knows (a growth reaches the processes one by one).
struct SendObserveRequest {
  Rank to;
  uint32_t generation;
  Rank size;
  friend bool operator==(const SendObserveRequest&, const SendObserveRequest&) = default;
};
using HeartbeatAction = std::variant<PutHeartbeat, Suspect, SendObserveRequest>;

class HeartbeatRing {
 public:
  // Every rank in 0..size-1 starts live; `self` < size. The grace window of the first observed
  // process starts at `now_ns`, and the first timer is due at once (to put the first heartbeat).
  HeartbeatRing(Rank self, Rank size, HeartbeatConfig config, int64_t now_ns);

  // Every event handler appends its actions to *out in the order they must be performed and
  // never clears it: the driver clears and reuses one vector, so a steady-state tick allocates
  // nothing.

  // The timer fired (at or after next_timer_ns()); `local_slot_word` is the current content of
  // this process's heartbeat slot. May put a heartbeat, and may suspect the observed process
  // (Suspect then SendObserveRequest to the next live predecessor).
  void OnTimer(int64_t now_ns, uint64_t local_slot_word, std::vector<HeartbeatAction>* out);

  // `rank` is known failed (from the registry). Idempotent. If it was the observed process the
  // next live predecessor is observed and asked to put here; if it was the observer, a heartbeat
  // goes to the next live successor at once. OnFailure(self) means this process was declared
  // failed: the core goes silent for good (the driver is expected to exit).
  void OnFailure(Rank rank, int64_t now_ns, std::vector<HeartbeatAction>* out);

  // `from`, whose ring knows `requester_size` ranks, asks this process to put its heartbeats to
  // it (see the acceptance rule above). An accepted request is answered with an immediate
  // heartbeat. A request made before the requester grew, across ranks that joined since, is
  // served for the hand-over window beside the current observer (the requester grows soon and
  // then observes a new rank). requester_size above size() is a bug: the driver keeps such a
  // request until this process grows.
  void OnObserveRequest(Rank from, uint32_t generation, Rank requester_size, int64_t now_ns,
                        std::vector<HeartbeatAction>* out);

  // Ranks [size(), new_size) join as live (see "Growth" above); `handover_ns`: how long the
  // former observer still gets this process's heartbeats when the observer changes. A rank of
  // the new range known failed is fed with OnFailure afterwards. new_size below size() is a
  // bug; equal is a no-op.
  void Grow(Rank new_size, int64_t now_ns, int64_t handover_ns, std::vector<HeartbeatAction>* out);
  // The former observer still served after a growth, or kInvalidRank.
  Rank former_observer() const { return former_observer_; }

  // When OnTimer must be called next; kNoTimer when there is nothing to observe or to put
  // (size 1, every other rank failed, or this process declared failed). Changes after every
  // event, so the driver re-arms after each call.
  static constexpr int64_t kNoTimer = std::numeric_limits<int64_t>::max();
  int64_t next_timer_ns() const;

  Rank self() const { return self_; }
  Rank size() const { return size_; }
  // The process this one puts its heartbeats to, or kInvalidRank.
  Rank observer() const { return observer_; }
  // The process whose heartbeats this one checks, or kInvalidRank.
  Rank observed() const { return observed_; }
  // The generation of the latest observe request this process sent (0 before the first).
  uint32_t generation() const { return generation_; }
  // Ranks this core treats as failed: learned through OnFailure or suspected by itself.
  const RankSet& failed() const { return failed_; }
  // Observe requests ignored as stale.
  uint64_t stale_requests() const { return stale_requests_; }
  // Timer firings judged late (more than 2η after the previous one).
  uint64_t late_ticks() const { return late_ticks_; }

 private:
  // Records `rank` as failed and repairs whichever ring edge it held.
  void Learn(Rank rank, int64_t now_ns, std::vector<HeartbeatAction>* out);
  // Starts observing the nearest live predecessor (if it changed) and asks it to put here.
  void RepairObserved(int64_t now_ns, std::vector<HeartbeatAction>* out);
  void PutNow(int64_t now_ns, std::vector<HeartbeatAction>* out);
  // Steps from self up to `rank`, modulo size; orders candidates for the observer.
  uint64_t DistanceUp(Rank rank) const;

  Rank self_;
  Rank size_;
  HeartbeatConfig config_;
  RankSet failed_;
  bool declared_failed_ = false;

  // Observer side: what this process checks.
  Rank observed_ = kInvalidRank;
  uint32_t generation_ = 0;
  uint64_t last_word_ = 0;
  // Start of the observed process's current grace window: when progress was last seen, or when
  // observation began, pushed later by this process's own lateness.
  int64_t grace_start_ns_ = 0;
  int64_t last_tick_ns_ = 0;

  // Observed side: where this process puts.
  Rank observer_ = kInvalidRank;
  uint32_t observer_generation_ = 0;  // of the request that installed observer_, 0 if none
  // After a growth moved the observer: the former one still gets every put until then.
  Rank former_observer_ = kInvalidRank;
  int64_t handover_until_ns_ = 0;
  int64_t handover_ns_ = 0;  // the window of the latest growth
  uint32_t counter_ = 0;
  int64_t next_put_ns_ = 0;

  uint64_t stale_requests_ = 0;
  uint64_t late_ticks_ = 0;
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_HEARTBEAT_RING_H_
