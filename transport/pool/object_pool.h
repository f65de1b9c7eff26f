// Pools for the data plane's fast path, which must not allocate per message.
//
// ObjectPool<T> hands out T objects (requests, unexpected-message records) from chunks it
// allocates only when it runs dry; in steady state Acquire and Release are a pointer pop and
// push. Objects are reused last-in first-out, so the hot ones stay in cache. Not thread-safe:
// one data-plane thread owns a pool.
#ifndef RFT_TRANSPORT_POOL_OBJECT_POOL_H_
#define RFT_TRANSPORT_POOL_OBJECT_POOL_H_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "base/check.h"

namespace rft::transport {

template <class T>
class ObjectPool {
 public:
  // `chunk_size` objects are allocated at a time; `initial` of them up front.
  explicit ObjectPool(size_t chunk_size = 256, size_t initial = 256) : chunk_size_(chunk_size) {
    RFT_CHECK(chunk_size_ > 0, "an object pool needs a chunk size of at least 1");
    while (capacity() < initial) Grow();
  }
  ~ObjectPool() {
    RFT_CHECK(in_use_ == 0, "object pool destroyed with objects still in use (a leaked request)");
  }
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  // A default-initialised T (`new T`, not `new T()`: members without an initialiser stay
  // uninitialised instead of the whole object being zeroed first, which cost ~60 instructions
  // per request in the 8-byte ping-pong); constructor arguments are forwarded.
  // Inline (forced): every request starts here.
  template <class... Args>
  [[gnu::always_inline]] T* Acquire(Args&&... args) {
    if (free_ == nullptr) Grow();
    Slot* slot = free_;
    free_ = slot->next;
    ++in_use_;
    if constexpr (sizeof...(Args) == 0) {
      return new (slot->storage) T;
    } else {
      return new (slot->storage) T(std::forward<Args>(args)...);
    }
  }

  void Release(T* object) {
    RFT_DCHECK(object != nullptr, "released a null object");
    object->~T();
    Slot* slot = reinterpret_cast<Slot*>(object);
    slot->next = free_;
    free_ = slot;
    --in_use_;
  }

  // For a teardown that found objects still in use (a caller's leaked request): forget them, so
  // the destructor frees the chunks instead of aborting. Their destructors do not run.
  void AbandonInUse() { in_use_ = 0; }

  size_t capacity() const { return chunks_.size() * chunk_size_; }
  size_t in_use() const { return in_use_; }

 private:
  union Slot {
    Slot* next;
    alignas(T) unsigned char storage[sizeof(T)];
  };

  void Grow() {
    chunks_.push_back(std::make_unique<Slot[]>(chunk_size_));
    Slot* chunk = chunks_.back().get();
    for (size_t i = chunk_size_; i-- > 0;) {
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }

  size_t chunk_size_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  Slot* free_ = nullptr;
  size_t in_use_ = 0;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_POOL_OBJECT_POOL_H_
