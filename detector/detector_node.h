// rft::detector::DetectorNode: one process's whole failure-detection protocol, sans-I/O.
//
// The heartbeat ring (HeartbeatRing) and the reliable broadcast (ReliableBroadcast) are the two
// cores; this object holds the rules that join them, so the control plane that ships and the
// simulator in tests/sim/ run the same decisions (docs/detector.md, "The node"):
// - A suspect of the ring is reported (kHeartbeat) and, with fail-stop on, killed.
// - Every failure this process learns from its own sources is broadcast; one it learned from
//   the broadcast is only forwarded by the flood. A process on its way out broadcasts nothing:
//   its own endpoints closing is not news.
// - Fail-stop whatever the source: a rank declared failed on news that does not prove it dead
//   (a transport error, the caller's word, an agreement) is told so and killed; deaths the
//   launcher or the kernel reported need neither, and heartbeat suspects were killed when
//   suspected.
// - A process told that it was declared failed ends, unless it is already leaving.
// - A farewell word in the slot means the observed process ended cleanly: its silence is fed to
//   the ring as progress. A silent observed process with a thread runnable or in I/O (starved
//   of CPU, not hung) is excused the same way, from half a timeout of silence up to
//   kMaxStarvedTimeouts timeouts.
// - Early in the run (Options::first_word_timeout_ns from Start), an observed process that has
//   not put a word here yet is excused: the processes start their rings as each leaves the
//   start-up fence, and on a loaded node or in a large job one may leave it well after its
//   observer. Observe requests and failures that come before Start are kept for the ring.
//   Past the window, the silence of a process still never heard from counts from the window's
//   end, so a start-up that is only starved gets the starved-not-hung excuse above.
//
// - Growth (Grow: replacements join as new ranks): the ring and the broadcast grow; for the
//   first-word window from then on, an observed process that has not put here yet is excused
//   again, and the former observer keeps getting heartbeats (HeartbeatRing). Observe requests
//   from a larger ring, and failures of ranks beyond the size, that come before this process
//   grows are kept and applied when it does; failures of such ranks it delivered are reported
//   again then (ReportFailure), since the registry could not record them before.
//
// The driver passes the time in, performs the actions in order and feeds back what the registry
// records (OnFailure). Not thread-safe: one driver thread owns an instance.
#ifndef RFT_DETECTOR_DETECTOR_NODE_H_
#define RFT_DETECTOR_DETECTOR_NODE_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "base/rank_set.h"
#include "detector/failure_registry.h"
#include "detector/heartbeat_ring.h"
#include "detector/reliable_broadcast.h"

namespace rft::detector {

// Record `rank` as failed in the failure registry, from `source`. The registry answers (once
// per rank, maybe later) with OnFailure.
struct ReportFailure {
  Rank rank;
  FailureSource source;
  // A heartbeat suspect that never put a word here (a start-up that did not reach its ring in
  // the first-word window, not a process that stopped): the driver's log says which.
  bool never_heard = false;
  friend bool operator==(const ReportFailure&, const ReportFailure&) = default;
};
// Have the launcher kill `rank` (fail-stop).
struct KillRank {
  Rank rank;
  friend bool operator==(const KillRank&, const KillRank&) = default;
};
// This process was declared failed (news from `by`): it must end now.
struct EndSelf {
  Rank by;
  friend bool operator==(const EndSelf&, const EndSelf&) = default;
};
// PutHeartbeat and SendObserveRequest come from the ring; SendBroadcast from the broadcast (and
// the "you were declared failed" sent to an accused rank, which the broadcast delivers there).
// DeliverBroadcast comes for every delivery, before what it leads to: a failure is also
// reported (ReportFailure, kPropagated) or ends this process (EndSelf); a revocation is for the
// layer above.
using NodeAction = std::variant<PutHeartbeat, SendObserveRequest, SendBroadcast, DeliverBroadcast,
                                ReportFailure, KillRank, EndSelf>;

// Answers whether a same-node process is delayed rather than hung: a thread of it runnable (not
// running) or in an uninterruptible wait. The driver reads /proc; the simulator models it.
class StarvationProbe {
 public:
  virtual bool Starved(Rank rank) = 0;

 protected:
  ~StarvationProbe() = default;
};

class DetectorNode {
 public:
  struct Options {
    HeartbeatConfig heartbeat;
    bool enforce_fail_stop = true;  // emit KillRank for suspects and accused ranks
    // How long after Start an observed process that has not put a word here yet is excused
    // (the ring then suspects it δ later); 0: never.
    int64_t first_word_timeout_ns = 0;
  };
  // A heartbeat counter that says "I am ending cleanly". A real counter reaches it only after
  // 2^32 - 1 puts (197 days at 4 ms), and then only until its next put.
  static constexpr uint32_t kFarewellCounter = UINT32_MAX;
  // A starved process is excused for at most this many timeouts of silence.
  static constexpr int64_t kMaxStarvedTimeouts = 10;

  DetectorNode(Rank self, Rank size, const Options& options);

  // Handlers append their actions to *out in the order they must be performed, and never clear
  // it (the driver reuses one vector: a steady-state tick allocates nothing).

  // Starts the heartbeat ring (once every rank is connected; a ring started earlier would
  // suspect peers that have not begun to put). Before it, timers do nothing.
  void Start(int64_t now_ns);
  bool started() const { return ring_.has_value(); }

  // The timer may be due; `slot_word` is this process's heartbeat slot as read now. Nothing
  // happens before next_timer_ns(). `probe` is asked only about a silent observed process.
  void OnTimer(int64_t now_ns, uint64_t slot_word, StarvationProbe& probe,
               std::vector<NodeAction>* out);
  // Messages from `from`.
  void OnObserveRequest(Rank from, uint32_t generation, Rank requester_size, int64_t now_ns,
                        std::vector<NodeAction>* out);
  void OnBroadcastMessage(Rank from, const BroadcastMessage& message, std::vector<NodeAction>* out);
  // The registry recorded `rank` as failed from `source`; `while_leaving`: this process was
  // already ending when the news came (judged then, not when the driver gets to it).
  void OnFailure(Rank rank, FailureSource source, bool while_leaving, int64_t now_ns,
                 std::vector<NodeAction>* out);
  // Ranks [size(), new_size) join the job (see "Growth" above). Before Start, the ring starts
  // at the new size. new_size below size() is a bug; equal is a no-op.
  void Grow(Rank new_size, int64_t now_ns, std::vector<NodeAction>* out);
  Rank size() const { return broadcast_.size(); }

  // Starts a broadcast of a revocation (or any non-failure message) from this process.
  bool Broadcast(const BroadcastMessage& message, std::vector<NodeAction>* out);

  // This process is ending: accusations against it are no longer acted on. Never undone.
  void SetLeaving() { leaving_ = true; }
  bool leaving() const { return leaving_; }

  // When OnTimer must be called next (HeartbeatRing::kNoTimer: never, or not started).
  int64_t next_timer_ns() const;
  // The process this one puts its heartbeats to, or kInvalidRank (also before Start).
  Rank observer() const;
  // The process that puts its heartbeats to this one, or kInvalidRank (also before Start).
  Rank observed() const;
  // Which of this process's two heartbeat slots to pass to OnTimer: the one whose word names the
  // observed process (the hand-over slot holds words of a process that grew before this one
  // did), the fresher of the two if both do, else the main one.
  uint64_t ChooseSlotWord(uint64_t main_word, uint64_t handover_word) const;
  // The farewell this process puts to its observer as it ends cleanly.
  uint64_t FarewellWord() const { return EncodeHeartbeatWord(self_, kFarewellCounter); }

  Rank self() const { return self_; }
  const Options& options() const { return options_; }
  const HeartbeatRing* ring() const { return ring_.has_value() ? &*ring_ : nullptr; }
  const ReliableBroadcast& broadcast() const { return broadcast_; }
  uint64_t suspicions() const { return suspicions_; }
  uint64_t starved_ticks() const { return starved_ticks_; }
  uint64_t first_word_ticks() const { return first_word_ticks_; }
  uint64_t late_ticks() const { return ring_.has_value() ? ring_->late_ticks() : 0; }

 private:
  // Translate the cores' actions (appended since `start`) into node actions.
  void TakeRingActions(std::vector<NodeAction>* out);
  void TakeBroadcastActions(std::vector<NodeAction>* out);

  Rank self_;
  Options options_;
  std::optional<HeartbeatRing> ring_;
  ReliableBroadcast broadcast_;
  bool leaving_ = false;
  std::vector<HeartbeatAction> ring_out_;  // reused
  std::vector<BroadcastAction> broadcast_out_;

  // Progress fed to the ring for an observed process that left cleanly or is starved.
  uint32_t synthetic_counter_ = 0;
  uint64_t last_slot_word_ = 0;
  Rank last_observed_ = kInvalidRank;
  int64_t last_slot_change_ns_ = 0;
  uint64_t suspicions_ = 0;
  uint64_t starved_ticks_ = 0;
  // Until then an observed process without a word here is excused: Start or the latest Grow
  // plus the first-word timeout.
  int64_t first_word_until_ns_ = 0;
  uint64_t first_word_ticks_ = 0;
  // During a tick: the observed process has not put a word here yet.
  bool observed_never_heard_ = false;
  struct EarlyRequest {
    Rank from;
    uint32_t generation;
    Rank size;
  };
  // News for the ring that came before Start, given to it at the first tick.
  std::vector<EarlyRequest> early_requests_;
  RankSet failed_before_start_;
  bool early_news_applied_ = false;
  // News about ranks beyond the size, and requests from larger rings: applied at Grow.
  std::vector<EarlyRequest> requests_before_growth_;
  std::vector<std::pair<Rank, FailureSource>> failed_beyond_size_;
  // Failures of ranks beyond the size delivered by the broadcast: the registry could not record
  // them (it knows only the job's ranks), so they are reported again at Grow.
  RankSet delivered_beyond_size_;
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_DETECTOR_NODE_H_
