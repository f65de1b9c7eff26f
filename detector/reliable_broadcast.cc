#include "detector/reliable_broadcast.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/byte_order.h"
#include "base/check.h"
#include "detector/live_ring.h"

namespace rft::detector {

namespace {

// Wire offsets (see kBroadcastMessageSize).
constexpr size_t kKindAt = 0;
constexpr size_t kReservedAt = 1;
constexpr size_t kReservedSize = 3;
constexpr size_t kContextAt = 4;
constexpr size_t kEpochAt = 8;
constexpr size_t kOriginAt = 12;
constexpr size_t kSubjectAt = 16;

// Orders messages by their dedupe key (kind, context, epoch, subject); origin is deliberately not
// part of it. A function object so the searches of every incoming message inline it.
struct KeyOrder {
  bool operator()(const BroadcastMessage& a, const BroadcastMessage& b) const {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.context != b.context) return a.context < b.context;
    if (a.epoch != b.epoch) return a.epoch < b.epoch;
    return a.subject < b.subject;
  }
};
constexpr KeyOrder KeyLess{};

}  // namespace

void EncodeBroadcastMessage(const BroadcastMessage& message,
                            std::span<std::byte, kBroadcastMessageSize> out) {
  std::memset(out.data(), 0, kBroadcastMessageSize);
  out[kKindAt] = static_cast<std::byte>(message.kind);
  StoreLittleEndian<uint32_t>(out, kContextAt, message.context);
  StoreLittleEndian<uint32_t>(out, kEpochAt, message.epoch);
  StoreLittleEndian<uint32_t>(out, kOriginAt, message.origin);
  StoreLittleEndian<uint64_t>(out, kSubjectAt, message.subject);
}

StatusOr<BroadcastMessage> DecodeBroadcastMessage(std::span<const std::byte> in) {
  if (in.size() != kBroadcastMessageSize) {
    return ArgError("broadcast message: length " + std::to_string(in.size()) + ", expected " +
                    std::to_string(kBroadcastMessageSize));
  }
  const std::byte* p = in.data();
  const auto kind = static_cast<uint8_t>(p[kKindAt]);
  if (kind != static_cast<uint8_t>(BroadcastKind::kFailure) &&
      kind != static_cast<uint8_t>(BroadcastKind::kRevoke) &&
      kind != static_cast<uint8_t>(BroadcastKind::kAborted)) {
    return ArgError("broadcast message: unknown kind " + std::to_string(kind));
  }
  for (size_t i = 0; i < kReservedSize; ++i) {
    if (p[kReservedAt + i] != std::byte{0}) {
      return ArgError("broadcast message: reserved byte " + std::to_string(kReservedAt + i) +
                      " is " + std::to_string(static_cast<unsigned>(p[kReservedAt + i])) +
                      ", expected 0");
    }
  }
  BroadcastMessage m;
  m.kind = static_cast<BroadcastKind>(kind);
  m.context = LoadLittleEndian<uint32_t>(in, kContextAt);
  m.epoch = LoadLittleEndian<uint32_t>(in, kEpochAt);
  m.origin = LoadLittleEndian<uint32_t>(in, kOriginAt);
  m.subject = LoadLittleEndian<uint64_t>(in, kSubjectAt);
  if (m.origin == kInvalidRank) {
    return ArgError("broadcast message: origin " + std::to_string(m.origin) + " is not a rank");
  }
  if (m.kind != BroadcastKind::kRevoke && m.subject > kMaxRank) {
    return ArgError(std::string("broadcast message: ") +
                    (m.kind == BroadcastKind::kFailure ? "failure" : "abort") + " subject " +
                    std::to_string(m.subject) + " is not a rank");
  }
  return m;
}

namespace {
uint32_t CeilLog2(Rank size) {
  return size <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(size - 1));
}

// Sorts (*out)[first..] and drops its repeats.
void SortUniqueFrom(size_t first, std::vector<Rank>* out) {
  const auto begin = out->begin() + static_cast<std::ptrdiff_t>(first);
  std::sort(begin, out->end());
  out->erase(std::unique(begin, out->end()), out->end());
}
}  // namespace

void ReliableBroadcast::AppendStaticNeighbors(Rank self, Rank size, std::vector<Rank>* out) {
  const size_t first_index = out->size();
  const uint32_t log2_size = CeilLog2(size);
  for (uint32_t i = 0; i < log2_size; ++i) {
    const uint64_t step = uint64_t{1} << i;  // < size
    out->push_back(static_cast<Rank>((self + step) % size));
    out->push_back(static_cast<Rank>((self + size - step) % size));
  }
  SortUniqueFrom(first_index, out);
  out->erase(std::remove(out->begin() + static_cast<std::ptrdiff_t>(first_index), out->end(), self),
             out->end());
}

std::vector<Rank> ReliableBroadcast::StaticNeighbors(Rank self, Rank size) {
  std::vector<Rank> out;
  AppendStaticNeighbors(self, size, &out);
  return out;
}

ReliableBroadcast::ReliableBroadcast(Rank self, Rank size)
    : self_(self), size_(size), log2_size_(CeilLog2(size)) {
  RFT_CHECK(size >= 1 && size - 1 <= kMaxRank, "ReliableBroadcast: size out of range");
  RFT_CHECK(self < size, "ReliableBroadcast: self must be below size");
}

void ReliableBroadcast::AppendNeighbors(std::vector<Rank>* out) const {
  // The static neighbours less the failed ones, plus the ring's two live ranks: the same ± 2^i
  // walk as StaticNeighbors, so the control plane's start-up QPs are the broadcast's own edges.
  const size_t first = out->size();
  AppendStaticNeighbors(self_, size_, out);
  out->erase(std::remove_if(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
                            [&](Rank rank) { return failed_.Contains(rank); }),
             out->end());
  for (Rank rank : {NextLiveRank(failed_, size_, self_), PreviousLiveRank(failed_, size_, self_)}) {
    if (rank != kInvalidRank && rank != self_ && !failed_.Contains(rank)) out->push_back(rank);
  }
  SortUniqueFrom(first, out);
}

std::vector<Rank> ReliableBroadcast::Neighbors() const {
  std::vector<Rank> out;
  AppendNeighbors(&out);
  return out;
}

bool ReliableBroadcast::AtPowerOfTwoDistance(Rank rank) const {
  const uint64_t up = (static_cast<uint64_t>(rank) + size_ - self_) % size_;
  const uint64_t down = (static_cast<uint64_t>(self_) + size_ - rank) % size_;
  return std::has_single_bit(up) || std::has_single_bit(down);
}

void ReliableBroadcast::SetContextEpoch(uint32_t context, uint32_t epoch) {
  auto it = std::lower_bound(epochs_.begin(), epochs_.end(), context,
                             [](const ContextEpochEntry& e, uint32_t c) { return e.context < c; });
  if (it != epochs_.end() && it->context == context) {
    if (epoch <= it->epoch) return;
    it->epoch = epoch;
  } else {
    epochs_.insert(it, ContextEpochEntry{context, epoch});
  }
  // Entries of this context below the new epoch can never be delivered again: forget them.
  std::erase_if(log_,
                [&](const BroadcastMessage& m) { return m.context == context && m.epoch < epoch; });
}

uint32_t ReliableBroadcast::ContextEpoch(uint32_t context) const {
  auto it = std::lower_bound(epochs_.begin(), epochs_.end(), context,
                             [](const ContextEpochEntry& e, uint32_t c) { return e.context < c; });
  return it != epochs_.end() && it->context == context ? it->epoch : 0;
}

bool ReliableBroadcast::IsStale(const BroadcastMessage& message) const {
  return message.epoch < ContextEpoch(message.context);
}

bool ReliableBroadcast::Delivered(const BroadcastMessage& message) const {
  return std::binary_search(log_.begin(), log_.end(), message, KeyLess);
}

bool ReliableBroadcast::Broadcast(BroadcastMessage message, std::vector<BroadcastAction>* out) {
  message.origin = self_;
  if (IsStale(message)) {
    ++stale_dropped_;
    return false;
  }
  if (Delivered(message)) return false;
  Accept(kInvalidRank, message, out);
  return true;
}

void ReliableBroadcast::OnMessage(Rank from, const BroadcastMessage& message,
                                  std::vector<BroadcastAction>* out) {
  if (IsStale(message)) {
    ++stale_dropped_;
    return;
  }
  if (Delivered(message)) {
    ++duplicates_dropped_;
    return;
  }
  Accept(from, message, out);
}

void ReliableBroadcast::Accept(Rank from, const BroadcastMessage& message,
                               std::vector<BroadcastAction>* out) {
  log_.insert(std::upper_bound(log_.begin(), log_.end(), message, KeyLess), message);
  out->push_back(DeliverBroadcast{message});
  scratch_.clear();
  AppendNeighbors(&scratch_);
  for (Rank to : scratch_) {
    if (to != from) out->push_back(SendBroadcast{to, message});
  }
}

void ReliableBroadcast::OnFailure(Rank rank, std::vector<BroadcastAction>* out) {
  if (rank >= size_ || rank == self_ || failed_.Contains(rank)) return;
  const Rank old_next = NextLiveRank(failed_, size_, self_);
  const Rank old_previous = PreviousLiveRank(failed_, size_, self_);
  failed_.Insert(rank);
  const Rank next = NextLiveRank(failed_, size_, self_);
  const Rank previous = PreviousLiveRank(failed_, size_, self_);
  // Ranks at a power-of-two distance were neighbours all along and got every message already.
  auto is_new = [&](Rank r) {
    return r != kInvalidRank && r != old_next && r != old_previous && !AtPowerOfTwoDistance(r);
  };
  const bool next_is_new = is_new(next);
  const bool previous_is_new = is_new(previous) && previous != next;
  for (const BroadcastMessage& m : log_) {
    if (next_is_new) out->push_back(SendBroadcast{next, m});
    if (previous_is_new) out->push_back(SendBroadcast{previous, m});
  }
}

void ReliableBroadcast::Grow(Rank new_size, std::vector<BroadcastAction>* out) {
  RFT_CHECK(new_size >= size_ && new_size - 1 <= kMaxRank,
            "ReliableBroadcast::Grow: the size only grows, up to kMaxRank + 1");
  if (new_size == size_) return;
  std::vector<Rank> before;
  AppendNeighbors(&before);
  size_ = new_size;
  log2_size_ = CeilLog2(new_size);
  scratch_.clear();
  AppendNeighbors(&scratch_);
  for (Rank to : scratch_) {
    if (std::binary_search(before.begin(), before.end(), to)) continue;
    for (const BroadcastMessage& m : log_) out->push_back(SendBroadcast{to, m});
  }
}

}  // namespace rft::detector
