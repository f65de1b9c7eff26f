#include "agreement/era_node.h"

#include <algorithm>
#include <bit>

namespace rft::agreement {

EraNode::EraNode(Rank self, uint32_t size, const RankSet& failed) : self_(self), size_(size) {
  std::vector<EraAction> none;
  MergeFailed(failed, /*learned=*/false, &none);
  if (failed_.empty()) OnViewChange(&none);  // the tree of the full view
}

uint64_t EraNode::Start(AgreeValue contribution, std::vector<EraAction>* out) {
  const uint64_t seq = next_seq_++;
  Instance& instance = instances_[seq];
  instance.value = std::move(contribution);
  if (running_ >= kMaxAhead || !held_.empty()) {
    instance.held = true;
    held_.push_back(seq);
    return seq;
  }
  Run(seq, instance, out);
  Collect(collect_below_);
  RunHeld(out);
  return seq;
}

void EraNode::Run(uint64_t seq, Instance& instance, std::vector<EraAction>* out) {
  instance.held = false;
  instance.started = true;
  ++running_;
  uint64_t floor = seq;
  for (const auto& [number, other] : instances_) {
    if (other.started && !other.decision.has_value()) {
      floor = std::min(floor, number);
      break;  // ordered by number: the first undecided one is the lowest
    }
  }
  instance.value.undecided_floor = floor;
  TryComplete(seq, instance, out);
  ReplayEarly(seq, out);
}

void EraNode::RunHeld(std::vector<EraAction>* out) {
  // Held ones are numbered after every running one, so they run in number order.
  while (running_ < kMaxAhead && !held_.empty() && !self_failed_) {
    const uint64_t seq = held_.front();
    held_.pop_front();
    Run(seq, instances_[seq], out);
  }
  Collect(collect_below_);
}

uint64_t EraNode::Install(const Decision& decision, std::vector<EraAction>* out) {
  const uint64_t seq = next_seq_++;
  Instance& instance = instances_[seq];
  instance.started = true;
  instance.decision = decision;
  collect_below_ = std::max(collect_below_, decision.value.undecided_floor);
  // A member known failed here means others may have fallen back to this protocol and wait for
  // this member in a tree without it: they get the decision as from any decided member. (With
  // nobody failed, a later failure forwards it: OnViewChange.)
  if (!failed_.empty()) Forward(seq, instance, kInvalidRank, out);
  ReplayEarly(seq, out);
  Collect(collect_below_);
  RunHeld(out);
  return seq;
}

void EraNode::ReplayEarly(uint64_t seq, std::vector<EraAction>* out) {
  // What came for it before it started (Ups of faster children, a decision), in arrival order.
  auto early = early_.find(seq);
  if (early == early_.end()) return;
  std::vector<std::pair<Rank, EraMessage>> messages = std::move(early->second);
  early_.erase(early);
  for (auto& [from, message] : messages) HandleMessage(from, message, out);
}

void EraNode::OnMessage(Rank from, const EraMessage& message, std::vector<EraAction>* out) {
  HandleMessage(from, message, out);
  RunHeld(out);
}

void EraNode::HandleMessage(Rank from, const EraMessage& message, std::vector<EraAction>* out) {
  if (from >= size_ || from == self_ || self_failed_) {
    ++dropped_;
    return;
  }
  // Whatever its kind, a message says who its sender knows failed.
  MergeFailed(message.failed, /*learned=*/true, out);
  // Nothing from a member known failed counts, a decision included: once this member sent an
  // Up under a view, a root that completes that view may decide on it, and only a decision
  // still held by a live member may be adopted instead (docs/agreement.md, "The protocol").
  if (self_failed_ || failed_.Contains(from)) {
    ++dropped_;
    return;
  }
  const bool decided_news = message.kind == EraMessage::Kind::kDecided;
  if (message.kind == EraMessage::Kind::kView) return;
  auto it = instances_.find(message.seq);
  if (it == instances_.end() || !it->second.started) {
    if (it == instances_.end() && message.seq < next_seq_) {
      ++dropped_;  // collected: every member was past it, so this is an old message
      return;
    }
    // Not running here yet (not started, or held back): kept for its start, unless a live
    // member could not have sent it (kMaxAhead).
    if (message.seq - first_not_running() >= kMaxAhead) {
      ++dropped_;
      return;
    }
    early_[message.seq].emplace_back(from, message);
    return;
  }
  Instance& instance = it->second;
  if (decided_news) {
    if (!instance.decision.has_value()) {
      Adopt(message.seq, instance, Decision{message.value, message.failed}, from, out);
    }
  } else if (instance.decision.has_value()) {
    // A late or orphaned Up: answer it with the decision (early return's other half).
    Send(from,
         EraMessage{.kind = EraMessage::Kind::kDecided,
                    .seq = message.seq,
                    .failed = instance.decision->failed,
                    .value = instance.decision->value},
         out);
  } else if (message.failed != failed_) {
    // Sent under an older view (this member merged the sender's above, so its own is a
    // superset): it covers a subtree that no longer exists. The sender learns this view.
    Send(from,
         EraMessage{
             .kind = EraMessage::Kind::kView, .seq = message.seq, .failed = failed_, .value = {}},
         out);
  } else {
    instance.value.Merge(message.value);
    instance.reported.Insert(from);
    TryComplete(message.seq, instance, out);
  }
  Collect(collect_below_);
}

void EraNode::Depart(std::vector<EraAction>* out) {
  if (self_failed_) return;
  for (const auto& [seq, instance] : instances_) {
    if (!instance.decision.has_value()) continue;
    const EraMessage message{.kind = EraMessage::Kind::kDecided,
                             .seq = seq,
                             .failed = instance.decision->failed,
                             .value = instance.decision->value};
    for (Rank member = 0; member < size_; ++member) {
      if (member != self_ && !failed_.Contains(member)) Send(member, message, out);
    }
  }
}

void EraNode::OnFailure(Rank member, std::vector<EraAction>* out) {
  if (member >= size_ || failed_.Contains(member)) return;
  RankSet one{member};
  MergeFailed(one, /*learned=*/false, out);
  Collect(collect_below_);
  RunHeld(out);
}

std::optional<Decision> EraNode::decision(uint64_t seq) const {
  auto it = instances_.find(seq);
  if (it == instances_.end()) return std::nullopt;
  return it->second.decision;
}

std::vector<Rank> EraNode::Awaited(uint64_t seq) const {
  std::vector<Rank> awaited;
  if (!Undecided(seq)) return awaited;
  auto it = instances_.find(seq);
  for (Rank child : children_) {
    if (!it->second.reported.Contains(child)) awaited.push_back(child);
  }
  return awaited;
}

bool EraNode::Undecided(uint64_t seq) const {
  auto it = instances_.find(seq);
  return it != instances_.end() && (it->second.started || it->second.held) &&
         !it->second.decision.has_value() && !self_failed_;
}

bool EraNode::undecided() const {
  return std::any_of(instances_.begin(), instances_.end(), [](const auto& entry) {
    return (entry.second.started || entry.second.held) && !entry.second.decision.has_value();
  });
}

void EraNode::MergeFailed(const RankSet& failed, bool learned, std::vector<EraAction>* out) {
  bool changed = false;
  for (Rank member : failed) {
    if (member >= size_ || failed_.Contains(member)) continue;
    failed_.Insert(member);
    changed = true;
    if (learned) out->push_back(LearnFailed{member});
  }
  if (changed) OnViewChange(out);
}

void EraNode::OnViewChange(std::vector<EraAction>* out) {
  if (failed_.Contains(self_)) {
    self_failed_ = true;  // fail-stop ends this process; until then it must not take part
    return;
  }
  // The binomial tree over the live members in rank order.
  RankSet live = RankSet::Range(0, size_);
  live -= failed_;
  const size_t count = live.size();
  const size_t position = *live.IndexOf(self_);
  parent_ = position == 0 ? kInvalidRank : live.Nth(position & (position - 1));
  children_.clear();
  const size_t lowest_bit = position == 0 ? count : (position & (~position + 1));
  for (size_t step = 1; step < lowest_bit && position + step < count; step <<= 1) {
    children_.push_back(live.Nth(position + step));
  }
  // The subtree spans positions [position, position + min(lowest bit, count - position)).
  const auto ceil_log2 = [](size_t n) {
    uint32_t bits = 0;
    while ((size_t{1} << bits) < n) ++bits;
    return bits;
  };
  depth_ = static_cast<uint32_t>(std::popcount(position));
  subtree_height_ = ceil_log2(std::min(lowest_bit, count - position));
  tree_height_ = ceil_log2(count);
  for (auto& [seq, instance] : instances_) {
    if (instance.decision.has_value()) {
      // A new root, or a parent waiting for this member's Up, must reach this decision.
      Forward(seq, instance, kInvalidRank, out);
    } else if (instance.started) {
      instance.reported.clear();
      instance.sent_to = kInvalidRank;
      TryComplete(seq, instance, out);
    }
  }
}

void EraNode::TryComplete(uint64_t seq, Instance& instance, std::vector<EraAction>* out) {
  if (!instance.started || instance.decision.has_value() || self_failed_) return;
  for (Rank child : children_) {
    if (!instance.reported.Contains(child)) return;
  }
  if (parent_ == kInvalidRank) {
    // The root of this view heard from its whole tree: every live member contributed.
    Adopt(seq, instance, Decision{instance.value, failed_}, kInvalidRank, out);
    return;
  }
  if (instance.sent_to == parent_) return;
  instance.sent_to = parent_;
  Send(parent_,
       EraMessage{
           .kind = EraMessage::Kind::kUp, .seq = seq, .failed = failed_, .value = instance.value},
       out);
}

void EraNode::Adopt(uint64_t seq, Instance& instance, const Decision& decision, Rank from,
                    std::vector<EraAction>* out) {
  instance.decision = decision;
  --running_;  // only running agreements are adopted (Install decides without running)
  // Passed on before it is decided here: a member returns only after its children's copies
  // are on their way (on shared memory, in their queues), so a member that dies right after
  // returning has already handed its decision on.
  Forward(seq, instance, from, out);
  out->push_back(Decide{seq, decision});
  collect_below_ = std::max(collect_below_, decision.value.undecided_floor);
}

void EraNode::Forward(uint64_t seq, const Instance& instance, Rank except,
                      std::vector<EraAction>* out) {
  if (self_failed_) return;
  const EraMessage message{.kind = EraMessage::Kind::kDecided,
                           .seq = seq,
                           .failed = instance.decision->failed,
                           .value = instance.decision->value};
  if (parent_ != kInvalidRank && parent_ != except) Send(parent_, message, out);
  for (Rank child : children_) {
    if (child != except) Send(child, message, out);
  }
}

void EraNode::Collect(uint64_t floor) {
  // Every member of the view that decided `floor`'s agreement had decided every one before it.
  for (auto it = instances_.begin(); it != instances_.end() && it->first < floor;) {
    if (it->second.decision.has_value()) {
      it = instances_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace rft::agreement
