#include "detector/death_watch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>

#include "base/log.h"
#include "detector/thread_priority.h"

namespace rft::detector {

struct DeathWatch::Segment {
  // One per watcher: the kernel wakes one waiter per mutex when the owner dies, so watchers
  // sharing a mutex would learn it one after another (each when the previous one's thread
  // ended), which cost milliseconds at 8 processes.
  pthread_mutex_t mutex[DeathWatch::kWatcherSlots];
  // Set by the owner as it ends cleanly (the mutex then dies with its thread, unreleased).
  std::atomic<uint32_t> finalized;
};

namespace {
constexpr size_t kSegmentSize = 4096;
constexpr long kStopCheckNs = 50'000'000;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }
}  // namespace

std::string DeathWatch::SegmentName(uint32_t job_token, Rank rank) {
  char name[64];
  std::snprintf(name, sizeof(name), "/rft-%08x-%u", job_token, rank);
  return name;
}

DeathWatch::DeathWatch(uint32_t job_token, Rank self, OnDeath on_death)
    : job_token_(job_token), self_(self), on_death_(std::move(on_death)) {}

StatusOr<DeathWatch::Segment*> DeathWatch::Map(const std::string& name, bool create) {
  int fd;
  if (create) {
    shm_unlink(name.c_str());  // a stale one from an earlier job with the same token
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0 && ftruncate(fd, kSegmentSize) != 0) {
      const Status error = OtherError(Errno("ftruncate of shared memory " + name));
      close(fd);
      shm_unlink(name.c_str());
      return error;
    }
  } else {
    fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  }
  if (fd < 0) {
    if (!create && errno == ENOENT) {
      return ProcFailedError("shared memory " + name + " is gone: its process ended");
    }
    return OtherError(Errno("shm_open of " + name));
  }
  void* memory = mmap(nullptr, kSegmentSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) return OtherError(Errno("mmap of shared memory " + name));
  return static_cast<Segment*>(memory);
}

StatusOr<std::unique_ptr<DeathWatch>> DeathWatch::Create(uint32_t job_token, Rank self,
                                                         OnDeath on_death) {
  std::unique_ptr<DeathWatch> watch(new DeathWatch(job_token, self, std::move(on_death)));
  auto segment = Map(SegmentName(job_token, self), /*create=*/true);
  if (!segment.ok()) return segment.status();
  watch->own_ = *segment;
  new (&watch->own_->finalized) std::atomic<uint32_t>(0);
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  for (pthread_mutex_t& mutex : watch->own_->mutex) {
    int error = pthread_mutex_init(&mutex, &attributes);
    if (error == 0) error = pthread_mutex_lock(&mutex);
    if (error != 0) {
      pthread_mutexattr_destroy(&attributes);
      return OtherError(std::string("robust mutex: ") + std::strerror(error));
    }
  }
  pthread_mutexattr_destroy(&attributes);
  return watch;
}

DeathWatch::~DeathWatch() {
  stop_.store(true, std::memory_order_release);
  for (auto& [segment, thread] : watchers_) {
    thread.join();
    munmap(segment, kSegmentSize);
  }
  if (own_ != nullptr) {
    // A clean end for whoever still watches. The mutex stays locked: nobody ever unlocks one
    // here (watchers see "owner died" when this thread ends, and read the flag).
    own_->finalized.store(1, std::memory_order_release);
    munmap(own_, kSegmentSize);
  }
  Unlink();
}

void DeathWatch::Unlink() {
  if (unlinked_ || own_ == nullptr) return;
  unlinked_ = true;
  shm_unlink(SegmentName(job_token_, self_).c_str());
}

Status DeathWatch::Watch(Rank rank, size_t slot) {
  if (slot >= kWatcherSlots) {
    return ArgError("death watch slot " + std::to_string(slot) + " of rank " +
                    std::to_string(rank) + ": expected a slot below " +
                    std::to_string(kWatcherSlots));
  }
  auto segment = Map(SegmentName(job_token_, rank), /*create=*/false);
  if (!segment.ok()) return segment.status();
  Segment* mapped = *segment;
  pthread_mutex_t* mutex = &mapped->mutex[slot];
  watchers_.emplace_back(
      mapped, std::thread([this, rank, mapped, mutex] { WatchLoop(rank, mapped, mutex); }));
  return Status::Ok();
}

void DeathWatch::WatchLoop(Rank rank, Segment* segment, pthread_mutex_t* mutex) {
  internal::RaiseThreadPriority("death watch");
  while (!stop_.load(std::memory_order_acquire)) {
    timespec until;
    clock_gettime(CLOCK_REALTIME, &until);  // pthread_mutex_timedlock's clock
    until.tv_nsec += kStopCheckNs;
    if (until.tv_nsec >= 1'000'000'000) {
      until.tv_sec += 1;
      until.tv_nsec -= 1'000'000'000;
    }
    const int result = pthread_mutex_timedlock(mutex, &until);
    if (result == ETIMEDOUT) continue;
    if (result == EOWNERDEAD) {
      // Kept, inconsistent and locked, until this thread ends. Nothing here ever unlocks a
      // mutex: the owner never does, and each watcher has its own.
      if (segment->finalized.load(std::memory_order_acquire) == 0) on_death_(rank);
      return;
    }
    RFT_LOG_WARN("watching rank %u's mutex: %s; its death is left to other sources", rank,
                 std::strerror(result));
    return;
  }
}

}  // namespace rft::detector
