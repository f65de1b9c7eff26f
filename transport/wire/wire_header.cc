#include "transport/wire/wire_header.h"

#include "base/byte_order.h"

namespace rft::transport {

void EncodeHeader(const WireHeader& header, std::span<std::byte, kWireHeaderSize> out) {
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

const char* DecodeErrorName(DecodeError error) {
  switch (error) {
    case DecodeError::kNone:
      return "none";
    case DecodeError::kTooShort:
      return "too short";
    case DecodeError::kBadVersion:
      return "bad version";
    case DecodeError::kUnknownType:
      return "unknown type";
    case DecodeError::kLengthMismatch:
      return "length mismatch";
    case DecodeError::kForeignJob:
      return "foreign job";
    case DecodeError::kBadSource:
      return "bad source";
    case DecodeError::kBadTag:
      return "bad tag";
    case DecodeError::kUnknownContext:
      return "unknown context";
    case DecodeError::kStaleEpoch:
      return "stale epoch";
    case DecodeError::kBadPayload:
      return "bad payload";
    case DecodeError::kRevoked:
      return "revoked";
    case DecodeError::kCount:
      break;
  }
  return "unknown";
}

DecodeError DecodeHeader(std::span<const std::byte> message, uint64_t payload_size,
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

uint64_t DropCounters::total() const {
  uint64_t sum = 0;
  for (size_t i = 1; i < counts_.size(); ++i) sum += counts_[i].load(std::memory_order_relaxed);
  return sum;
}

}  // namespace rft::transport
