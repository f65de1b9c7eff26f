// rft::detector::DeathWatch: learns within microseconds that a process on this node died.
//
// Each process holds, for its whole life, a robust process-shared mutex in a small shared
// memory segment of its own (/dev/shm/rft-<job token>-<rank>). Watchers block on the mutexes of
// the peers they watch. When a holder dies, the kernel marks its robust mutexes "owner died"
// and wakes their waiters as the first step of tearing the process down (exit_mm_release),
// before the address space is freed; a pidfd or the launcher's SIGCHLD only fires after that
// teardown, which cost 1–3 ms for a process with UCX loaded here (docs/detector.md). A holder
// that ends cleanly sets a flag beside its mutex first, so its watchers see a clean end.
// Each watcher has a mutex of its own in the owner's segment (the kernel wakes one waiter per
// mutex), so all watchers learn a death at once. Nobody ever unlocks.
//
// Threading: one blocked thread per watched peer (no CPU while the peer lives; it re-checks a
// stop flag every 50 ms). Create and the destructor must run on the same thread: the mutex is
// held by the thread that locked it, and if that thread ends, the process is reported dead.
#ifndef RFT_DETECTOR_DEATH_WATCH_H_
#define RFT_DETECTOR_DEATH_WATCH_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::detector {

class DeathWatch {
 public:
  // Called on a watcher thread when a watched process died (not when it ended cleanly).
  using OnDeath = std::function<void(Rank)>;

  // Creates and locks this process's mutex. RFT_ERR_OTHER naming the segment and the system
  // error if shared memory is unavailable.
  static StatusOr<std::unique_ptr<DeathWatch>> Create(uint32_t job_token, Rank self,
                                                      OnDeath on_death);
  // Stops the watchers (≤ 50 ms), then marks this process's end as clean.
  ~DeathWatch();
  DeathWatch(const DeathWatch&) = delete;
  DeathWatch& operator=(const DeathWatch&) = delete;

  // A process holds this many mutexes, one per watcher; a watcher uses the slot it is given
  // (distinct watchers of one process must use distinct slots).
  static constexpr size_t kWatcherSlots = 8;

  // Starts watching `rank` (a process of this job on this node that already called Create)
  // through its mutex `slot`. RFT_ERR_PROC_FAILED if it is already gone.
  Status Watch(Rank rank, size_t slot);
  // Removes this process's segment name once every watcher opened it (after a fence): the
  // mapping lives on, and nothing is left in /dev/shm if the process then dies.
  void Unlink();

  static std::string SegmentName(uint32_t job_token, Rank rank);

 private:
  struct Segment;
  DeathWatch(uint32_t job_token, Rank self, OnDeath on_death);
  static StatusOr<Segment*> Map(const std::string& name, bool create);
  void WatchLoop(Rank rank, Segment* segment, pthread_mutex_t* mutex);

  const uint32_t job_token_;
  const Rank self_;
  OnDeath on_death_;
  Segment* own_ = nullptr;
  bool unlinked_ = false;
  std::atomic<bool> stop_{false};
  std::vector<std::pair<Segment*, std::thread>> watchers_;
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_DEATH_WATCH_H_
