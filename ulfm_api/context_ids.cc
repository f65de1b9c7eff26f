#include "ulfm_api/context_ids.h"

#include <algorithm>
#include <bit>
#include <string>

namespace rft::api {

ContextIds::ContextIds() {
  free_.fill(~uint64_t{0});
  free_[0] &= ~(uint64_t{1} << kWorldPair);
  free_[0] &= ~(uint64_t{1} << kSelfPair);
}

ContextIds::Proposal ContextIds::Propose() const {
  Proposal proposal;
  proposal.free = free_;
  proposal.epoch = epoch_;
  return proposal;
}

void ContextIds::Combine(const Proposal& in, Proposal* inout) {
  for (size_t i = 0; i < inout->free.size(); ++i) inout->free[i] &= in.free[i];
  inout->epoch = std::max(inout->epoch, in.epoch);
  inout->refused = std::max(inout->refused, in.refused);
}

StatusOr<ContextIds::Allocation> ContextIds::Take(const Proposal& combined) {
  for (size_t word = 0; word < combined.free.size(); ++word) {
    // A member's own bit must be free here too: the combination includes this member.
    const uint64_t candidates = combined.free[word] & free_[word];
    if (candidates == 0) continue;
    const auto pair = static_cast<uint32_t>(word * 64 + std::countr_zero(candidates));
    free_[word] &= ~(uint64_t{1} << (pair % 64));
    epoch_ = std::max(epoch_, combined.epoch) + 1;
    return Allocation{.pair = pair, .epoch = epoch_};
  }
  return OtherError("no communicator context is free at every member: each process may hold " +
                    std::to_string(kPairs - 2) +
                    " communicators besides COMM_WORLD and COMM_SELF; free some first");
}

Status ContextIds::TakeExact(const Allocation& allocation) {
  if (allocation.pair >= kPairs || IsTaken(allocation.pair)) {
    return ArgError("communicator context pair " + std::to_string(allocation.pair) +
                    ": expected a free pair below " + std::to_string(kPairs));
  }
  free_[allocation.pair / 64] &= ~(uint64_t{1} << (allocation.pair % 64));
  epoch_ = std::max(epoch_, allocation.epoch);
  return Status::Ok();
}

ContextIds::Proposal ContextIds::Reserve(uint32_t max_pairs) {
  Proposal reserved;
  reserved.free.fill(0);
  reserved.epoch = epoch_;
  for (size_t word = 0; word < free_.size() && max_pairs > 0; ++word) {
    while (free_[word] != 0 && max_pairs > 0) {
      const uint64_t lowest = free_[word] & (~free_[word] + 1);
      free_[word] &= ~lowest;
      reserved.free[word] |= lowest;
      --max_pairs;
    }
  }
  return reserved;
}

void ContextIds::CancelReservation(const Proposal& reserved) {
  for (size_t word = 0; word < free_.size(); ++word) free_[word] |= reserved.free[word];
}

StatusOr<ContextIds::Allocation> ContextIds::TakeReserved(const Proposal& reserved,
                                                          const Proposal& combined) {
  CancelReservation(reserved);
  for (size_t word = 0; word < combined.free.size(); ++word) {
    const uint64_t candidates = combined.free[word] & reserved.free[word];
    if (candidates == 0) continue;
    const auto pair = static_cast<uint32_t>(word * 64 + std::countr_zero(candidates));
    free_[word] &= ~(uint64_t{1} << (pair % 64));
    const uint32_t epoch = combined.epoch + 1;
    epoch_ = std::max(epoch_, epoch);
    return Allocation{.pair = pair, .epoch = epoch};
  }
  return OtherError(
      "no communicator context is free at every member among the " +
      std::to_string(kReservedPairs) +
      " each reserved for a non-blocking creation (the members hold different communicators); "
      "use the blocking form");
}

Status ContextIds::Release(uint32_t pair) {
  if (pair == kWorldPair || pair == kSelfPair) {
    return ArgError("context pair " + std::to_string(pair) +
                    " belongs to COMM_WORLD or COMM_SELF, which are never freed");
  }
  if (!IsTaken(pair)) {
    return ArgError("context pair " + std::to_string(pair) + " is not in use; expected one taken");
  }
  free_[pair / 64] |= uint64_t{1} << (pair % 64);
  return Status::Ok();
}

uint32_t ContextIds::pairs_taken() const {
  uint32_t free = 0;
  for (uint64_t word : free_) free += static_cast<uint32_t>(std::popcount(word));
  return kPairs - free;
}

}  // namespace rft::api
