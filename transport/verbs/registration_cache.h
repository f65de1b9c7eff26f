// Memory registrations kept between transfers: the verbs rendezvous registers the sender's
// buffer for remote reads and the receiver's for the READ's writes, and on a real HCA
// ibv_reg_mr of a large buffer costs tens of microseconds (it pins and maps every page).
// Applications send from and receive into the same buffers again and again, so a registration
// is kept after its transfer and found again by address.
//
// A cached registration outlives its memory only if the memory leaves the address space
// (munmap, mremap, brk shrinking, madvise DONTNEED) while cached: the range may then be mapped
// again to other pages, and a transfer through the old registration would move the old pages.
// So the owner reports every unmapped range (Unmapped, from a memory-event hook: the data plane
// uses UCX's ucm), and an entry it touches is never found again; it is deregistered at the next
// Acquire, or when its last transfer ends.
//
// No I/O: registering and deregistering are the owner's functions (ibv_reg_mr/ibv_dereg_mr for
// the data plane, recorders in the unit tests). Acquire and Release are for one thread;
// Unmapped may be called from any thread at any time, inside munmap itself: it neither locks
// nor allocates, and only marks entries through atomics. A fixed number of entries and a bound
// on the bytes they pin keep the cache from holding an application's memory without limit;
// the least recently used entry no transfer holds makes room.
#ifndef RFT_TRANSPORT_VERBS_REGISTRATION_CACHE_H_
#define RFT_TRANSPORT_VERBS_REGISTRATION_CACHE_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/status.h"

namespace rft::verbs {

class RegistrationCache {
 public:
  // One registration: the owner's handle (an ibv_mr*) and its keys.
  struct Registration {
    void* handle = nullptr;
    uint32_t lkey = 0;
    uint32_t rkey = 0;
  };
  // Registers [address, address + length) with the access flags (IBV_ACCESS_*).
  using RegisterFn =
      std::function<StatusOr<Registration>(void* address, size_t length, int access)>;
  using DeregisterFn = std::function<void(void* handle)>;

  static constexpr int kMaxEntries = 64;
  static constexpr int kUncached = -1;

  // What a transfer holds from Acquire to Release.
  struct Lease {
    Registration registration;
    int entry = kUncached;  // kUncached: registered for this transfer only
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t uncached = 0;       // registered for one transfer: too large, or no room
    uint64_t evictions = 0;      // entries dropped to make room
    uint64_t invalidations = 0;  // entries an unmapped range touched
  };

  // Entries pin at most `max_bytes` in all; 0 caches nothing (every transfer registers).
  RegistrationCache(size_t max_bytes, RegisterFn register_fn, DeregisterFn deregister_fn);
  // Deregisters every entry, held ones too: the owner's transfers are over (its QPs are gone).
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // A registration covering [address, address + length) with at least `access`: a cached one,
  // or a new one of the whole pages around the range. Errors are the register function's.
  StatusOr<Lease> Acquire(const void* address, size_t length, int access);
  // The transfer that acquired `lease` is over.
  void Release(const Lease& lease);

  // [address, address + length) left the address space: no entry overlapping it is found again.
  // Any thread, inside munmap: lock-free and allocation-free.
  void Unmapped(const void* address, size_t length);

  size_t max_bytes() const { return max_bytes_; }
  size_t pinned_bytes() const { return pinned_bytes_; }  // by entries (not uncached leases)
  int entries() const;                                   // in use, stale ones included
  Stats stats() const;

 private:
  struct Entry {
    // Read by Unmapped from any thread; [0, 0) when the entry is free.
    std::atomic<uintptr_t> start{0};
    std::atomic<uintptr_t> end{0};
    std::atomic<bool> stale{false};
    Registration registration;
    int access = 0;
    uint32_t holders = 0;   // transfers between Acquire and Release
    uint64_t last_use = 0;  // Acquire's clock, for the least recently used
    bool used = false;
  };

  // Deregisters the stale entries no transfer holds.
  void DropStale();
  void Drop(Entry& entry);
  // A free entry, after evicting the least recently used unheld one if need be, such that
  // `bytes` more fit under max_bytes; nullptr when held entries leave no room.
  Entry* MakeRoom(size_t bytes);

  const size_t max_bytes_;
  RegisterFn register_;
  DeregisterFn deregister_;
  std::array<Entry, kMaxEntries> entries_;
  std::atomic<bool> any_stale_{false};
  std::atomic<uint64_t> invalidations_{0};
  size_t pinned_bytes_ = 0;
  uint64_t clock_ = 0;
  Stats stats_;
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_REGISTRATION_CACHE_H_
