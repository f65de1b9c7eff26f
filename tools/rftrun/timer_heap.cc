#include "tools/rftrun/timer_heap.h"

#include <algorithm>

namespace rft::rftrun {
namespace {

// std::push_heap builds a max-heap: "later" is "less" so that the earliest is on top.
struct Later {
  template <typename E>
  bool operator()(const E& a, const E& b) const {
    return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.sequence > b.sequence;
  }
};

}  // namespace

void TimerHeap::Arm(TimerId id, int64_t at_ns) {
  const uint64_t sequence = next_sequence_++;
  armed_[id] = Armed{at_ns, sequence};
  heap_.push_back(Entry{at_ns, sequence, id});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  // Re-arming leaves the old entry behind; keep the heap from growing without bound when one
  // id is moved many times before it comes due.
  if (heap_.size() > 2 * armed_.size() + 16) {
    std::vector<Entry> live;
    live.reserve(armed_.size());
    for (const auto& [timer, when] : armed_)
      live.push_back(Entry{when.at_ns, when.sequence, timer});
    heap_ = std::move(live);
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }
}

std::vector<uint32_t> TimerHeap::DisarmAll(TimerKind kind) {
  std::vector<uint32_t> subjects;
  // armed_ is ordered by kind, then subject: one kind's timers are one range.
  auto it = armed_.lower_bound(TimerId{kind, 0});
  while (it != armed_.end() && it->first.kind == kind) {
    subjects.push_back(it->first.subject);
    it = armed_.erase(it);
  }
  return subjects;
}

void TimerHeap::DropStale() {
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    const auto it = armed_.find(top.id);
    if (it != armed_.end() && it->second.sequence == top.sequence) return;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }
}

std::optional<int64_t> TimerHeap::NextAt() {
  DropStale();
  if (heap_.empty()) return std::nullopt;
  return heap_.front().at_ns;
}

std::optional<TimerId> TimerHeap::TakeDue(int64_t now_ns) {
  DropStale();
  if (heap_.empty() || heap_.front().at_ns > now_ns) return std::nullopt;
  const TimerId id = heap_.front().id;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
  armed_.erase(id);
  return id;
}

}  // namespace rft::rftrun
