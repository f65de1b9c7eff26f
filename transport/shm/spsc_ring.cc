#include "transport/shm/spsc_ring.h"

#include <cstdio>

#include "base/check.h"

namespace rft::transport::shm {

Status CheckRingCapacity(size_t capacity) {
  if (capacity < 4096 || capacity > (size_t{1} << 30) || (capacity & (capacity - 1)) != 0) {
    return ArgError("shared-memory ring of " + std::to_string(capacity) +
                    " bytes: expected a power of two from 4096 to 2^30");
  }
  return Status::Ok();
}

RingWriter::RingWriter(void* ring, size_t capacity)
    : control_(static_cast<internal::RingControl*>(ring)),
      data_(static_cast<std::byte*>(ring) + kRingControlBytes),
      capacity_(capacity) {
  RFT_CHECK(CheckRingCapacity(capacity).ok(), "RingWriter: bad capacity");
  RFT_CHECK(reinterpret_cast<uintptr_t>(ring) % 64 == 0, "RingWriter: ring not 64-byte aligned");
  head_ = control_->head.load(std::memory_order_relaxed);
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
}

bool RingWriter::TryWrite(std::span<const std::byte> first, std::span<const std::byte> second) {
  const size_t length = first.size() + second.size();
  RFT_CHECK(length <= max_payload(), "RingWriter::TryWrite: payload beyond max_payload()");
  const size_t size = internal::Align8(kRecordHeaderBytes + length);
  size_t offset = static_cast<size_t>(head_) & (capacity_ - 1);
  const size_t to_end = capacity_ - offset;
  const size_t needed = size <= to_end ? size : to_end + size;  // a pad to the end first
  if (needed > capacity_ - (head_ - cached_tail_)) {
    cached_tail_ = control_->tail.load(std::memory_order_acquire);
    if (needed > capacity_ - (head_ - cached_tail_)) return false;
  }
  uint64_t head = head_;
  if (size > to_end) {
    const uint32_t pad_length = static_cast<uint32_t>(to_end - kRecordHeaderBytes);
    const uint32_t pad_kind = internal::kPad;
    std::memcpy(data_ + offset, &pad_length, 4);
    std::memcpy(data_ + offset + 4, &pad_kind, 4);
    head += to_end;
    offset = 0;
  }
  const auto length32 = static_cast<uint32_t>(length);
  const uint32_t kind = internal::kData;
  std::memcpy(data_ + offset, &length32, 4);
  std::memcpy(data_ + offset + 4, &kind, 4);
  if (!first.empty()) std::memcpy(data_ + offset + kRecordHeaderBytes, first.data(), first.size());
  if (!second.empty()) {
    std::memcpy(data_ + offset + kRecordHeaderBytes + first.size(), second.data(), second.size());
  }
  head_ = head + size;
  // The whole record (and any pad) is written before the reader can see the new head: a writer
  // that dies before this store leaves nothing in view.
  control_->head.store(head_, std::memory_order_release);
  return true;
}

size_t RingWriter::Backlog() {
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
  return static_cast<size_t>(head_ - cached_tail_);
}

RingReader::RingReader(void* ring, size_t capacity)
    : control_(static_cast<internal::RingControl*>(ring)),
      data_(static_cast<const std::byte*>(ring) + kRingControlBytes),
      capacity_(capacity) {
  RFT_CHECK(CheckRingCapacity(capacity).ok(), "RingReader: bad capacity");
  RFT_CHECK(reinterpret_cast<uintptr_t>(ring) % 64 == 0, "RingReader: ring not 64-byte aligned");
  tail_ = control_->tail.load(std::memory_order_relaxed);
  cached_head_ = control_->head.load(std::memory_order_acquire);
}

bool RingReader::HasData() {
  if (tail_ != cached_head_) return true;
  cached_head_ = control_->head.load(std::memory_order_acquire);
  return tail_ != cached_head_;
}

Status RingReader::Corrupt(const char* what, uint32_t length, uint32_t kind) const {
  return OtherError("shared-memory ring: bad " + std::string(what) + " at byte " +
                    std::to_string(tail_) + " (length " + std::to_string(length) + ", kind 0x" +
                    [kind] {
                      char hex[9];
                      std::snprintf(hex, sizeof(hex), "%08x", kind);
                      return std::string(hex);
                    }() +
                    ", ring of " + std::to_string(capacity_) + " bytes)");
}

}  // namespace rft::transport::shm
