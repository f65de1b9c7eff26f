#include "transport/verbs/registration_cache.h"

#include <unistd.h>

#include <utility>

namespace rft::verbs {
namespace {

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

RegistrationCache::RegistrationCache(size_t max_bytes, RegisterFn register_fn,
                                     DeregisterFn deregister_fn)
    : max_bytes_(max_bytes),
      register_(std::move(register_fn)),
      deregister_(std::move(deregister_fn)) {}

RegistrationCache::~RegistrationCache() {
  for (Entry& entry : entries_) {
    if (entry.used) Drop(entry);
  }
}

StatusOr<RegistrationCache::Lease> RegistrationCache::Acquire(const void* address, size_t length,
                                                              int access) {
  if (any_stale_.exchange(false, std::memory_order_acq_rel)) DropStale();
  // Whole pages: registration pins pages anyway, and neighbouring buffers of one page share an
  // entry.
  const uintptr_t page = PageSize();
  const uintptr_t start = reinterpret_cast<uintptr_t>(address) & ~(page - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(address) + (length == 0 ? 1 : length) + page - 1) & ~(page - 1);
  for (int i = 0; i < kMaxEntries; ++i) {
    Entry& entry = entries_[i];
    if (!entry.used || entry.stale.load(std::memory_order_acquire)) continue;
    if (entry.start.load(std::memory_order_relaxed) <= start &&
        end <= entry.end.load(std::memory_order_relaxed) && (access & ~entry.access) == 0) {
      ++entry.holders;
      entry.last_use = ++clock_;
      ++stats_.hits;
      return Lease{entry.registration, i};
    }
  }
  ++stats_.misses;
  const size_t bytes = end - start;
  Entry* slot = bytes <= max_bytes_ ? MakeRoom(bytes) : nullptr;
  StatusOr<Registration> registered = register_(reinterpret_cast<void*>(start), bytes, access);
  if (!registered.ok()) return registered.status();
  if (slot == nullptr) {
    ++stats_.uncached;
    return Lease{*registered, kUncached};
  }
  slot->registration = *registered;
  slot->access = access;
  slot->holders = 1;
  slot->last_use = ++clock_;
  slot->used = true;
  slot->stale.store(false, std::memory_order_relaxed);
  // The range last: from here on an unmap of it marks the entry. One that came while
  // ibv_reg_mr ran unmapped memory a transfer was about to use, which is the caller's error.
  slot->start.store(start, std::memory_order_release);
  slot->end.store(end, std::memory_order_release);
  pinned_bytes_ += bytes;
  return Lease{*registered, static_cast<int>(slot - entries_.data())};
}

void RegistrationCache::Release(const Lease& lease) {
  if (lease.entry == kUncached) {
    deregister_(lease.registration.handle);
    return;
  }
  Entry& entry = entries_[lease.entry];
  if (entry.holders > 0) --entry.holders;
  if (entry.holders == 0 && entry.stale.load(std::memory_order_acquire)) Drop(entry);
}

void RegistrationCache::Unmapped(const void* address, size_t length) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(address);
  const uintptr_t end = start + length;
  bool touched = false;
  for (Entry& entry : entries_) {
    const uintptr_t entry_start = entry.start.load(std::memory_order_acquire);
    const uintptr_t entry_end = entry.end.load(std::memory_order_acquire);
    if (entry_start < entry_end && entry_start < end && start < entry_end) {
      if (!entry.stale.exchange(true, std::memory_order_acq_rel)) {
        invalidations_.fetch_add(1, std::memory_order_relaxed);
      }
      touched = true;
    }
  }
  if (touched) any_stale_.store(true, std::memory_order_release);
}

int RegistrationCache::entries() const {
  int used = 0;
  for (const Entry& entry : entries_) used += entry.used ? 1 : 0;
  return used;
}

RegistrationCache::Stats RegistrationCache::stats() const {
  Stats stats = stats_;
  stats.invalidations = invalidations_.load(std::memory_order_relaxed);
  return stats;
}

void RegistrationCache::DropStale() {
  for (Entry& entry : entries_) {
    if (entry.used && entry.holders == 0 && entry.stale.load(std::memory_order_acquire)) {
      Drop(entry);
    }
  }
}

void RegistrationCache::Drop(Entry& entry) {
  pinned_bytes_ -=
      entry.end.load(std::memory_order_relaxed) - entry.start.load(std::memory_order_relaxed);
  // Out of Unmapped's sight before the registration goes.
  entry.start.store(0, std::memory_order_release);
  entry.end.store(0, std::memory_order_release);
  deregister_(entry.registration.handle);
  entry.registration = Registration{};
  entry.used = false;
  entry.holders = 0;
  entry.stale.store(false, std::memory_order_release);
}

RegistrationCache::Entry* RegistrationCache::MakeRoom(size_t bytes) {
  for (;;) {
    Entry* free_entry = nullptr;
    Entry* oldest = nullptr;
    for (Entry& entry : entries_) {
      if (!entry.used) {
        if (free_entry == nullptr) free_entry = &entry;
      } else if (entry.holders == 0 && (oldest == nullptr || entry.last_use < oldest->last_use)) {
        oldest = &entry;
      }
    }
    if (free_entry != nullptr && pinned_bytes_ + bytes <= max_bytes_) return free_entry;
    if (oldest == nullptr) return nullptr;  // every entry is held by a transfer
    Drop(*oldest);
    ++stats_.evictions;
  }
}

}  // namespace rft::verbs
