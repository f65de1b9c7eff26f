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
  const size_t offset = static_cast<size_t>(head_) & (capacity_ - 1);
  const size_t to_end = capacity_ - offset;
  const bool padded = size > to_end;  // a pad to the end first, the record at the start
  // The record (after any pad), and the header word after it, which this write zeroes.
  const size_t needed = (padded ? to_end + size : size) + kRecordHeaderBytes;
  if (needed > capacity_ - (head_ - cached_tail_)) {
    cached_tail_ = control_->tail.load(std::memory_order_acquire);
    if (needed > capacity_ - (head_ - cached_tail_)) return false;
  }
  const uint64_t start = padded ? head_ + to_end : head_;
  std::byte* record = data_ + (static_cast<size_t>(start) & (capacity_ - 1));
  if (!first.empty()) std::memcpy(record + kRecordHeaderBytes, first.data(), first.size());
  if (!second.empty()) {
    std::memcpy(record + kRecordHeaderBytes + first.size(), second.data(), second.size());
  }
  // The reader stops at a zero header word: the one after this record holds whatever an earlier
  // lap left there until it is zeroed, before this record's header makes the reader go on.
  internal::HeaderWord(data_ + (static_cast<size_t>(start + size) & (capacity_ - 1)))
      .store(0, std::memory_order_relaxed);
  // The header word, stored last with release order, publishes the record: a writer that dies
  // before it leaves nothing in view. A pad is published after the record it leads to.
  internal::HeaderWord(record).store(
      internal::PackHeader(static_cast<uint32_t>(length), internal::kData),
      std::memory_order_release);
  if (padded) {
    internal::HeaderWord(data_ + offset)
        .store(internal::PackHeader(static_cast<uint32_t>(to_end - kRecordHeaderBytes),
                                    internal::kPad),
               std::memory_order_release);
  }
  head_ = start + size;
  // For Backlog() and a writer that attaches again; the reader reads header words, not this.
  control_->head.store(head_, std::memory_order_relaxed);
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
