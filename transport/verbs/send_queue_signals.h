// Selective signaling of an RC QP's send queue (the eager channel's, eager_channel.h): which
// SENDs ask for a completion, so that entries come back before the queue is full. Sans I/O.
#ifndef RFT_TRANSPORT_VERBS_SEND_QUEUE_SIGNALS_H_
#define RFT_TRANSPORT_VERBS_SEND_QUEUE_SIGNALS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rft::verbs {

// Selective signaling of one QP's send queue, without I/O. Only a signaled SEND produces a
// completion (unless it fails: an error completes every work request), and that completion
// frees its send queue entry together with those of the unsignaled SENDs posted before it, since
// a QP's sends complete in order. So the count of entries in use drops only at signaled
// completions: the SEND that takes the last free entry is always signaled, and the queue cannot
// fill up with nothing left to free it. At least every `every`-th SEND is signaled too, so that
// entries come back before the queue is full.
class SendQueueSignals {
 public:
  // `depth` entries, in [1, 2^31); `every` in [1, depth] (clamped).
  SendQueueSignals(uint32_t depth, uint32_t every)
      : depth_(std::max(depth, 1u)), every_(std::clamp(every, 1u, depth_)), frees_(depth_) {}

  uint32_t depth() const { return depth_; }
  uint32_t in_use() const { return in_use_; }
  bool has_room() const { return in_use_ < depth_; }
  // Signaled SENDs whose completion is still to come.
  uint32_t awaited() const { return count_; }

  // A SEND takes an entry (has_room() must hold); true when it must be signaled. `must`: it is
  // signaled anyway (its slot is freed by its completion). Inline with Completed: once per SEND
  // (forced: the compiler left it out of line in the data plane's send).
  [[gnu::always_inline]] bool Take(bool must) {
    ++in_use_;
    if (!must && in_use_ < depth_ && unsignaled_ + 1 < every_) {
      ++unsignaled_;
      return false;
    }
    frees_[Wrap(head_ + count_)] = unsignaled_ + 1;
    ++count_;
    unsignaled_ = 0;
    return true;
  }
  // The oldest signaled SEND completed, freeing its entry and the unsignaled ones before it.
  // False (and nothing changes) when no signaled SEND was awaited.
  bool Completed() {
    if (count_ == 0) return false;
    in_use_ -= frees_[head_];
    head_ = Wrap(head_ + 1);
    --count_;
    return true;
  }

 private:
  // An index of the ring from one below 2 * depth_ (a compare, not a division).
  uint32_t Wrap(uint32_t index) const { return index >= depth_ ? index - depth_ : index; }

  uint32_t depth_;
  uint32_t every_;
  uint32_t in_use_ = 0;
  uint32_t unsignaled_ = 0;  // posted since the last signaled one
  // A ring of what each awaited signaled SEND frees (itself and the unsignaled ones before it),
  // oldest at head_; at most depth_ are awaited.
  std::vector<uint32_t> frees_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_SEND_QUEUE_SIGNALS_H_
