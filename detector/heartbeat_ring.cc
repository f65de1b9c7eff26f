#include "detector/heartbeat_ring.h"

#include <algorithm>

#include "base/check.h"
#include "detector/live_ring.h"

namespace rft::detector {

HeartbeatRing::HeartbeatRing(Rank self, Rank size, HeartbeatConfig config, int64_t now_ns)
    : self_(self), size_(size), config_(config) {
  RFT_CHECK(size >= 1 && size - 1 <= kMaxRank, "HeartbeatRing: size out of range");
  RFT_CHECK(self < size, "HeartbeatRing: self must be below size");
  RFT_CHECK(config.period_ns > 0 && config.timeout_ns > 0,
            "HeartbeatRing: period and timeout must be positive");
  observed_ = PreviousLiveRank(failed_, size_, self_);
  observer_ = NextLiveRank(failed_, size_, self_);
  grace_start_ns_ = now_ns;
  last_tick_ns_ = now_ns;
  next_put_ns_ = now_ns;
}

uint64_t HeartbeatRing::DistanceUp(Rank rank) const {
  return (static_cast<uint64_t>(rank) + size_ - self_) % size_;
}

int64_t HeartbeatRing::next_timer_ns() const {
  if (declared_failed_ || (observed_ == kInvalidRank && observer_ == kInvalidRank)) {
    return kNoTimer;
  }
  // Ticks come at least every period even when nothing is due, so that a long gap between two
  // ticks can only mean this process was late (the own-jitter rule in OnTimer).
  int64_t next = last_tick_ns_ + config_.period_ns;
  if (observer_ != kInvalidRank) next = std::min(next, next_put_ns_);
  if (observed_ != kInvalidRank) next = std::min(next, grace_start_ns_ + config_.timeout_ns);
  return next;
}

void HeartbeatRing::OnTimer(int64_t now_ns, uint64_t local_slot_word,
                            std::vector<HeartbeatAction>* out) {
  if (declared_failed_) return;
  const int64_t gap = now_ns - last_tick_ns_;
  last_tick_ns_ = now_ns;
  if (gap > 2 * config_.period_ns) {
    // This process was not scheduled for a while; the peer cannot be blamed for that time.
    ++late_ticks_;
    grace_start_ns_ += gap - config_.period_ns;
  }
  if (observer_ != kInvalidRank && now_ns >= next_put_ns_) PutNow(now_ns, out);
  if (observed_ == kInvalidRank) return;
  if (HeartbeatWordWriter(local_slot_word) == observed_ && local_slot_word != last_word_) {
    last_word_ = local_slot_word;
    grace_start_ns_ = now_ns;
  }
  if (now_ns - grace_start_ns_ >= config_.timeout_ns) {
    const Rank suspect = observed_;
    out->push_back(Suspect{suspect});
    Learn(suspect, now_ns, out);
  }
}

void HeartbeatRing::OnFailure(Rank rank, int64_t now_ns, std::vector<HeartbeatAction>* out) {
  if (rank >= size_ || declared_failed_) return;
  if (rank == self_) {
    declared_failed_ = true;
    observed_ = kInvalidRank;
    observer_ = kInvalidRank;
    return;
  }
  Learn(rank, now_ns, out);
}

void HeartbeatRing::Learn(Rank rank, int64_t now_ns, std::vector<HeartbeatAction>* out) {
  if (failed_.Contains(rank)) return;
  failed_.Insert(rank);
  if (rank == observer_) {
    // Past the old observer, not from self: the ranks between were skipped by the requester
    // that installed it because they had been declared failed, even if this process has not
    // heard of it yet. Coming back around to self means nobody is left.
    const Rank next = NextLiveRank(failed_, size_, rank);
    observer_ = next == self_ ? kInvalidRank : next;
    observer_generation_ = 0;
    if (observer_ != kInvalidRank) PutNow(now_ns, out);
  }
  if (rank == observed_) RepairObserved(now_ns, out);
}

void HeartbeatRing::RepairObserved(int64_t now_ns, std::vector<HeartbeatAction>* out) {
  const Rank next = PreviousLiveRank(failed_, size_, self_);
  if (next == observed_) return;
  observed_ = next;
  grace_start_ns_ = now_ns;
  if (observed_ == kInvalidRank) return;
  ++generation_;
  out->push_back(SendObserveRequest{observed_, generation_, size_});
}

void HeartbeatRing::OnObserveRequest(Rank from, uint32_t generation, Rank requester_size,
                                     int64_t now_ns, std::vector<HeartbeatAction>* out) {
  RFT_CHECK(requester_size <= size_, "HeartbeatRing: an observe request from a larger ring");
  if (declared_failed_ || from >= size_ || from == self_ || failed_.Contains(from)) {
    ++stale_requests_;
    return;
  }
  if (requester_size < size_ && observer_ != kInvalidRank &&
      DistanceUp(from) > DistanceUp(requester_size)) {
    // Made before the requester grew: the ranks that joined since lie between it and this
    // process, and the first of them is this one's observer now. Served until the requester
    // grows (within the window) and observes the last of them instead.
    if (observer_ != from) {
      former_observer_ = from;
      handover_until_ns_ = now_ns + handover_ns_;
      PutNow(now_ns, out);
    }
    return;
  }
  if (observer_ != kInvalidRank) {
    const uint64_t requester = DistanceUp(from);
    const uint64_t current = DistanceUp(observer_);
    if (requester < current || (requester == current && generation < observer_generation_)) {
      ++stale_requests_;
      return;
    }
  }
  observer_ = from;
  observer_generation_ = generation;
  PutNow(now_ns, out);
}

void HeartbeatRing::PutNow(int64_t now_ns, std::vector<HeartbeatAction>* out) {
  ++counter_;
  const uint64_t word = EncodeHeartbeatWord(self_, counter_);
  out->push_back(PutHeartbeat{observer_, word});
  if (former_observer_ != kInvalidRank) {
    if (now_ns < handover_until_ns_ && former_observer_ != observer_ &&
        !failed_.Contains(former_observer_)) {
      out->push_back(PutHeartbeat{former_observer_, word, /*handover=*/true});
    } else {
      former_observer_ = kInvalidRank;
    }
  }
  next_put_ns_ = now_ns + config_.period_ns;
}

void HeartbeatRing::Grow(Rank new_size, int64_t now_ns, int64_t handover_ns,
                         std::vector<HeartbeatAction>* out) {
  RFT_CHECK(new_size >= size_ && new_size - 1 <= kMaxRank,
            "HeartbeatRing::Grow: the size only grows, up to kMaxRank + 1");
  if (new_size == size_) return;
  const Rank old_size = size_;
  handover_ns_ = handover_ns;
  // An edge crosses the wrap when going up from its writer passes old_size - 1; the new ranks
  // then lie on it. With nobody else left (kInvalidRank) the ring simply forms again.
  const bool observer_across = observer_ == kInvalidRank || observer_ <= self_;
  const bool observed_across = observed_ == kInvalidRank || observed_ >= self_;
  size_ = new_size;
  if (declared_failed_) return;
  if (observer_across) {
    const Rank first_new = NextLiveRank(failed_, size_, old_size - 1);
    if (first_new != self_ && first_new != observer_) {
      former_observer_ = observer_;
      handover_until_ns_ = now_ns + handover_ns;
      observer_ = first_new;
      observer_generation_ = 0;
      PutNow(now_ns, out);
    }
  }
  if (observed_across) {
    const Rank last_new = PreviousLiveRank(failed_, size_, self_);
    if (last_new != self_ && last_new != observed_) {
      observed_ = last_new;
      grace_start_ns_ = now_ns;
    }
  }
}

}  // namespace rft::detector
