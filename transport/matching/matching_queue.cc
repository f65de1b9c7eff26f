#include "transport/matching/matching_queue.h"

namespace rft::transport {

PostedReceive* MatchingQueue::MatchArrival(Rank source, int32_t tag) {
  for (PostedReceive* r = posted_.front(); r != nullptr; r = posted_.next(r)) {
    if (Matches(r->source, r->tag, source, tag)) {
      Unlink(r);
      return r;
    }
  }
  return nullptr;
}

UnexpectedMessage* MatchingQueue::MatchPosted(Rank source, int32_t tag) {
  for (UnexpectedMessage* m = unexpected_.front(); m != nullptr; m = unexpected_.next(m)) {
    if (Matches(source, tag, m->source, m->tag)) {
      unexpected_.erase(m);
      return m;
    }
  }
  return nullptr;
}

void MatchingQueue::AddPosted(PostedReceive* receive) {
  posted_.push_back(receive);
  if (receive->source == kAnySource) ++any_source_posted_;
}

const UnexpectedMessage* MatchingQueue::Probe(Rank source, int32_t tag) const {
  for (const UnexpectedMessage* m = unexpected_.front(); m != nullptr; m = unexpected_.next(m)) {
    if (Matches(source, tag, m->source, m->tag)) return m;
  }
  return nullptr;
}

bool MatchingQueue::Cancel(PostedReceive* receive) {
  if (!receive->linked()) return false;
  Unlink(receive);
  return true;
}

void MatchingQueue::Unlink(PostedReceive* receive) {
  posted_.erase(receive);
  if (receive->source == kAnySource) --any_source_posted_;
}

}  // namespace rft::transport
