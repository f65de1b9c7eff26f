// The fixed header that starts every rft wire message (docs/wire_format.md).
//
//   offset size field       meaning
//        0    1 version     kWireVersion
//        1    1 type        MessageType
//        2    2 flags       per type; 0 when unused
//        4    4 source      sender's rank in the job
//        8    4 context_id  communicator context the message belongs to
//       12    4 epoch       context epoch (stale messages are dropped by the layer above)
//       16    4 tag         MPI tag, >= 0 (signed on the wire for the API's int tags)
//       20    8 length      payload bytes that follow the header in this message
//       28    4 job_token   identifies the job: a message from another job is foreign
//
// All fields are little-endian and encoded byte by byte, so the format does not depend on
// the host or on struct layout. A decoder checks every field against what the receiver
// knows; whatever fails is dropped and counted (DropCounters), never acted on.
#ifndef RFT_TRANSPORT_WIRE_WIRE_HEADER_H_
#define RFT_TRANSPORT_WIRE_WIRE_HEADER_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/byte_order.h"

namespace rft::transport {

inline constexpr uint8_t kWireVersion = 1;
inline constexpr size_t kWireHeaderSize = 32;

enum class MessageType : uint8_t {
  kEager = 1,              // the payload follows inline
  kRendezvousRequest = 2,  // describes a large message the receiver fetches
  kRendezvousDone = 3,     // the receiver finished fetching; the sender may reuse its buffer
  kControl = 4,            // control plane (failure propagation, revoke, agreement)
  kRevoke = 5,        // data plane: the sender revoked `context_id` at `epoch` (the fast notice
                      // beside the control plane's reliable flood)
  kVerbsAddress = 6,  // data plane, over UCX: the sender's QP address for the receiver
                      // (docs/verbs.md, "Connecting on demand")
  kVerbsAsk = 7,      // data plane, over UCX: the sender wants the receiver's QP address
  kVerbsRefuse = 8,   // data plane, over UCX: the sender has no place for the receiver; the
                      // pair stays on UCX
  // A pair's ordered close, giving its places back (docs/verbs.md, "Giving a place back"):
  kVerbsClose = 9,     // on the pair's QP: the sender asks to close it
  kVerbsStay = 10,     // on the QP: the receiver of a kVerbsClose is busy; the pair stays
  kVerbsClosing = 11,  // on the QP: it agrees; the last thing it posts there
  kVerbsClosed = 12,   // over UCX: the asker closed its QP; the pair talks through UCX
};

// The protocol that handles a kControl message on the receiving control plane. `flags` of a
// control message holds the service in its high byte and the service's own message kind in its
// low byte, so each protocol numbers its kinds without knowing the others'.
enum class ControlService : uint8_t {
  kDetector = 0,   // heartbeat ring repair, failure broadcast, departure
  kRevoke = 1,     // communicator revocation (its broadcasts carry BroadcastKind::kRevoke)
  kAgreement = 2,  // fault-tolerant agreement
};
inline constexpr size_t kControlServiceCount = 256;
inline constexpr uint16_t ControlFlags(ControlService service, uint8_t kind) {
  return static_cast<uint16_t>(static_cast<uint16_t>(service) << 8 | kind);
}
inline constexpr ControlService ControlFlagsService(uint16_t flags) {
  return static_cast<ControlService>(flags >> 8);
}
inline constexpr uint8_t ControlFlagsKind(uint16_t flags) {
  return static_cast<uint8_t>(flags & 0xff);
}

struct WireHeader {
  uint8_t version = kWireVersion;
  MessageType type = MessageType::kEager;
  uint16_t flags = 0;
  uint32_t source = 0;
  uint32_t context_id = 0;
  uint32_t epoch = 0;
  int32_t tag = 0;
  uint64_t length = 0;
  uint32_t job_token = 0;

  bool operator==(const WireHeader&) const = default;
};

// Inline, as DecodeHeader below: both run once per message on the fast path, where a call's
// register saves cost as much as the encoding.
inline void EncodeHeader(const WireHeader& header, std::span<std::byte, kWireHeaderSize> out) {
  StoreLittleEndian<uint8_t>(out, 0, header.version);
  StoreLittleEndian<uint8_t>(out, 1, static_cast<uint8_t>(header.type));
  StoreLittleEndian<uint16_t>(out, 2, header.flags);
  StoreLittleEndian<uint32_t>(out, 4, header.source);
  StoreLittleEndian<uint32_t>(out, 8, header.context_id);
  StoreLittleEndian<uint32_t>(out, 12, header.epoch);
  StoreLittleEndian<uint32_t>(out, 16, static_cast<uint32_t>(header.tag));
  StoreLittleEndian<uint64_t>(out, 20, header.length);
  StoreLittleEndian<uint32_t>(out, 28, header.job_token);
}

enum class DecodeError : uint8_t {
  kNone = 0,
  kTooShort,        // fewer bytes than a header
  kBadVersion,      // not kWireVersion
  kUnknownType,     // not a MessageType
  kLengthMismatch,  // `length` differs from the bytes that follow the header
  kForeignJob,      // job_token is not this job's
  kBadSource,       // source is not a rank of this job
  kBadTag,          // negative tag
  // Found by the data plane after a successful decode, counted here with the rest:
  kUnknownContext,  // context id beyond the receiver's context table
  kStaleEpoch,      // older than the receiver's epoch of that context (revoked traffic)
  kBadPayload,      // a type whose payload the receiver cannot use (e.g. a short descriptor)
  kRevoked,         // for a context the receiver has revoked
  kCount,
};

const char* DecodeErrorName(DecodeError error);

// Decodes and validates `header` (exactly the header's bytes; fewer is kTooShort, more is
// kLengthMismatch) describing `payload_size` bytes carried separately (as UCX active messages
// carry them). `*out` is written only when the result is kNone. Never reads outside `header`.
inline DecodeError DecodeHeader(std::span<const std::byte> message, uint64_t payload_size,
                                uint32_t job_token, uint32_t job_size, WireHeader* out) {
  if (message.size() < kWireHeaderSize) return DecodeError::kTooShort;
  if (message.size() != kWireHeaderSize) return DecodeError::kLengthMismatch;
  WireHeader header;
  header.version = LoadLittleEndian<uint8_t>(message, 0);
  if (header.version != kWireVersion) return DecodeError::kBadVersion;
  const uint8_t type = LoadLittleEndian<uint8_t>(message, 1);
  if (type < static_cast<uint8_t>(MessageType::kEager) ||
      type > static_cast<uint8_t>(MessageType::kVerbsClosed)) {
    return DecodeError::kUnknownType;
  }
  header.type = static_cast<MessageType>(type);
  header.flags = LoadLittleEndian<uint16_t>(message, 2);
  header.source = LoadLittleEndian<uint32_t>(message, 4);
  header.context_id = LoadLittleEndian<uint32_t>(message, 8);
  header.epoch = LoadLittleEndian<uint32_t>(message, 12);
  header.tag = static_cast<int32_t>(LoadLittleEndian<uint32_t>(message, 16));
  header.length = LoadLittleEndian<uint64_t>(message, 20);
  header.job_token = LoadLittleEndian<uint32_t>(message, 28);
  if (header.length != payload_size) return DecodeError::kLengthMismatch;
  if (header.job_token != job_token) return DecodeError::kForeignJob;
  if (header.source >= job_size) return DecodeError::kBadSource;
  if (header.tag < 0) return DecodeError::kBadTag;
  *out = header;
  return DecodeError::kNone;
}

// The same for a contiguous message: the header, then the payload.
inline DecodeError DecodeMessage(std::span<const std::byte> message, uint32_t job_token,
                                 uint32_t job_size, WireHeader* out) {
  if (message.size() < kWireHeaderSize) return DecodeError::kTooShort;
  return DecodeHeader(message.first(kWireHeaderSize), message.size() - kWireHeaderSize, job_token,
                      job_size, out);
}

// Dropped-message counts by reason. One thread records (the data plane's); any thread may read
// (rft_info, the control thread), hence relaxed atomics.
class DropCounters {
 public:
  void Record(DecodeError error) {
    counts_[static_cast<size_t>(error)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t count(DecodeError error) const {
    return counts_[static_cast<size_t>(error)].load(std::memory_order_relaxed);
  }
  // All drops (kNone is never recorded by a correct caller and is not counted).
  uint64_t total() const;

 private:
  std::array<std::atomic<uint64_t>, static_cast<size_t>(DecodeError::kCount)> counts_{};
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_WIRE_WIRE_HEADER_H_
