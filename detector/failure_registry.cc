#include "detector/failure_registry.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/log.h"
#include "base/timeline.h"

namespace rft::detector {

const char* FailureSourceName(FailureSource source) {
  switch (source) {
    case FailureSource::kLauncher:
      return "launcher";
    case FailureSource::kTransport:
      return "transport";
    case FailureSource::kProcessExit:
      return "process exit";
    case FailureSource::kHeartbeat:
      return "heartbeat";
    case FailureSource::kPropagated:
      return "propagated";
    case FailureSource::kAgreement:
      return "agreement";
    case FailureSource::kApplication:
      return "application";
    case FailureSource::kStartup:
      return "start-up";
    case FailureSource::kDeadline:
      return "deadline";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<FailureRegistry>> FailureRegistry::Create(Rank self, uint32_t size) {
  if (self >= size) {
    return ArgError("failure registry for rank " + std::to_string(self) +
                    ": expected a rank below the job size " + std::to_string(size));
  }
  std::unique_ptr<FailureRegistry> registry(new FailureRegistry(self, size));
  registry->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (registry->wake_fd_ < 0) return OtherError(std::string("eventfd: ") + std::strerror(errno));
  return registry;
}

FailureRegistry::FailureRegistry(Rank self, uint32_t size)
    : self_(self),
      first_size_(size),
      size_(size),
      known_(new std::atomic<bool>[size]),
      capacity_(size),
      departed_(size, false) {
  for (uint32_t r = 0; r < size; ++r) known_[r].store(false, std::memory_order_relaxed);
}

const std::atomic<bool>* FailureRegistry::GrownFlag(Rank rank) const {
  if (rank >= size_.load(std::memory_order_acquire)) return nullptr;
  const size_t count = segment_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    const Segment& segment = segments_[i];
    if (rank >= segment.first && rank < segment.last) return &segment.flags[rank - segment.first];
  }
  return nullptr;  // not reached: the segments cover [first_size_, size_)
}

Status FailureRegistry::Grow(uint32_t new_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t size = size_.load(std::memory_order_relaxed);
  if (new_size < size || new_size - 1 > kMaxRank) {
    return ArgError("failure registry: cannot grow the job from " + std::to_string(size) + " to " +
                    std::to_string(new_size) + " ranks: expected a larger size, at most " +
                    std::to_string(kMaxRank + 1ull));
  }
  if (new_size > capacity_) {
    const size_t index = segment_count_.load(std::memory_order_relaxed);
    RFT_CHECK(index < kMaxSegments, "FailureRegistry: out of segments");
    const uint64_t doubled = std::min<uint64_t>(2ull * capacity_, kMaxRank + 1ull);
    const auto capacity = static_cast<uint32_t>(std::max<uint64_t>(new_size, doubled));
    Segment& segment = segments_[index];
    segment.first = capacity_;
    segment.last = capacity;
    segment.flags.reset(new std::atomic<bool>[capacity - capacity_]);
    for (uint32_t i = 0; i < capacity - capacity_; ++i) {
      segment.flags[i].store(false, std::memory_order_relaxed);
    }
    segment_count_.store(index + 1, std::memory_order_release);
    capacity_ = capacity;
  }
  departed_.resize(new_size, false);
  size_.store(new_size, std::memory_order_release);
  return Status::Ok();
}

FailureRegistry::~FailureRegistry() {
  if (wake_fd_ >= 0) close(wake_fd_);
}

Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    Reset();
    registry_ = other.registry_;
    id_ = other.id_;
    other.registry_ = nullptr;
  }
  return *this;
}

void Subscription::Reset() {
  if (registry_ == nullptr) return;
  registry_->RemoveListener(id_);
  registry_ = nullptr;
}

Subscription FailureRegistry::Subscribe(Listener listener) {
  return Subscription(this, AddListener(std::move(listener)));
}

size_t FailureRegistry::AddListener(Listener listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_.push_back(std::make_unique<Listener>(std::move(listener)));
  return listeners_.size() - 1;
}

void FailureRegistry::RemoveListener(size_t id) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (id >= listeners_.size() || listeners_[id] == nullptr) return;
  if (dispatching_ && dispatcher_ == std::this_thread::get_id()) {
    // Inside a listener: the dispatch loop owns the object until its call returns.
    removed_.push_back(std::move(listeners_[id]));
    return;
  }
  changed_.wait(lock, [this] { return !dispatching_; });
  listeners_[id].reset();
}

bool FailureRegistry::Report(Rank rank, FailureSource source) {
  if (rank >= size() || rank == self_) {
    ignored_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::atomic<bool>* flag = FlagOf(rank);
    if (flag->load(std::memory_order_relaxed)) {
      ignored_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (departed_[rank]) {
      // Its endpoints closing, its silence: what a clean end looks like from here.
      ignored_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    records_.push_back({rank, source, MonotonicNanos()});
    flag->store(true, std::memory_order_release);
    count_.fetch_add(1, std::memory_order_release);
  }
  RFT_LOG_DEBUG("rank %u recorded failed (%s)", rank, FailureSourceName(source));
  timeline::Record(timeline::Event::kFailed, rank, FailureSourceName(source));
  changed_.notify_all();
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof(one));
  Dispatch();
  return true;
}

bool FailureRegistry::Depart(Rank rank) {
  if (rank >= size() || rank == self_) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlagOf(rank)->load(std::memory_order_relaxed)) return false;
  departed_[rank] = true;
  return true;
}

bool FailureRegistry::IsDeparted(Rank rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rank < size() && departed_[rank];
}

void FailureRegistry::MarkAborted(Rank rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_.Insert(rank);
}

bool FailureRegistry::IsAborted(Rank rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_.Contains(rank);
}

void FailureRegistry::Dispatch() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (dispatching_) return;  // the dispatching call will reach our record
  dispatching_ = true;
  dispatcher_ = std::this_thread::get_id();
  while (dispatched_ < records_.size()) {
    const FailureRecord record = records_[dispatched_++];
    for (size_t i = 0; i < listeners_.size(); ++i) {
      Listener* listener = listeners_[i].get();
      if (listener == nullptr) continue;
      lock.unlock();
      (*listener)(record);
      lock.lock();
    }
  }
  removed_.clear();
  dispatching_ = false;
  changed_.notify_all();  // RemoveListener waits for this
}

std::vector<FailureRecord> FailureRegistry::Records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

RankSet FailureRegistry::Failed() const {
  RankSet failed;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const FailureRecord& record : records_) failed.Insert(record.rank);
  return failed;
}

bool FailureRegistry::WaitForChange(uint64_t seen, Deadline deadline) const {
  std::unique_lock<std::mutex> lock(mutex_);
  auto moved = [&] { return count_.load(std::memory_order_acquire) > seen; };
  if (deadline.is_never()) {
    changed_.wait(lock, moved);
    return true;
  }
  return changed_.wait_for(lock, deadline.remaining(), moved);
}

}  // namespace rft::detector
