// The launcher's deadlines in one place. Each timer is a kind and a subject (a process's index
// for per-process timers, 0 for the job's own), armed at an absolute time of the launcher's
// clock; the poll loop sleeps until the earliest and then takes what is due, earliest first.
// Pure: times are arguments, so the rules built on it are tested with a clock the test turns.
#ifndef RFT_TOOLS_RFTRUN_TIMER_HEAP_H_
#define RFT_TOOLS_RFTRUN_TIMER_HEAP_H_

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace rft::rftrun {

enum class TimerKind : uint8_t {
  kJobTimeout,     // --timeout
  kNextFault,      // the next --kill/--stop of the schedule
  kSignalAnyway,   // a fault that waited for a PMIx handshake that did not come (per process)
  kFinalizeGrace,  // an exit with status 0 waiting for its PMIx_Finalize notice (per process)
  kKillAfterTerm,  // SIGKILL whoever is left after a SIGTERM
  kDrainOutput,    // stop waiting for output once every process exited
  kNodesGiveUp,    // stop waiting for the other nodes after --timeout or a signal
};

struct TimerId {
  TimerKind kind = TimerKind::kJobTimeout;
  uint32_t subject = 0;
  auto operator<=>(const TimerId&) const = default;
};

class TimerHeap {
 public:
  // Arms `id` at `at_ns`; an armed id moves to the new time.
  void Arm(TimerId id, int64_t at_ns);
  // Arms `id` at `at_ns` unless it is armed already (a deadline set by the first event only).
  void ArmOnce(TimerId id, int64_t at_ns) {
    if (!armed(id)) Arm(id, at_ns);
  }
  void Disarm(TimerId id) { armed_.erase(id); }
  // Disarms every timer of `kind`; returns their subjects, in increasing order.
  std::vector<uint32_t> DisarmAll(TimerKind kind);
  bool armed(TimerId id) const { return armed_.count(id) != 0; }
  // The earliest armed time, if any.
  std::optional<int64_t> NextAt();
  // The earliest timer due at `now_ns`, disarmed; nothing when none is due. Timers due at the
  // same time come in the order they were armed.
  std::optional<TimerId> TakeDue(int64_t now_ns);
  size_t size() const { return armed_.size(); }

 private:
  struct Entry {
    int64_t at_ns;
    uint64_t sequence;  // arming order: ties and staleness
    TimerId id;
  };
  // Drops entries at the top whose id was disarmed or armed again since.
  void DropStale();

  std::vector<Entry> heap_;  // a min-heap by (at_ns, sequence); may hold stale entries
  struct Armed {
    int64_t at_ns;
    uint64_t sequence;
  };
  std::map<TimerId, Armed> armed_;
  uint64_t next_sequence_ = 0;
};

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_TIMER_HEAP_H_
