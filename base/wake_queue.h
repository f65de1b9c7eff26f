// rft::WakeQueue<T>: items that any thread hands to one owning thread, with an eventfd that
// wakes the owner from a poll. Both planes hand failure news to their thread through one.
//
// The owner's fast path reads one atomic flag (HasItems), which is true exactly while items
// wait: it is set and cleared under the mutex, together with the vector.
#ifndef RFT_BASE_WAKE_QUEUE_H_
#define RFT_BASE_WAKE_QUEUE_H_

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace rft {

template <class T>
class WakeQueue {
 public:
  WakeQueue() = default;
  ~WakeQueue() {
    if (fd_ >= 0) close(fd_);
  }
  WakeQueue(const WakeQueue&) = delete;
  WakeQueue& operator=(const WakeQueue&) = delete;

  // Creates the eventfd; before any Push or Wake.
  Status Open() {
    fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd_ < 0) return OtherError(std::string("eventfd: ") + std::strerror(errno));
    return Status::Ok();
  }

  // Any thread, also from callbacks that must not block for long: a short critical section.
  void Push(T item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(item));
      has_items_.store(true, std::memory_order_seq_cst);
    }
    Wake();
  }

  // From the owner's own thread (e.g. inside its progress): no wake-up, it is awake.
  void PushFromOwner(T item) { PushWithoutWake(std::move(item)); }
  // Any thread, when the item may wait for the owner's next wake (its timer, another item).
  void PushWithoutWake(T item) {
    std::lock_guard<std::mutex> lock(mutex_);
    items_.push_back(std::move(item));
    has_items_.store(true, std::memory_order_seq_cst);
  }
  // Wakes the owner's poll without an item (e.g. to make it look at a stop flag).
  void Wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(fd_, &one, sizeof(one));
  }

  bool HasItems() const { return has_items_.load(std::memory_order_seq_cst); }

  // Replaces `out`'s contents with every waiting item, oldest first.
  void Drain(std::vector<T>* out) {
    out->clear();
    std::lock_guard<std::mutex> lock(mutex_);
    out->swap(items_);
    has_items_.store(false, std::memory_order_release);
  }

  // The owner polls this for POLLIN; after a wake-up, ClearWakeups() resets it.
  int fd() const { return fd_; }
  void ClearWakeups() const {
    uint64_t count;
    [[maybe_unused]] const ssize_t n = read(fd_, &count, sizeof(count));  // EAGAIN if none
  }

 private:
  int fd_ = -1;
  std::mutex mutex_;
  std::vector<T> items_;  // guarded by mutex_
  // seq_cst, not acquire/release: ControlPlane::PostSoon's handshake with the owner's sleep
  // (a store, then a load of another flag, on each side) needs the single total order.
  std::atomic<bool> has_items_{false};
};

}  // namespace rft

#endif  // RFT_BASE_WAKE_QUEUE_H_
