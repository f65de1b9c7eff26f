#include "transport/wire/wire_header.h"

namespace rft::transport {

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

uint64_t DropCounters::total() const {
  uint64_t sum = 0;
  for (size_t i = 1; i < counts_.size(); ++i) sum += counts_[i].load(std::memory_order_relaxed);
  return sum;
}

}  // namespace rft::transport
