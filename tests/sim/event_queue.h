// rft::sim::EventQueue: the simulator's priority queue of events, ordered by (time, sequence).
//
// A calendar queue: time is cut into buckets of 2^bucket_shift ns, and a ring of buckets covers
// the near future (2^23 ns, about 8 ms: a heartbeat period plus lateness, and every message
// latency). Events in the ring sit unsorted in their bucket; the bucket being drained is
// sorted once and popped from its end. Events pushed into that bucket (or before it) while it
// drains go to a small heap beside it. Events beyond the ring wait in an overflow heap and move
// into the ring as time advances. A flood of millions of messages a few microseconds apart thus
// costs one sort per 128 ns of simulated time instead of a heap of everything in flight (the
// simulator's hot spot at 65,536 ranks).
//
// Event must have `int64_t time` and an unsigned `sequence` that is unique per push.
#ifndef RFT_TESTS_SIM_EVENT_QUEUE_H_
#define RFT_TESTS_SIM_EVENT_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rft::sim {

template <class Event>
class EventQueue {
 public:
  // Buckets of 2^bucket_shift ns (at most 2^23): fine ones for big jobs, whose floods put
  // thousands of events in every microsecond; coarse ones for small jobs, which then need few.
  explicit EventQueue(int bucket_shift)
      : bucket_shift_(bucket_shift),
        buckets_(int64_t{1} << (kHorizonShift - bucket_shift)),
        ring_(static_cast<size_t>(buckets_)) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void Push(const Event& event) {
    ++size_;
    const int64_t bucket = BucketOf(event.time);
    if (bucket <= current_bucket_) {
      // The bucket being drained (or an earlier one, after a look-ahead moved past it): its
      // events are all earlier than anything in the ring, so merging with `sorted_` suffices.
      late_.push_back(event);
      std::push_heap(late_.begin(), late_.end(), Later);
    } else if (bucket < current_bucket_ + buckets_) {
      ring_[Slot(bucket)].push_back(event);
      ++in_ring_;
    } else {
      overflow_.push_back(event);
      std::push_heap(overflow_.begin(), overflow_.end(), Later);
    }
  }

  // The earliest event; the queue must not be empty.
  const Event& Top() {
    if (sorted_.empty() && late_.empty()) Advance();
    return TakeFromLate() ? late_.front() : sorted_.back();
  }

  void Pop() {
    if (sorted_.empty() && late_.empty()) Advance();
    if (TakeFromLate()) {
      std::pop_heap(late_.begin(), late_.end(), Later);
      late_.pop_back();
    } else {
      sorted_.pop_back();
    }
    --size_;
  }

 private:
  static constexpr int kHorizonShift = 23;  // 8.4 ms
  static constexpr size_t kKeptCapacity = 256;

  // A function object, not a function, so the heap algorithms inline it.
  struct LaterThan {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
    }
  };
  static constexpr LaterThan Later{};

  int64_t BucketOf(int64_t time) const { return time >> bucket_shift_; }
  size_t Slot(int64_t bucket) const { return static_cast<size_t>(bucket & (buckets_ - 1)); }

  bool TakeFromLate() const {
    return !late_.empty() && (sorted_.empty() || Later(sorted_.back(), late_.front()));
  }

  // Moves to the next non-empty bucket and sorts it (latest first) into sorted_.
  void Advance() {
    while (sorted_.empty() && late_.empty() && size_ > 0) {
      if (in_ring_ == 0) {
        current_bucket_ = BucketOf(overflow_.front().time);
      } else {
        do {
          ++current_bucket_;
        } while (ring_[Slot(current_bucket_)].empty());
        std::vector<Event>& bucket = ring_[Slot(current_bucket_)];
        in_ring_ -= bucket.size();
        sorted_.swap(bucket);
        // The slot inherits the drained vector. Keep a small one for reuse; a big one from a
        // flood would pin its memory in a slot that may never see a flood again.
        if (bucket.capacity() > kKeptCapacity) std::vector<Event>().swap(bucket);
      }
      // The ring now reaches further: bring in the overflow events it covers.
      while (!overflow_.empty() && BucketOf(overflow_.front().time) < current_bucket_ + buckets_) {
        const Event event = overflow_.front();
        std::pop_heap(overflow_.begin(), overflow_.end(), Later);
        overflow_.pop_back();
        const int64_t bucket = BucketOf(event.time);
        if (bucket <= current_bucket_) {
          sorted_.push_back(event);
        } else {
          ring_[Slot(bucket)].push_back(event);
          ++in_ring_;
        }
      }
      std::sort(sorted_.begin(), sorted_.end(), Later);
    }
  }

  int bucket_shift_;
  int64_t buckets_;
  std::vector<std::vector<Event>> ring_;
  std::vector<Event> sorted_;    // the bucket being drained, latest first
  std::vector<Event> late_;      // heap of events pushed into the drained bucket meanwhile
  std::vector<Event> overflow_;  // heap of events beyond the ring
  int64_t current_bucket_ = 0;
  size_t in_ring_ = 0;
  size_t size_ = 0;
};

}  // namespace rft::sim

#endif  // RFT_TESTS_SIM_EVENT_QUEUE_H_
