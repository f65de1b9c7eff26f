#include "transport/pool/buffer_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include "base/check.h"

namespace rft::transport {
namespace {

// Buffers of one class are carved from blocks of at least this size, so small classes do
// not call the allocator per buffer.
constexpr size_t kBlockBytes = 64 * 1024;
constexpr size_t kAlignment = 64;

}  // namespace

BufferPool::BufferPool(size_t max_size)
    : max_size_(std::bit_ceil(std::max<size_t>(max_size, size_t{1} << kMinShift))) {
  free_.assign(ClassOf(max_size_) + 1, nullptr);
}

BufferPool::~BufferPool() {
  RFT_CHECK(in_use_ == 0, "buffer pool destroyed with buffers still in use (a leaked message)");
  for (std::byte* block : blocks_) ::operator delete(block, std::align_val_t(kAlignment));
}

size_t BufferPool::ClassOf(size_t size) const {
  const size_t rounded = std::bit_ceil(std::max<size_t>(size, size_t{1} << kMinShift));
  return static_cast<size_t>(std::countr_zero(rounded)) - kMinShift;
}

std::byte* BufferPool::Acquire(size_t size) {
  if (size > max_size_) return nullptr;
  const size_t cls = ClassOf(size);
  if (free_[cls] == nullptr) {
    const size_t buffer_bytes = size_t{1} << (cls + kMinShift);
    const size_t block_bytes = std::max(buffer_bytes, kBlockBytes);
    auto* block =
        static_cast<std::byte*>(::operator new(block_bytes, std::align_val_t(kAlignment)));
    blocks_.push_back(block);
    footprint_ += block_bytes;
    for (size_t offset = block_bytes; offset >= buffer_bytes; offset -= buffer_bytes) {
      auto* buffer = reinterpret_cast<FreeBuffer*>(block + offset - buffer_bytes);
      buffer->next = free_[cls];
      free_[cls] = buffer;
    }
  }
  FreeBuffer* buffer = free_[cls];
  free_[cls] = buffer->next;
  ++in_use_;
  return reinterpret_cast<std::byte*>(buffer);
}

void BufferPool::Release(std::byte* buffer, size_t size) {
  RFT_DCHECK(buffer != nullptr && size <= max_size_, "released a buffer the pool never gave");
  const size_t cls = ClassOf(size);
  auto* node = reinterpret_cast<FreeBuffer*>(buffer);
  node->next = free_[cls];
  free_[cls] = node;
  --in_use_;
}

}  // namespace rft::transport
