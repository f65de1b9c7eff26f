// rft::detector::DeathWatch: learns within microseconds that a process on this node died.
//
// Each process holds, for its whole life, robust process-shared mutexes in a small shared
// memory segment of its own. Watchers block on the mutexes of the peers they watch. When a
// holder dies, the kernel marks its robust mutexes "owner died" and wakes their waiters as the
// first step of tearing the process down (exit_mm_release), before the address space is freed;
// a pidfd or the launcher's SIGCHLD only fires after that teardown, which cost 1–3 ms for a
// process with UCX loaded here (docs/detector.md). A holder that ends cleanly sets a flag
// beside its mutexes first, so its watchers see a clean end.
// Each watcher has a mutex of its own in the owner's segment (the kernel wakes one waiter per
// mutex), so all watchers learn a death at once. Nobody ever unlocks.
//
// The mutexes are held by a thread of this class's own whose exit is the release: the kernel
// marks them owner-died while the segment is still mapped (the destructor unmaps only after
// joining it), and no application thread's robust list ever points into the segment.
//
// Safety against other users of the node (docs/reliability.md): a segment's name carries 64
// random bits chosen at Create, so nobody can create it first; it is created exclusively with
// mode 0600 and never through a symbolic link; a watcher opens only names its peers advertised
// (through the launcher) and maps a segment only if it is a regular file of this user, mode
// 0600, of the exact size.
//
// Threading: one blocked thread per watched peer (no CPU while the peer lives; it re-checks a
// stop flag every 50 ms), plus the holder thread (blocked for the process's life).
#ifndef RFT_DETECTOR_DEATH_WATCH_H_
#define RFT_DETECTOR_DEATH_WATCH_H_

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::detector {

class DeathWatch {
 public:
  // Called on a watcher thread when a watched process died (not when it ended cleanly).
  using OnDeath = std::function<void(Rank)>;

  // Creates this process's segment, named SegmentPrefix(job_tag) + "<self>-<16 random hex>",
  // and has the holder thread lock its mutexes. RFT_ERR_OTHER naming the segment and the
  // system error if shared memory is unavailable or the name is taken.
  static StatusOr<std::unique_ptr<DeathWatch>> Create(uint32_t job_tag, Rank self,
                                                      OnDeath on_death);
  // Stops the watchers (≤ 50 ms), marks this process's end as clean, releases the mutexes and
  // only then unmaps the segment.
  ~DeathWatch();
  DeathWatch(const DeathWatch&) = delete;
  DeathWatch& operator=(const DeathWatch&) = delete;

  // A process holds this many mutexes, one per watcher; a watcher uses the slot it is given
  // (distinct watchers of one process must use distinct slots).
  static constexpr size_t kWatcherSlots = 8;

  // The name of this process's segment, for its peers to Watch.
  const std::string& name() const { return name_; }

  // Starts watching `rank` through its segment `name` (as `rank` advertised it) and mutex
  // `slot`. RFT_ERR_ARG for a bad slot or a name that is not a segment name of `rank` in this
  // job; RFT_ERR_OTHER naming the check that failed if the segment is missing or is not this
  // user's private segment of the right size. Never RFT_ERR_PROC_FAILED: a segment that cannot
  // be watched says nothing about its process (other sources still see its death).
  Status Watch(Rank rank, std::string_view name, size_t slot);
  // Removes this process's segment name once every watcher opened it (after a fence): the
  // mapping lives on, and nothing is left in /dev/shm if the process then dies.
  void Unlink();

  // Watched processes seen ending cleanly (not reported as deaths).
  uint64_t clean_ends() const { return clean_ends_.load(std::memory_order_relaxed); }

  // "/rft-<job_tag as 8 hex>-": every segment of a job starts with it, so the launcher can
  // remove what a crashed job left in /dev/shm (only its own user's files).
  static std::string SegmentPrefix(uint32_t job_tag);
  // Whether `name` is a segment name of `rank` in the job `job_tag`.
  static bool IsSegmentName(std::string_view name, uint32_t job_tag, Rank rank);

 private:
  struct Segment;
  DeathWatch(uint32_t job_tag, Rank self, OnDeath on_death);
  Status StartHolder();
  void HoldLoop();
  static StatusOr<Segment*> MapOwn(const std::string& name);
  static StatusOr<Segment*> MapPeer(const std::string& name);
  void WatchLoop(Rank rank, Segment* segment, pthread_mutex_t* mutex);

  const uint32_t job_tag_;
  const Rank self_;
  OnDeath on_death_;
  std::string name_;
  Segment* own_ = nullptr;
  bool unlinked_ = false;
  std::atomic<bool> stop_{false};
  std::vector<std::pair<Segment*, std::thread>> watchers_;
  std::atomic<uint64_t> clean_ends_{0};

  // The holder thread and its hand-shake: it reports the outcome of locking, then waits for
  // release_ (set by the destructor) and returns, which releases the mutexes.
  std::thread holder_;
  std::mutex holder_mutex_;
  std::condition_variable holder_cv_;
  bool holder_ready_ = false;  // guarded by holder_mutex_
  int holder_error_ = 0;       // guarded by holder_mutex_; errno-style
  bool release_ = false;       // guarded by holder_mutex_
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_DEATH_WATCH_H_
