#include "detector/detector_node.h"

#include <algorithm>

namespace rft::detector {

DetectorNode::DetectorNode(Rank self, Rank size, const Options& options)
    : self_(self), options_(options), broadcast_(self, size) {}

void DetectorNode::Start(int64_t now_ns) {
  if (ring_.has_value()) return;
  ring_.emplace(self_, broadcast_.size(), options_.heartbeat, now_ns);
  first_word_until_ns_ = now_ns + options_.first_word_timeout_ns;
}

int64_t DetectorNode::next_timer_ns() const {
  return ring_.has_value() ? ring_->next_timer_ns() : HeartbeatRing::kNoTimer;
}

Rank DetectorNode::observer() const { return ring_.has_value() ? ring_->observer() : kInvalidRank; }
Rank DetectorNode::observed() const { return ring_.has_value() ? ring_->observed() : kInvalidRank; }

uint64_t DetectorNode::ChooseSlotWord(uint64_t main_word, uint64_t handover_word) const {
  const Rank observed = ring_.has_value() ? ring_->observed() : kInvalidRank;
  const bool main_names = HeartbeatWordWriter(main_word) == observed;
  const bool handover_names = HeartbeatWordWriter(handover_word) == observed;
  if (!handover_names || observed == kInvalidRank) return main_word;
  if (!main_names) return handover_word;
  // Both from it: the later counter (modulo 2^32) is the fresher word.
  const auto ahead =
      static_cast<int32_t>(static_cast<uint32_t>(handover_word) - static_cast<uint32_t>(main_word));
  return ahead > 0 ? handover_word : main_word;
}

void DetectorNode::OnTimer(int64_t now_ns, uint64_t slot_word, StarvationProbe& probe,
                           std::vector<NodeAction>* out) {
  if (!ring_.has_value() || now_ns < ring_->next_timer_ns()) return;
  if (!early_news_applied_) {
    // What came before Start: the first tick is due at once after it.
    early_news_applied_ = true;
    for (Rank rank : failed_before_start_) ring_->OnFailure(rank, now_ns, &ring_out_);
    for (const EarlyRequest& request : early_requests_) {
      ring_->OnObserveRequest(request.from, request.generation, request.size, now_ns, &ring_out_);
    }
    early_requests_.clear();
    TakeRingActions(out);
  }
  const Rank observed = ring_->observed();
  if (slot_word != last_slot_word_ || observed != last_observed_) {
    last_slot_word_ = slot_word;
    last_observed_ = observed;
    last_slot_change_ns_ = now_ns;
  }
  const int64_t timeout = options_.heartbeat.timeout_ns;
  // A process never heard from was excused for the first-word window: its silence, for the
  // starved-not-hung rule below, counts from the window's end. Counted from the start, a process
  // whose start-up is merely starved (its control thread asleep in the fence while its PMIx
  // thread waits for a core) would be past every excuse the moment the window closed.
  const bool never_heard = HeartbeatWordWriter(slot_word) != observed;
  const int64_t silent_since =
      never_heard ? std::max(last_slot_change_ns_, first_word_until_ns_) : last_slot_change_ns_;
  const int64_t silence = now_ns - silent_since;
  uint64_t word = slot_word;
  if (slot_word == EncodeHeartbeatWord(observed, kFarewellCounter)) {
    // It ended cleanly: its silence from now on is no failure. Fed as progress, so the ring
    // never suspects it (a later real put replaces the word and ends this).
    word = EncodeHeartbeatWord(observed, ++synthetic_counter_);
  } else if (observed != kInvalidRank && never_heard && now_ns < first_word_until_ns_) {
    // Not a word from it yet, early in the run or after a growth: it may still be on its way
    // out of the start-up fence or the merge (and will then answer an observe request sent to
    // it meanwhile).
    word = EncodeHeartbeatWord(observed, ++synthetic_counter_);
    ++first_word_ticks_;
  } else if (observed != kInvalidRank && silence >= timeout / 2 &&
             silence < kMaxStarvedTimeouts * timeout && probe.Starved(observed)) {
    // Silent, but a thread of it is runnable and waiting for a core (the node is loaded beyond
    // its cores, or the hypervisor took the CPU) or in a page fault: slow, not failed. A process
    // whose threads are all stopped or asleep is not excused, nor one starved for many timeouts.
    word = EncodeHeartbeatWord(observed, ++synthetic_counter_);
    ++starved_ticks_;
  }
  observed_never_heard_ = never_heard;
  ring_->OnTimer(now_ns, word, &ring_out_);
  TakeRingActions(out);
  observed_never_heard_ = false;
}

void DetectorNode::OnObserveRequest(Rank from, uint32_t generation, Rank requester_size,
                                    int64_t now_ns, std::vector<NodeAction>* out) {
  if (requester_size > broadcast_.size()) {
    // The requester grew already (or joined in the growth); this process has not yet. One
    // kept per requester, the latest: a request replaces the same requester's earlier ones.
    std::erase_if(requests_before_growth_, [&](const EarlyRequest& r) { return r.from == from; });
    requests_before_growth_.push_back({from, generation, requester_size});
    return;
  }
  if (!ring_.has_value()) {
    // A peer that started first lost its observed process and asks this one, which is still
    // on its way out of the start-up fence: answered at Start.
    early_requests_.push_back({from, generation, requester_size});
    return;
  }
  ring_->OnObserveRequest(from, generation, requester_size, now_ns, &ring_out_);
  TakeRingActions(out);
}

void DetectorNode::Grow(Rank new_size, int64_t now_ns, std::vector<NodeAction>* out) {
  if (new_size == broadcast_.size()) return;
  broadcast_.Grow(new_size, &broadcast_out_);
  TakeBroadcastActions(out);
  if (ring_.has_value()) {
    ring_->Grow(new_size, now_ns, options_.first_word_timeout_ns, &ring_out_);
    first_word_until_ns_ = now_ns + options_.first_word_timeout_ns;
    TakeRingActions(out);
  }
  // What was about the new ranks, in the order it came: failures first, so that a request
  // from a rank known failed meanwhile is refused.
  auto failed = std::exchange(failed_beyond_size_, {});
  for (const auto& [rank, source] : failed) {
    OnFailure(rank, source, leaving_, now_ns, out);  // kept again if still beyond the size
  }
  const RankSet delivered = std::exchange(delivered_beyond_size_, RankSet());
  for (Rank rank : delivered) {
    if (rank < new_size) {
      out->push_back(ReportFailure{rank, FailureSource::kPropagated});
    } else {
      delivered_beyond_size_.Insert(rank);
    }
  }
  auto requests = std::exchange(requests_before_growth_, {});
  for (const EarlyRequest& request : requests) {
    OnObserveRequest(request.from, request.generation, request.size, now_ns, out);
  }
}

void DetectorNode::OnBroadcastMessage(Rank from, const BroadcastMessage& message,
                                      std::vector<NodeAction>* out) {
  broadcast_.OnMessage(from, message, &broadcast_out_);
  TakeBroadcastActions(out);
}

bool DetectorNode::Broadcast(const BroadcastMessage& message, std::vector<NodeAction>* out) {
  const bool started = broadcast_.Broadcast(message, &broadcast_out_);
  TakeBroadcastActions(out);
  return started;
}

void DetectorNode::OnFailure(Rank rank, FailureSource source, bool while_leaving, int64_t now_ns,
                             std::vector<NodeAction>* out) {
  if (rank == self_) return;
  if (rank >= broadcast_.size()) {
    // A rank that joined in a growth this process has not made yet: its place in the ring and
    // the broadcast graph comes with Grow.
    failed_beyond_size_.emplace_back(rank, source);
    return;
  }
  const bool maybe_alive =
      source == FailureSource::kTransport || source == FailureSource::kApplication ||
      source == FailureSource::kAgreement || source == FailureSource::kDeadline;
  if (maybe_alive && !while_leaving) {
    // Told directly, so it ends itself even at n = 2, where nobody else would forward the news.
    out->push_back(SendBroadcast{.to = rank,
                                 .message = {.kind = BroadcastKind::kFailure,
                                             .context = 0,
                                             .epoch = 0,
                                             .origin = self_,
                                             .subject = rank}});
    if (options_.enforce_fail_stop) out->push_back(KillRank{rank});
  }
  if (ring_.has_value()) {
    ring_->OnFailure(rank, now_ns, &ring_out_);
    TakeRingActions(out);
  } else {
    failed_before_start_.Insert(rank);
  }
  broadcast_.OnFailure(rank, &broadcast_out_);
  TakeBroadcastActions(out);
  if (source != FailureSource::kPropagated && !while_leaving) {
    // News from this process's own sources spreads; what it delivered is forwarded already.
    broadcast_.Broadcast({.kind = BroadcastKind::kFailure,
                          .context = 0,
                          .epoch = 0,
                          .origin = self_,
                          .subject = rank},
                         &broadcast_out_);
    TakeBroadcastActions(out);
  }
}

void DetectorNode::TakeRingActions(std::vector<NodeAction>* out) {
  for (const HeartbeatAction& action : ring_out_) {
    if (const auto* put = std::get_if<PutHeartbeat>(&action)) {
      out->push_back(*put);
    } else if (const auto* request = std::get_if<SendObserveRequest>(&action)) {
      out->push_back(*request);
    } else if (const auto* suspect = std::get_if<Suspect>(&action)) {
      ++suspicions_;
      out->push_back(ReportFailure{suspect->rank, FailureSource::kHeartbeat,
                                   observed_never_heard_ && suspect->rank == last_observed_});
      if (options_.enforce_fail_stop) out->push_back(KillRank{suspect->rank});
    }
  }
  ring_out_.clear();
}

void DetectorNode::TakeBroadcastActions(std::vector<NodeAction>* out) {
  for (const BroadcastAction& action : broadcast_out_) {
    if (const auto* send = std::get_if<SendBroadcast>(&action)) {
      out->push_back(*send);
      continue;
    }
    const BroadcastMessage& message = std::get<DeliverBroadcast>(action).message;
    out->push_back(DeliverBroadcast{message});
    // A revocation is the layer above's. An abort is a failure too: the control plane marks
    // the rank aborted on the delivery above, before the report below records its failure.
    if (message.kind == BroadcastKind::kRevoke) continue;
    if (message.subject == self_) {
      // The aborting process announces its own abort before the launcher ends it.
      if (message.kind == BroadcastKind::kAborted && message.origin == self_) continue;
      // A process already ending is leaving anyway: the others may record its clean end as a
      // failure (its endpoints closed), which must not turn its end into an exit status 1.
      if (!leaving_) out->push_back(EndSelf{message.origin});
      continue;
    }
    const auto subject = static_cast<Rank>(message.subject);
    if (subject >= broadcast_.size()) delivered_beyond_size_.Insert(subject);
    out->push_back(ReportFailure{subject, FailureSource::kPropagated});
  }
  broadcast_out_.clear();
}

}  // namespace rft::detector
