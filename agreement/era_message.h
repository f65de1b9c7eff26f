// rft::agreement: the values an agreement combines, its decision, and the messages of the
// early-returning agreement (EraNode), with their wire encoding.
//
// Ranks here are member ranks of one communicator (0 .. size-1); the service translates to job
// ranks. Every combination is idempotent (AND, MAX, MIN, intersection), so a contribution that
// reaches the root twice, or through a process that later failed, changes nothing.
#ifndef RFT_AGREEMENT_ERA_MESSAGE_H_
#define RFT_AGREEMENT_ERA_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::agreement {

// What each member contributes, and what the tree combines.
struct AgreeValue {
  uint32_t flag = UINT32_MAX;  // bitwise AND: the user's flag of rft_comm_agree
  uint32_t max = 0;            // maximum (shrink: the highest context epoch in use)
  std::vector<uint64_t> bits;  // bitwise AND, word by word (shrink: the free context pairs)
  RankSet acked;               // intersection: the failures every contributor acknowledged
  // The lowest agreement number the contributor has not decided (minimum): once a decision
  // says every member is past number k, decisions before k are no longer kept.
  uint64_t undecided_floor = 0;

  void Merge(const AgreeValue& other);
  friend bool operator==(const AgreeValue&, const AgreeValue&) = default;
};

// The outcome every member that returns gets.
struct Decision {
  AgreeValue value;
  RankSet failed;  // the agreed failed members
  // ULFM's error: a member failed that not every participant had acknowledged.
  bool unacknowledged_failure() const { return !failed.Difference(value.acked).empty(); }
  friend bool operator==(const Decision&, const Decision&) = default;
};

struct EraMessage {
  enum class Kind : uint8_t {
    // A subtree's combined value, sent to the parent; `failed` is the sender's view, and only
    // an Up sent under the receiver's own view counts towards its completion.
    kUp = 1,
    // The decision (`failed` is its failed set): down the tree, and to whoever asks or may be
    // a new root's path to it.
    kDecided = 2,
    // "Your view is behind mine": `failed` is the sender's view; the receiver learns it.
    kView = 3,
  };
  Kind kind = Kind::kUp;
  uint64_t seq = 0;  // the agreement's number on its communicator (0, 1, ...)
  RankSet failed;
  AgreeValue value;  // kUp, kDecided
  friend bool operator==(const EraMessage&, const EraMessage&) = default;
};

// Limits a decoder enforces (a peer's message never makes this process allocate more).
inline constexpr size_t kMaxValueWords = 1024;     // 65,536 bits
inline constexpr size_t kMaxSetIntervals = 65536;  // per rank set

// Appends the encoding of `message` to `out`.
void EncodeEraMessage(const EraMessage& message, std::vector<std::byte>* out);
// RFT_ERR_ARG naming the field for anything malformed: an unknown kind, a length past the end or
// the limits, intervals out of order, overlapping or beyond `members`, trailing bytes.
StatusOr<EraMessage> DecodeEraMessage(std::span<const std::byte> bytes, uint32_t members);

}  // namespace rft::agreement

#endif  // RFT_AGREEMENT_ERA_MESSAGE_H_
