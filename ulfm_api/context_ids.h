// rft::api::ContextIds: which data-plane contexts a process's communicators use, and how the
// members of a new communicator agree on one.
//
// Every communicator owns a pair of contexts, (2k, 2k + 1): point-to-point traffic in the first,
// its collectives' internal messages in the second, so neither ever matches the other. Pair 0
// is COMM_WORLD's, pair 1 COMM_SELF's; the others are taken by communicator creation and given
// back when the communicator is freed.
//
// Creating a communicator is collective over its parent: each member proposes (Propose) the
// pairs it has free and the highest epoch it has used; an allreduce combines the proposals
// (Combine: bitwise AND of the free sets, maximum of the epochs); every member takes the same
// result (Take): the lowest pair free at every member, and an epoch above every epoch any member
// has used. Pairs are reused, so a member may still hold the pair's older life (a communicator
// it has not freed yet, or messages still on their way); the new epoch tells them apart: the
// data plane drops what carries an older one (DataPlane::SetContextEpoch).
//
// Pure and single-threaded (the API's thread); no I/O.
#ifndef RFT_ULFM_API_CONTEXT_IDS_H_
#define RFT_ULFM_API_CONTEXT_IDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/status.h"

namespace rft::api {

// Contexts per communicator: its point-to-point one and its collective one.
inline constexpr uint32_t kContextsPerCommunicator = 2;

class ContextIds {
 public:
  // Communicators a process may hold at once (the proposal carries one bit per pair).
  static constexpr uint32_t kPairs = 2048;
  static constexpr uint32_t kWorldPair = 0;
  static constexpr uint32_t kSelfPair = 1;

  // What one member proposes, and what the allreduce combines; sent as raw bytes (every member
  // runs this same program on one kind of node, so no byte-order conversion is needed).
  struct Proposal {
    std::array<uint64_t, kPairs / 64> free;  // bit p: pair p is free here
    uint32_t epoch = 0;                      // the highest epoch this member has used
    uint32_t refused = 0;  // non-zero: a member refused its arguments (all then fail)
  };
  // The outcome of Take: the communicator's contexts and their epoch.
  struct Allocation {
    uint32_t pair = 0;
    uint32_t epoch = 0;
    uint32_t p2p_context() const { return pair * kContextsPerCommunicator; }
    uint32_t collective_context() const { return pair * kContextsPerCommunicator + 1; }
  };

  ContextIds();  // world's and self's pairs taken, at epoch 0

  Proposal Propose() const;
  // `inout` becomes the combination of both: the operator of the allreduce (AND of the free
  // sets, maximum of the epochs and of the refusals).
  static void Combine(const Proposal& in, Proposal* inout);
  // Takes the pair the combined proposal names. RFT_ERR_OTHER naming the limit when no pair is
  // free at every member (the same at every member, since they combined the same proposals).
  StatusOr<Allocation> Take(const Proposal& combined);
  // For a creation that completes later (ishrink) while others may run meanwhile: reserves up to
  // `max_pairs` of the lowest free pairs (taken until TakeReserved) and proposes only those, with
  // the current epoch. Creations in between neither see nor take them.
  Proposal Reserve(uint32_t max_pairs = kReservedPairs);
  static constexpr uint32_t kReservedPairs = 64;
  // Ends a reservation: gives the reserved pairs back and takes the lowest pair of `combined`
  // (the members' reservations ANDed), with epoch combined.epoch + 1 whatever this process
  // created meanwhile, so every member gets the same allocation. RFT_ERR_OTHER when the members'
  // reservations have no pair in common (the same at every member).
  StatusOr<Allocation> TakeReserved(const Proposal& reserved, const Proposal& combined);
  // Gives a reservation back without taking anything (the creation failed).
  void CancelReservation(const Proposal& reserved);
  // Takes exactly `allocation`, which others agreed on without this process (a replacement
  // joining a communicator its spawners built, docs/recovery.md): its epoch becomes the highest
  // used here. RFT_ERR_ARG for a pair out of range or taken already.
  Status TakeExact(const Allocation& allocation);
  // Gives `pair` back; RFT_ERR_ARG for a predefined pair or one that is not taken.
  Status Release(uint32_t pair);

  bool IsTaken(uint32_t pair) const {
    return pair < kPairs && (free_[pair / 64] >> (pair % 64) & 1) == 0;
  }
  uint32_t pairs_taken() const;
  uint32_t epoch() const { return epoch_; }

 private:
  std::array<uint64_t, kPairs / 64> free_;
  uint32_t epoch_ = 0;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_CONTEXT_IDS_H_
