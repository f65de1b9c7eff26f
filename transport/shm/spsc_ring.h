// rft::transport::shm: a single-writer, single-reader ring of variable-size records in memory
// two processes share, built so that a writer killed at any instruction can never block its
// reader (docs/shm.md).
//
// Why: UCX's shared-memory transports give each process one receive FIFO that all its peers
// write into, claiming a slot first and marking it written after the copy; a writer killed in
// between leaves a slot never marked, and the reader, which reads in order, hears nothing more
// from anyone (docs/reliability.md). Here each ordered pair of processes has its own ring, and a
// record becomes visible only when the writer stores its header word after the whole copy: a
// writer that dies mid-copy leaves nothing half-written in view, and no other writer shares the
// ring it stopped in.
//
// Layout of one ring (RingBytes(capacity) bytes, 64-byte aligned, zeroed before either side
// attaches):
//   [0, 64)       the writer's line: head, bytes published so far (64-bit, never wraps; for
//                 Backlog() and a writer attaching again, not read by the reader)
//   [64, 128)     the reader's line: tail, bytes consumed so far
//   [128, ...)    capacity bytes of records, each at an 8-byte aligned position:
//                 uint32 length | uint32 kind | payload, padded to 8 bytes
// A record never wraps: one that does not fit before the end is preceded by a pad record up to
// the end. The reader stops at a header word of zero: the writer zeroes the word after each
// record before it stores the record's header (release), and stores a pad's header only after
// the record the pad leads to. A small record's header and payload share a line, so a message
// moves one line to the reader; the writer reloads the reader's tail only when its cached copy
// says full.
//
// Threading: one writer thread and one reader thread (usually in two processes); no locks, no
// allocation.
#ifndef RFT_TRANSPORT_SHM_SPSC_RING_H_
#define RFT_TRANSPORT_SHM_SPSC_RING_H_

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "base/status.h"

namespace rft::transport::shm {

inline constexpr size_t kRingControlBytes = 128;
inline constexpr size_t kRecordHeaderBytes = 8;

// The bytes one ring of `capacity` takes.
inline constexpr size_t RingBytes(size_t capacity) { return kRingControlBytes + capacity; }
// A power of two from 4 KiB to 1 GiB; RFT_ERR_ARG naming the value otherwise.
Status CheckRingCapacity(size_t capacity);

// A full barrier between a store and a later load (a Dekker handshake between two processes: a
// writer publishes then reads the reader's "asleep" flag; the reader sets the flag then reads
// the writer's head). GCC refuses std::atomic_thread_fence under -fsanitize=thread (-Wtsan),
// and ThreadSanitizer sees one process anyway: there it is the __sync builtin's full barrier.
inline void StoreLoadFence() {
#if defined(__SANITIZE_THREAD__)
  __sync_synchronize();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

namespace internal {

enum RecordKind : uint32_t { kData = 0x52444154, kPad = 0x52504144 };  // "RDAT", "RPAD"

struct alignas(64) RingControl {
  std::atomic<uint64_t> head;
  char writer_line_rest[56];
  std::atomic<uint64_t> tail;
  char reader_line_rest[56];
};
static_assert(sizeof(RingControl) == kRingControlBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the counters live in shared memory");

inline constexpr size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

// A record's header as one 64-bit word (the length in the low half, the kind in the high: the
// byte layout "uint32 length | uint32 kind" on a little-endian machine), read and written whole.
inline uint64_t PackHeader(uint32_t length, uint32_t kind) { return uint64_t{kind} << 32 | length; }
inline std::atomic_ref<uint64_t> HeaderWord(std::byte* at) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(at));
}
inline std::atomic_ref<uint64_t> HeaderWord(const std::byte* at) {  // the reader's: loads only
  return HeaderWord(const_cast<std::byte*>(at));
}
static_assert(std::endian::native == std::endian::little, "the header word's layout");

}  // namespace internal

class RingWriter {
 public:
  // `ring`: RingBytes(capacity) bytes, 64-byte aligned; `capacity` passed CheckRingCapacity.
  RingWriter(void* ring, size_t capacity);

  // The largest payload of one record: a quarter of the ring, so a record always fits once the
  // reader has caught up, pad included.
  size_t max_payload() const { return capacity_ / 4; }

  // Appends one record whose payload is `first` then `second` (either may be empty); false when
  // there is no room now (nothing is written then). The payload must not exceed max_payload().
  bool TryWrite(std::span<const std::byte> first, std::span<const std::byte> second = {});

  // Bytes published and not yet consumed, as far as this side knows (reloads the reader's tail).
  size_t Backlog();

 private:
  internal::RingControl* control_;
  std::byte* data_;
  size_t capacity_;
  uint64_t head_;         // what this writer published
  uint64_t cached_tail_;  // the reader's tail when last loaded
};

class RingReader {
 public:
  RingReader(void* ring, size_t capacity);

  // Whether a record is waiting: one load of the header word at this reader's position.
  bool HasData() const {
    return internal::HeaderWord(data_ + (static_cast<size_t>(tail_) & (capacity_ - 1)))
               .load(std::memory_order_acquire) != 0;
  }

  // Delivers up to `max` records in the order written to `deliver(std::span<const std::byte>)`;
  // the payload is valid only during the call, and its space goes back to the writer after it.
  // The number delivered, or RFT_ERR_OTHER for a record that cannot be (a length or kind no
  // writer of this format produces): the ring is unusable then, and nothing past it is read.
  template <typename Deliver>
  StatusOr<int> Drain(int max, Deliver&& deliver);

 private:
  Status Corrupt(const char* what, uint32_t length, uint32_t kind) const;

  internal::RingControl* control_;
  const std::byte* data_;
  size_t capacity_;
  uint64_t tail_;  // what this reader consumed
};

template <typename Deliver>
StatusOr<int> RingReader::Drain(int max, Deliver&& deliver) {
  int delivered = 0;
  while (delivered < max) {
    const size_t offset = static_cast<size_t>(tail_) & (capacity_ - 1);
    const uint64_t header = internal::HeaderWord(data_ + offset).load(std::memory_order_acquire);
    if (header == 0) break;  // not published yet
    const auto length = static_cast<uint32_t>(header);
    const auto kind = static_cast<uint32_t>(header >> 32);
    const size_t to_end = capacity_ - offset;
    if (kind == internal::kPad) {
      if (kRecordHeaderBytes + length != to_end) return Corrupt("pad", length, kind);
      tail_ += to_end;
      control_->tail.store(tail_, std::memory_order_release);
      continue;
    }
    const size_t size = internal::Align8(kRecordHeaderBytes + length);
    if (kind != internal::kData || length > capacity_ / 4 || size > to_end) {
      return Corrupt("record", length, kind);
    }
    deliver(std::span<const std::byte>(data_ + offset + kRecordHeaderBytes, length));
    tail_ += size;
    control_->tail.store(tail_, std::memory_order_release);
    ++delivered;
  }
  return delivered;
}

}  // namespace rft::transport::shm

#endif  // RFT_TRANSPORT_SHM_SPSC_RING_H_
