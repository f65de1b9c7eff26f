// rft::detector::FailureRegistry: the one place a process records that another process failed.
//
// Every source reports here (DESIGN.md §1): the launcher's termination events, the transport
// (UCX's error callback, a cross-memory read that found the sender gone), the operating system
// (a same-node peer's pidfd), heartbeat timeouts, failures propagated by the reliable
// broadcast, and later agreements. The registry is idempotent (a rank is recorded once, by
// whichever source was first), keeps one global order of failures (so the lists it hands out
// are prefixes of each other, as get_failed needs), grows when replacements join the job, and
// passes each new failure to its listeners in that order: the data plane's failure completion, the
// control plane's protocol cores, and an optional application callback.
//
// Threading: Report may be called from any thread, also from a listener. Listeners run on the
// thread that dispatches, one record at a time in the global order: a report made while another
// thread (or an outer call on this thread) is dispatching is handed to the listeners by that
// dispatcher, possibly after Report returned. Listeners must be quick and never removed; one
// added late is called for the records not yet dispatched. count(), IsFailed() and the wake fd
// are lock-free to read.
#ifndef RFT_DETECTOR_FAILURE_REGISTRY_H_
#define RFT_DETECTOR_FAILURE_REGISTRY_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/rank_set.h"
#include "base/status.h"

namespace rft::detector {

enum class FailureSource : uint8_t {
  kLauncher,     // the launcher's (PMIx) termination event
  kTransport,    // a transport error naming the peer
  kProcessExit,  // the operating system saw the process exit (same node)
  kHeartbeat,    // its observer saw no heartbeat for the timeout
  kPropagated,   // another process's news, through the reliable broadcast
  kAgreement,    // an agreement's decided failed set
  kApplication,  // the caller (tests, the API layer's own knowledge)
  kStartup,      // it did not publish its address within RFT_PMIX_TIMEOUT at start-up
  kDeadline,     // it did not contribute to a guarded agreement by its deadline
};
const char* FailureSourceName(FailureSource source);

struct FailureRecord {
  Rank rank = kInvalidRank;
  FailureSource source = FailureSource::kApplication;
  int64_t known_ns = 0;  // MonotonicNanos() when it was recorded here
};

class FailureRegistry;

// A listener's registration, owned by whoever the listener calls into: destroying (or Reset)
// it removes the listener, and after that the listener is not running and never runs again
// (it waits for a dispatch in progress on another thread; from inside the listener itself it
// only stops later calls). Move-only; must not outlive its registry.
class [[nodiscard]] Subscription {
 public:
  Subscription() = default;
  Subscription(Subscription&& other) noexcept { *this = std::move(other); }
  Subscription& operator=(Subscription&& other) noexcept;
  ~Subscription() { Reset(); }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  void Reset();
  bool active() const { return registry_ != nullptr; }

 private:
  friend class FailureRegistry;
  Subscription(FailureRegistry* registry, size_t id) : registry_(registry), id_(id) {}
  FailureRegistry* registry_ = nullptr;
  size_t id_ = 0;
};

class FailureRegistry {
 public:
  using Listener = std::function<void(const FailureRecord&)>;

  // `self` is this process's rank in a job of `size`; RFT_ERR_ARG if self >= size.
  static StatusOr<std::unique_ptr<FailureRegistry>> Create(Rank self, uint32_t size);
  ~FailureRegistry();
  FailureRegistry(const FailureRegistry&) = delete;
  FailureRegistry& operator=(const FailureRegistry&) = delete;

  // Records that `rank` failed. True the first time; false when it was already known, or for
  // this process itself or a rank outside the job (those are counted, never recorded: a
  // process declared failed is the control plane's to end, not the registry's to list).
  bool Report(Rank rank, FailureSource source);

  // Records that `rank` ended cleanly (it said so): from now on reports of it are ignored, so
  // its closing endpoints and its silence never make it a failure. False, and nothing
  // changes, when it is already failed (that stays), is this process, or is out of range.
  bool Depart(Rank rank);
  bool IsDeparted(Rank rank) const;

  // Records that `rank` was aborted by another process (an abort of a group it belongs to; the
  // reliable broadcast's kAborted): its failure, recorded as any other, is an abort. Any rank,
  // any time; idempotent.
  void MarkAborted(Rank rank);
  bool IsAborted(Rank rank) const;

  // `listener` runs for every record from now on, in the global order, on the thread that
  // reported it (or one reporting concurrently); never for records before the call.
  Subscription Subscribe(Listener listener);

  // Failures recorded so far; moves by one per new failure (an epoch waits can compare).
  uint64_t count() const { return count_.load(std::memory_order_acquire); }
  bool IsFailed(Rank rank) const {
    if (rank < first_size_) return known_[rank].load(std::memory_order_acquire);
    const std::atomic<bool>* flag = GrownFlag(rank);
    return flag != nullptr && flag->load(std::memory_order_acquire);
  }
  // Every failure in the order recorded; a later call returns a longer or equal list with this
  // one as its prefix.
  std::vector<FailureRecord> Records() const;
  RankSet Failed() const;
  // Reports that changed nothing (already known, departed, self, out of range).
  uint64_t ignored_reports() const { return ignored_.load(std::memory_order_relaxed); }

  // An eventfd that becomes readable after every new failure (for poll loops; the reader
  // drains it). Waits until count() > `seen` or the deadline: true if it moved.
  int wake_fd() const { return wake_fd_; }
  bool WaitForChange(uint64_t seen, Deadline deadline) const;

  // Ranks [size(), new_size) join the job (spawned replacements take new ranks, never a failed
  // one's): from now on they can be reported. Lock-free readers on other threads see them as
  // not failed at once. RFT_ERR_ARG for new_size below size() or above kMaxRank + 1; equal is a
  // no-op.
  Status Grow(uint32_t new_size);

  Rank self() const { return self_; }
  uint32_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  friend class Subscription;
  FailureRegistry(Rank self, uint32_t size);
  size_t AddListener(Listener listener);
  void RemoveListener(size_t id);
  // Hands every record not yet dispatched to the listeners, in order, unless another call up
  // the stack (or on another thread) is doing it; that one then picks up ours too.
  void Dispatch();
  // The flag of a rank that joined by growth; nullptr beyond the size.
  const std::atomic<bool>* GrownFlag(Rank rank) const;
  std::atomic<bool>* FlagOf(Rank rank) {
    return rank < first_size_ ? &known_[rank] : const_cast<std::atomic<bool>*>(GrownFlag(rank));
  }

  // The flags of the ranks that joined by growth, one block per growth that outgrew the
  // capacity. Each block at least doubles the capacity, so a few dozen cover any job; a block,
  // once published (segment_count_, release), never moves.
  struct Segment {
    Rank first = 0;
    Rank last = 0;  // exclusive
    std::unique_ptr<std::atomic<bool>[]> flags;
  };
  static constexpr size_t kMaxSegments = 40;

  const Rank self_;
  const uint32_t first_size_;
  std::atomic<uint32_t> size_;
  std::unique_ptr<std::atomic<bool>[]> known_;  // [0, first_size_)
  std::array<Segment, kMaxSegments> segments_;
  std::atomic<size_t> segment_count_{0};
  uint32_t capacity_;  // guarded by mutex_
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> ignored_{0};
  int wake_fd_ = -1;

  mutable std::mutex mutex_;  // guards records_, dispatched_, dispatching_, listeners_
  mutable std::condition_variable changed_;
  std::vector<FailureRecord> records_;
  std::vector<bool> departed_;  // [rank]; guarded by mutex_
  RankSet aborted_;             // guarded by mutex_
  size_t dispatched_ = 0;       // records_[0, dispatched_) reached every listener
  bool dispatching_ = false;    // some thread is inside Dispatch's listener calls
  std::thread::id dispatcher_;
  std::vector<std::unique_ptr<Listener>> listeners_;  // pointers: stable while called unlocked
  std::vector<std::unique_ptr<Listener>> removed_;    // removed by themselves; freed after dispatch
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_FAILURE_REGISTRY_H_
