#include "detector/death_watch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>

#include "base/log.h"
#include "base/random.h"
#include "detector/thread_priority.h"

namespace rft::detector {

struct DeathWatch::Segment {
  // One per watcher: the kernel wakes one waiter per mutex when the owner dies, so watchers
  // sharing a mutex would learn it one after another (each when the previous one's thread
  // ended), which cost milliseconds at 8 processes.
  pthread_mutex_t mutex[DeathWatch::kWatcherSlots];
  // Set by the owner as it ends cleanly, before its holder thread ends.
  std::atomic<uint32_t> finalized;
};

namespace {
constexpr size_t kSegmentSize = 4096;
constexpr long kStopCheckNs = 50'000'000;
constexpr size_t kRandomHexDigits = 16;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Maps a segment file opened as `fd` (closed here).
StatusOr<void*> MapFd(int fd, const std::string& name) {
  void* memory = mmap(nullptr, kSegmentSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);
  errno = error;
  if (memory == MAP_FAILED) return OtherError(Errno("mmap of shared memory " + name));
  return memory;
}
}  // namespace

std::string DeathWatch::SegmentPrefix(uint32_t job_tag) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "/rft-%08x-", job_tag);
  return prefix;
}

bool DeathWatch::IsSegmentName(std::string_view name, uint32_t job_tag, Rank rank) {
  const std::string expected = SegmentPrefix(job_tag) + std::to_string(rank) + "-";
  if (name.size() != expected.size() + kRandomHexDigits) return false;
  if (name.substr(0, expected.size()) != expected) return false;
  return IsLowerHex(name.substr(expected.size()));
}

DeathWatch::DeathWatch(uint32_t job_tag, Rank self, OnDeath on_death)
    : job_tag_(job_tag), self_(self), on_death_(std::move(on_death)) {}

StatusOr<DeathWatch::Segment*> DeathWatch::MapOwn(const std::string& name) {
  static_assert(sizeof(Segment) <= kSegmentSize);
  // Exclusive: a name that exists already was not made by this process (the random part makes
  // a collision with an earlier job all but impossible), so it is refused, never reused.
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return OtherError(Errno("creating shared memory " + name));
  // The umask may have taken the owner's write bit: watchers open it read-write.
  if (fchmod(fd, 0600) != 0 || ftruncate(fd, kSegmentSize) != 0) {
    const Status error = OtherError(Errno("sizing shared memory " + name));
    close(fd);
    shm_unlink(name.c_str());
    return error;
  }
  auto memory = MapFd(fd, name);
  if (!memory.ok()) {
    shm_unlink(name.c_str());
    return memory.status();
  }
  return static_cast<Segment*>(*memory);
}

StatusOr<DeathWatch::Segment*> DeathWatch::MapPeer(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return OtherError(Errno("opening shared memory " + name));
  // Someone else's file (or one others may write) would let them forge deaths, or point this
  // process's robust list into memory they control; a short one would raise SIGBUS.
  struct stat info;
  std::string wrong;
  if (fstat(fd, &info) != 0) {
    wrong = Errno("fstat");
  } else if (!S_ISREG(info.st_mode)) {
    wrong = "not a regular file";
  } else if (info.st_uid != geteuid()) {
    wrong =
        "owned by uid " + std::to_string(info.st_uid) + ", expected " + std::to_string(geteuid());
  } else if ((info.st_mode & 07777) != 0600) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    wrong = std::string("mode ") + mode + ", expected 0600";
  } else if (info.st_size != static_cast<off_t>(kSegmentSize)) {
    wrong = std::to_string(info.st_size) + " bytes, expected " + std::to_string(kSegmentSize);
  }
  if (!wrong.empty()) {
    close(fd);
    return OtherError("shared memory " + name + " is not a death-watch segment: " + wrong);
  }
  auto memory = MapFd(fd, name);
  if (!memory.ok()) return memory.status();
  return static_cast<Segment*>(*memory);
}

StatusOr<std::unique_ptr<DeathWatch>> DeathWatch::Create(uint32_t job_tag, Rank self,
                                                         OnDeath on_death) {
  std::unique_ptr<DeathWatch> watch(new DeathWatch(job_tag, self, std::move(on_death)));
  auto random = SecureRandom64();
  if (!random.ok()) return random.status();
  char suffix[kRandomHexDigits + 1];
  std::snprintf(suffix, sizeof(suffix), "%016" PRIx64, *random);
  watch->name_ = SegmentPrefix(job_tag) + std::to_string(self) + "-" + suffix;
  auto segment = MapOwn(watch->name_);
  if (!segment.ok()) return segment.status();
  watch->own_ = *segment;
  new (&watch->own_->finalized) std::atomic<uint32_t>(0);
  const Status started = watch->StartHolder();
  if (!started.ok()) return started;  // the destructor joins the holder and unmaps
  return watch;
}

Status DeathWatch::StartHolder() {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  int error = 0;
  for (pthread_mutex_t& mutex : own_->mutex) {
    error = pthread_mutex_init(&mutex, &attributes);
    if (error != 0) break;
  }
  pthread_mutexattr_destroy(&attributes);
  if (error != 0) return OtherError(std::string("robust mutex: ") + std::strerror(error));
  holder_ = std::thread([this] { HoldLoop(); });
  std::unique_lock<std::mutex> lock(holder_mutex_);
  holder_cv_.wait(lock, [this] { return holder_ready_; });
  if (holder_error_ != 0) {
    return OtherError(std::string("locking robust mutex of ") + name_ + ": " +
                      std::strerror(holder_error_));
  }
  return Status::Ok();
}

void DeathWatch::HoldLoop() {
  pthread_setname_np(pthread_self(), "rft-deathhold");
  int error = 0;
  for (pthread_mutex_t& mutex : own_->mutex) {
    error = pthread_mutex_lock(&mutex);
    if (error != 0) break;
  }
  std::unique_lock<std::mutex> lock(holder_mutex_);
  holder_ready_ = true;
  holder_error_ = error;
  holder_cv_.notify_all();
  holder_cv_.wait(lock, [this] { return release_ || holder_error_ != 0; });
  // Returning ends the thread: the kernel walks its robust list and marks every mutex it holds
  // owner-died, waking the watchers (the segment is still mapped: the destructor joins first).
}

DeathWatch::~DeathWatch() {
  stop_.store(true, std::memory_order_release);
  for (auto& [segment, thread] : watchers_) {
    thread.join();
    munmap(segment, kSegmentSize);
  }
  if (own_ != nullptr) {
    // A clean end for whoever still watches, written before the release that wakes them.
    own_->finalized.store(1, std::memory_order_release);
    if (holder_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(holder_mutex_);
        release_ = true;
      }
      holder_cv_.notify_all();
      holder_.join();
    }
    munmap(own_, kSegmentSize);
  }
  Unlink();
}

void DeathWatch::Unlink() {
  if (unlinked_ || own_ == nullptr) return;
  unlinked_ = true;
  shm_unlink(name_.c_str());
}

Status DeathWatch::Watch(Rank rank, std::string_view name, size_t slot) {
  if (slot >= kWatcherSlots) {
    return ArgError("death watch slot " + std::to_string(slot) + " of rank " +
                    std::to_string(rank) + ": expected a slot below " +
                    std::to_string(kWatcherSlots));
  }
  if (!IsSegmentName(name, job_tag_, rank)) {
    return ArgError("death watch of rank " + std::to_string(rank) + ": \"" + std::string(name) +
                    "\" is not its segment name (expected " + SegmentPrefix(job_tag_) +
                    std::to_string(rank) + "- and 16 hex digits)");
  }
  auto segment = MapPeer(std::string(name));
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
      if (segment->finalized.load(std::memory_order_acquire) == 0) {
        on_death_(rank);
      } else {
        clean_ends_.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
    RFT_LOG_WARN("watching rank %u's mutex: %s; its death is left to other sources", rank,
                 std::strerror(result));
    return;
  }
}

}  // namespace rft::detector
