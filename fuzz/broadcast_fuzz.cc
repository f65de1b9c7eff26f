// Fuzzes the reliable broadcast's message decoder (detector/reliable_broadcast.h), then feeds
// what it accepts to the broadcast core, as the control thread does with a peer's bytes.
//
// Input: size byte, self byte, then records of one op byte and 24 message bytes. Properties:
// - DecodeBroadcastMessage accepts exactly what an independent reading of the documented wire
//   form allows (length 24, kind 1, 2 or 3, zero reserved bytes, origin not kInvalidRank, a
//   failure's or abort's subject <= kMaxRank), with RFT_ERR_ARG otherwise, and an accepted message
//   re-encodes to the same bytes;
// - any message built from the input survives Encode -> Decode intact once made valid;
// - driven with decoded messages, failures and epoch changes, the core delivers each key at most
//   once, delivers before it forwards, and sends only to live ranks of the job other than itself
//   and the sender.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <tuple>
#include <variant>
#include <vector>

#include "detector/reliable_broadcast.h"
#include "fuzz/fuzz_check.h"

namespace {

using rft::kInvalidRank;
using rft::kMaxRank;
using rft::Rank;
using rft::detector::BroadcastAction;
using rft::detector::BroadcastKind;
using rft::detector::BroadcastMessage;
using rft::detector::DecodeBroadcastMessage;
using rft::detector::DeliverBroadcast;
using rft::detector::EncodeBroadcastMessage;
using rft::detector::kBroadcastMessageSize;
using rft::detector::ReliableBroadcast;
using rft::detector::SendBroadcast;

uint64_t ReadLe(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool ExpectedValid(const uint8_t* p, size_t size) {
  if (size != kBroadcastMessageSize) return false;
  if (p[0] < 1 || p[0] > 3) return false;
  if (p[1] != 0 || p[2] != 0 || p[3] != 0) return false;
  if (ReadLe(p + 12, 4) == kInvalidRank) return false;
  if (p[0] != 2 && ReadLe(p + 16, 8) > kMaxRank) return false;  // kFailure, kAborted: a rank
  return true;
}

void CheckCodec(const uint8_t* data, size_t size) {
  auto decoded = DecodeBroadcastMessage(std::as_bytes(std::span<const uint8_t>(data, size)));
  FUZZ_CHECK(decoded.ok() == ExpectedValid(data, size));
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_ARG);
    FUZZ_CHECK(!decoded.status().message().empty());
    return;
  }
  FUZZ_CHECK(static_cast<uint8_t>(decoded->kind) == data[0]);
  FUZZ_CHECK(decoded->context == ReadLe(data + 4, 4));
  FUZZ_CHECK(decoded->epoch == ReadLe(data + 8, 4));
  FUZZ_CHECK(decoded->origin == ReadLe(data + 12, 4));
  FUZZ_CHECK(decoded->subject == ReadLe(data + 16, 8));
  std::byte again[kBroadcastMessageSize];
  EncodeBroadcastMessage(*decoded, std::span<std::byte, kBroadcastMessageSize>(again));
  FUZZ_CHECK(std::memcmp(again, data, size) == 0);
}

// Any 24 bytes, made into a valid message: the encoder's side of the round trip.
BroadcastMessage Valid(const uint8_t* p) {
  BroadcastMessage m;
  constexpr BroadcastKind kKinds[] = {BroadcastKind::kFailure, BroadcastKind::kRevoke,
                                      BroadcastKind::kAborted};
  m.kind = kKinds[p[0] % 3];
  m.context = static_cast<uint32_t>(ReadLe(p + 4, 4));
  m.epoch = static_cast<uint32_t>(ReadLe(p + 8, 4));
  m.origin = static_cast<Rank>(ReadLe(p + 12, 4) % (uint64_t{kMaxRank} + 1));
  m.subject = ReadLe(p + 16, 8);
  if (m.kind != BroadcastKind::kRevoke) m.subject %= uint64_t{kMaxRank} + 1;
  return m;
}

using Key = std::tuple<BroadcastKind, uint32_t, uint32_t, uint64_t>;
Key KeyOf(const BroadcastMessage& m) { return {m.kind, m.context, m.epoch, m.subject}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckCodec(data, size);
  if (size < 2) return 0;

  const Rank n = 1 + data[0] % 16;
  const Rank self = data[1] % n;
  ReliableBroadcast core(self, n);
  std::set<Key> delivered;
  std::vector<BroadcastAction> out;
  constexpr size_t kRecord = 1 + kBroadcastMessageSize;
  for (size_t at = 2; at + kRecord <= size; at += kRecord) {
    const uint8_t op = data[at];
    const uint8_t* bytes = data + at + 1;
    CheckCodec(bytes, kBroadcastMessageSize);
    BroadcastMessage m = Valid(bytes);
    std::byte wire[kBroadcastMessageSize];
    EncodeBroadcastMessage(m, std::span<std::byte, kBroadcastMessageSize>(wire));
    auto back = DecodeBroadcastMessage(wire);
    FUZZ_CHECK(back.ok() && *back == m);
    // Small contexts and epochs so that keys collide and epochs supersede each other.
    m.context %= 4;
    m.epoch %= 4;
    if (m.kind != BroadcastKind::kRevoke) m.subject %= n;

    out.clear();
    Rank from = kInvalidRank;
    switch (op % 4) {
      case 0:
        from = static_cast<Rank>((self + 1 + (op >> 2) % n) % n);
        if (from == self) break;  // only in a job of one: nobody else can send
        core.OnMessage(from, m, &out);
        break;
      case 1:
        core.OnFailure(static_cast<Rank>((op >> 2) % (n + 1)), &out);  // n: not a rank; ignored
        break;
      case 2:
        core.SetContextEpoch(m.context, m.epoch);
        break;
      case 3:
        core.Broadcast(m, &out);
        break;
    }
    bool delivered_now = false;
    for (const BroadcastAction& action : out) {
      if (const auto* d = std::get_if<DeliverBroadcast>(&action)) {
        FUZZ_CHECK(!delivered_now);  // one message per event at most
        FUZZ_CHECK(delivered.insert(KeyOf(d->message)).second);
        FUZZ_CHECK(d->message.epoch >= core.ContextEpoch(d->message.context));
        delivered_now = true;
      } else {
        const auto& send = std::get<SendBroadcast>(action);
        FUZZ_CHECK(send.to < n && send.to != self && !core.failed().Contains(send.to));
        // A forward never goes back to its sender; the first send follows the delivery.
        FUZZ_CHECK(!(op % 4 == 0 && send.to == from));
        FUZZ_CHECK(op % 4 == 1 || delivered_now);
      }
    }
    FUZZ_CHECK(core.log_size() <= delivered.size());
  }
  return 0;
}
