// MPI tag matching for one communicator context: the receives posted and not yet matched, and
// the messages arrived and not yet matched ("unexpected").
//
// The rules (MPI 3.1 §3.5): a message matches a receive when the receive names its source or
// ANY_SOURCE and its tag or ANY_TAG. Among receives, the earliest posted wins; among messages,
// the earliest arrived — so messages from one source are received in the order sent
// (non-overtaking), and a wildcard receive posted before a specific one takes the message.
//
// Nodes are intrusive and owned by the caller (pooled requests and message records): no
// operation allocates. Matching scans the list in order, O(queue length); a per-source index
// can replace the scan behind this interface when the benchmarks ask for it.
// Not thread-safe: one data-plane thread owns a context's queue.
#ifndef RFT_TRANSPORT_MATCHING_MATCHING_QUEUE_H_
#define RFT_TRANSPORT_MATCHING_MATCHING_QUEUE_H_

#include <cstdint>

#include "base/rank_set.h"
#include "transport/matching/intrusive_list.h"

namespace rft::transport {

// Never a real rank (ranks are <= kMaxRank).
inline constexpr Rank kAnySource = kInvalidRank;
// Real tags are >= 0.
inline constexpr int32_t kAnyTag = -1;

struct PostedReceive : ListNode {
  Rank source = kAnySource;
  int32_t tag = kAnyTag;
  void* owner = nullptr;  // the request
};

struct UnexpectedMessage : ListNode {
  Rank source = 0;
  int32_t tag = 0;
  void* owner = nullptr;  // the message record (header, data descriptor)
};

class MatchingQueue {
 public:
  // A message arrived: the earliest-posted receive it matches, removed; or nullptr, and the
  // caller keeps the message with AddUnexpected.
  PostedReceive* MatchArrival(Rank source, int32_t tag);
  void AddUnexpected(UnexpectedMessage* message) { unexpected_.push_back(message); }

  // A receive is posted (wildcards allowed): the earliest-arrived message it matches, removed;
  // or nullptr, and the caller queues the receive with AddPosted.
  UnexpectedMessage* MatchPosted(Rank source, int32_t tag);
  void AddPosted(PostedReceive* receive);

  // The earliest-arrived message a receive for (source, tag) would match; not removed.
  const UnexpectedMessage* Probe(Rank source, int32_t tag) const;

  // Removes a posted receive; false when it had already matched (or was never posted).
  bool Cancel(PostedReceive* receive);

  // Failure completion of `source`: removes every posted receive that names it, in posted
  // order, handing each to `on_removed`. ANY_SOURCE receives stay: whether they fail is the
  // API layer's decision (PROC_FAILED_PENDING). Unexpected messages from `source` stay too:
  // data that arrived is not lost.
  template <class F>
  void RemovePostedFrom(Rank source, F&& on_removed) {
    for (PostedReceive* r = posted_.front(); r != nullptr;) {
      PostedReceive* next = posted_.next(r);
      if (r->source == source) {
        Unlink(r);
        on_removed(r);
      }
      r = next;
    }
  }

  // Visits the unexpected messages from `source` in arrival order, leaving them queued (the
  // data plane marks those whose data a failed sender still held).
  template <class F>
  void ForEachUnexpectedFrom(Rank source, F&& visit) {
    for (UnexpectedMessage* m = unexpected_.front(); m != nullptr; m = unexpected_.next(m)) {
      if (m->source == source) visit(m);
    }
  }

  // Removes, in arrival order, the unexpected messages `stale` picks, handing each to
  // `on_removed` (a context's older life: its id was reused with a newer epoch).
  template <class Stale, class F>
  void RemoveUnexpectedIf(Stale&& stale, F&& on_removed) {
    for (UnexpectedMessage* m = unexpected_.front(); m != nullptr;) {
      UnexpectedMessage* next = unexpected_.next(m);
      if (stale(m)) {
        unexpected_.erase(m);
        on_removed(m);
      }
      m = next;
    }
  }

  // Revoke: empties both queues, unexpected messages first.
  template <class F, class G>
  void Purge(F&& on_unexpected, G&& on_posted) {
    while (UnexpectedMessage* m = unexpected_.front()) {
      unexpected_.erase(m);
      on_unexpected(m);
    }
    while (PostedReceive* r = posted_.front()) {
      Unlink(r);
      on_posted(r);
    }
  }

  // Whether an ANY_SOURCE receive is posted (the API layer's PROC_FAILED_PENDING check). O(1).
  bool HasAnySourceReceive() const { return any_source_posted_ != 0; }
  size_t posted_size() const { return posted_.size(); }
  size_t unexpected_size() const { return unexpected_.size(); }

 private:
  static bool Matches(Rank want_source, int32_t want_tag, Rank source, int32_t tag) {
    return (want_source == kAnySource || want_source == source) &&
           (want_tag == kAnyTag || want_tag == tag);
  }
  void Unlink(PostedReceive* receive);

  IntrusiveList<PostedReceive> posted_;
  IntrusiveList<UnexpectedMessage> unexpected_;
  size_t any_source_posted_ = 0;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_MATCHING_MATCHING_QUEUE_H_
