// rft::agreement::EraNode: one member's early-returning agreement on one communicator, sans-I/O.
//
// The protocol (docs/agreement.md):
// - A view is the set of members this one knows failed. The live members, in rank order, form
//   a binomial tree rooted at the lowest (position p's parent is p with its lowest set bit
//   cleared).
// - Up: a member that has started agreement k and heard Up(k) from each child of its view
//   sends Up(k, its view, the combined value) to its parent. An Up counts only when it was sent
//   under the receiver's own view; a sender that is behind is told the receiver's view (View)
//   and sends again; a receiver that is behind learns the sender's view first. So when the root
//   has an Up from each child, every member of its view contributed: the flag is the AND of a
//   set containing every survivor (validity), and the failed set is the root's view.
// - Down: the root decides; a decision travels down the tree (Decided) and each member returns
//   as soon as it has it (early return); its node keeps the decision to answer late peers.
// - Failures: a view change restarts the Ups of every undecided agreement along the new tree.
//   A decided member sends its decision to its new parent and children, so a new root adopts
//   a decision that any live member holds instead of deciding anew (uniform among survivors).
// - Decisions are kept until one says every member is past them (AgreeValue::undecided_floor).
//
// Limits (documented in docs/agreement.md): uniform among the members that survive; a member
// that returned and then failed before its decision reached any survivor may have returned a
// value the survivors never see. Messages are assumed reliable between live members, and a
// failure, once known anywhere, becomes known everywhere (the detector's broadcast, and the
// views these messages carry).
//
// Handlers append actions to *out in the order they must be performed and never clear it. Not
// thread-safe: one driver thread (the control thread, or the simulator) owns an instance.
#ifndef RFT_AGREEMENT_ERA_NODE_H_
#define RFT_AGREEMENT_ERA_NODE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "agreement/era_message.h"
#include "base/rank_set.h"

namespace rft::agreement {

// Send `message` to member `to`.
struct SendEra {
  Rank to;
  EraMessage message;
};
// Agreement `seq` is decided here (once per number).
struct Decide {
  uint64_t seq;
  Decision decision;
};
// Member `member` was learned failed from a message (the driver records it in the registry).
struct LearnFailed {
  Rank member;
};
using EraAction = std::variant<SendEra, Decide, LearnFailed>;

class EraNode {
 public:
  // At most this many agreements run here at once (started, not decided); Start holds the rest
  // back, in order, until earlier ones are decided: a program may have any number outstanding.
  // No live member can then send a message more than kMaxAhead agreements beyond the first one
  // not running here (each one between is running at the sender, waiting for this member), so
  // messages further ahead come only from a faulty peer: dropped (counted), and no peer can
  // make this node buffer without bound.
  static constexpr uint64_t kMaxAhead = 64;

  // Member `self` of `size`, knowing `failed` (members, not job ranks) at the start.
  EraNode(Rank self, uint32_t size, const RankSet& failed);

  // Starts this member's next agreement (its number is the count of Starts before) with its
  // contribution; its undecided_floor is set here. Returns the number. With kMaxAhead running,
  // it is held and runs once an earlier one is decided.
  uint64_t Start(AgreeValue contribution, std::vector<EraAction>* out);
  // This member's next agreement was decided elsewhere (the fast path: a tree over the data
  // plane with every member alive, docs/agreement.md) with `decision`: kept as if decided here,
  // so late peers get it and a member that fell back to this protocol adopts it. Returns the
  // number.
  uint64_t Install(const Decision& decision, std::vector<EraAction>* out);
  // A message from member `from` (already decoded and checked against the size).
  void OnMessage(Rank from, const EraMessage& message, std::vector<EraAction>* out);
  // Member `member` is known failed (the registry, whatever the source). Idempotent.
  void OnFailure(Rank member, std::vector<EraAction>* out);
  // This member's process ends cleanly: each decision it keeps goes to every other live
  // member. A member that fell back from the fast path may be waiting on this one for it, and
  // a departed member is not failed, so no view change would ever route around it.
  void Depart(std::vector<EraAction>* out);

  Rank self() const { return self_; }
  uint32_t size() const { return size_; }
  const RankSet& failed() const { return failed_; }
  // Agreements numbered so far (started, including those held back).
  uint64_t started() const { return next_seq_; }
  // Of those, the ones held back (kMaxAhead running), for tests.
  size_t held() const { return held_.size(); }
  // The decision of agreement `seq`, while it is kept.
  std::optional<Decision> decision(uint64_t seq) const;
  // Whether some started agreement is not decided here.
  bool undecided() const;
  // Whether agreement `seq` is started (held back or running) here and not decided, and this
  // member is not failed.
  bool Undecided(uint64_t seq) const;
  // Agreements kept (started or decided and not yet collected), for tests.
  size_t kept() const { return instances_.size(); }
  // Messages dropped: from an unknown or failed member (a decision too: see docs/agreement.md),
  // too far ahead, or stale.
  uint64_t dropped() const { return dropped_; }

  // The tree of the current view, for the deadline guard (agreement/deadline_guard.h).
  // The members agreement `seq` waits for here: the children whose Up under the current view
  // was not counted. Empty when it is decided or not started here, or this member failed.
  std::vector<Rank> Awaited(uint64_t seq) const;
  Rank parent() const { return parent_; }    // kInvalidRank at the root
  uint32_t depth() const { return depth_; }  // 0 at the root
  // Height of this member's subtree (0 for a leaf) and of the whole tree.
  uint32_t subtree_height() const { return subtree_height_; }
  uint32_t tree_height() const { return tree_height_; }

 private:
  struct Instance {
    bool started = false;         // running: its contribution counts, its Ups go out
    bool held = false;            // numbered, waiting for a place among the kMaxAhead running
    AgreeValue value;             // the own contribution combined with the Ups counted so far
    RankSet reported;             // members whose Up under the current view was counted
    Rank sent_to = kInvalidRank;  // the parent the Up under the current view went to
    std::optional<Decision> decision;
  };

  void Run(uint64_t seq, Instance& instance, std::vector<EraAction>* out);
  // Runs held agreements while fewer than kMaxAhead run. Called at the end of each entry point
  // only (never while another call iterates over instances_).
  void RunHeld(std::vector<EraAction>* out);
  void HandleMessage(Rank from, const EraMessage& message, std::vector<EraAction>* out);
  // The first agreement not running here: messages from kMaxAhead beyond it on are dropped.
  uint64_t first_not_running() const { return held_.empty() ? next_seq_ : held_.front(); }
  void ReplayEarly(uint64_t seq, std::vector<EraAction>* out);
  void MergeFailed(const RankSet& failed, bool learned, std::vector<EraAction>* out);
  void OnViewChange(std::vector<EraAction>* out);
  void TryComplete(uint64_t seq, Instance& instance, std::vector<EraAction>* out);
  void Adopt(uint64_t seq, Instance& instance, const Decision& decision, Rank from,
             std::vector<EraAction>* out);
  // Sends the decision to the parent and children of the current view, except `except`.
  void Forward(uint64_t seq, const Instance& instance, Rank except, std::vector<EraAction>* out);
  void Collect(uint64_t floor);
  void Send(Rank to, EraMessage message, std::vector<EraAction>* out) {
    out->push_back(SendEra{to, std::move(message)});
  }

  Rank self_;
  uint32_t size_;
  RankSet failed_;
  bool self_failed_ = false;  // declared failed: fail-stop ends this process; it takes no part
  // The tree of the current view.
  Rank parent_ = kInvalidRank;  // kInvalidRank: this member is the root
  std::vector<Rank> children_;
  uint32_t depth_ = 0;
  uint32_t subtree_height_ = 0;
  uint32_t tree_height_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t running_ = 0;        // started, not decided
  std::deque<uint64_t> held_;   // numbers held back by Start, in order
  uint64_t collect_below_ = 0;  // decided agreements numbered below it are collected
  std::map<uint64_t, Instance> instances_;
  // Messages for agreements not started here yet, replayed at their Start.
  std::map<uint64_t, std::vector<std::pair<Rank, EraMessage>>> early_;
  uint64_t dropped_ = 0;
};

}  // namespace rft::agreement

#endif  // RFT_AGREEMENT_ERA_NODE_H_
