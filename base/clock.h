// Monotonic time for drivers and blocking waits.
//
// Protocol state machines never call these: they receive the current time as an argument (so the
// simulator can drive them), which is why Deadline also offers overloads that take `now_ns`.
// All times are nanoseconds of CLOCK_MONOTONIC as int64_t (about 292 years of range).
#ifndef RFT_BASE_CLOCK_H_
#define RFT_BASE_CLOCK_H_

#include <time.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <limits>

namespace rft {

// CLOCK_MONOTONIC in nanoseconds. A vDSO call: tens of nanoseconds, no system call.
inline int64_t MonotonicNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A point in monotonic time by which something must happen, or Never.
class Deadline {
 public:
  // Expires `timeout` from now. A zero or negative timeout gives an already expired deadline;
  // a timeout too large to represent gives Never.
  static Deadline After(std::chrono::nanoseconds timeout) {
    return AfterFrom(MonotonicNanos(), timeout);
  }
  static Deadline AfterFrom(int64_t now_ns, std::chrono::nanoseconds timeout) {
    int64_t t = timeout.count();
    if (t > 0 && now_ns > kNever - t) return Never();
    return Deadline(now_ns + (t > 0 ? t : 0));
  }
  // Expires at the absolute monotonic time `ns`.
  static Deadline At(int64_t ns) { return Deadline(ns); }
  static Deadline Never() { return Deadline(kNever); }

  bool is_never() const { return at_ns_ == kNever; }
  // The absolute expiry time; INT64_MAX for Never.
  int64_t at_ns() const { return at_ns_; }

  bool expired() const { return expired(MonotonicNanos()); }
  bool expired(int64_t now_ns) const { return !is_never() && now_ns >= at_ns_; }

  // Time left, clamped at zero; nanoseconds::max() for Never.
  std::chrono::nanoseconds remaining() const { return remaining(MonotonicNanos()); }
  std::chrono::nanoseconds remaining(int64_t now_ns) const {
    if (is_never()) return std::chrono::nanoseconds::max();
    return std::chrono::nanoseconds(now_ns >= at_ns_ ? 0 : at_ns_ - now_ns);
  }

  // The timeout argument for poll(2)/epoll_wait(2): -1 for Never, else the remaining time in
  // milliseconds rounded up (so a wait never wakes before the deadline), capped at INT_MAX.
  int remaining_ms_for_poll() const { return remaining_ms_for_poll(MonotonicNanos()); }
  int remaining_ms_for_poll(int64_t now_ns) const {
    if (is_never()) return -1;
    int64_t ns = remaining(now_ns).count();
    int64_t ms = ns / 1000000 + (ns % 1000000 != 0 ? 1 : 0);
    return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
  }

  // The earlier of two deadlines.
  static Deadline Earliest(Deadline a, Deadline b) { return a.at_ns_ <= b.at_ns_ ? a : b; }

  friend bool operator==(const Deadline&, const Deadline&) = default;

 private:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  explicit Deadline(int64_t at_ns) : at_ns_(at_ns) {}

  int64_t at_ns_;
};

// Measures elapsed monotonic time from construction or the last Restart().
class Stopwatch {
 public:
  Stopwatch() : start_ns_(MonotonicNanos()) {}
  void Restart() { start_ns_ = MonotonicNanos(); }
  int64_t elapsed_ns() const { return MonotonicNanos() - start_ns_; }
  std::chrono::nanoseconds elapsed() const { return std::chrono::nanoseconds(elapsed_ns()); }

 private:
  int64_t start_ns_;
};

}  // namespace rft

#endif  // RFT_BASE_CLOCK_H_
