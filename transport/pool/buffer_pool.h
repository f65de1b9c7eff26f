// Byte buffers for data that must be copied out of UCX (an unexpected eager message UCX does
// not let rft keep), in power-of-two size classes from 64 B to a maximum (the eager limit).
// Like ObjectPool, it allocates only when a class runs dry; steady state is a pop and a push.
// Not thread-safe.
#ifndef RFT_TRANSPORT_POOL_BUFFER_POOL_H_
#define RFT_TRANSPORT_POOL_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rft::transport {

class BufferPool {
 public:
  // Buffers up to `max_size` bytes (rounded up to a power of two, at least 64).
  explicit BufferPool(size_t max_size);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `size` bytes (64-byte aligned), or nullptr when `size` > max_size().
  std::byte* Acquire(size_t size);
  // Returns a buffer from Acquire(size) with the same `size`.
  void Release(std::byte* buffer, size_t size);

  size_t max_size() const { return max_size_; }
  size_t in_use() const { return in_use_; }
  // Bytes allocated from the system so far.
  size_t footprint() const { return footprint_; }

 private:
  struct FreeBuffer {
    FreeBuffer* next;
  };
  static constexpr size_t kMinShift = 6;  // 64 B
  size_t ClassOf(size_t size) const;

  size_t max_size_;
  std::vector<FreeBuffer*> free_;   // per class
  std::vector<std::byte*> blocks_;  // everything allocated, freed in the destructor
  size_t in_use_ = 0;
  size_t footprint_ = 0;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_POOL_BUFFER_POOL_H_
