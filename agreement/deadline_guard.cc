#include "agreement/deadline_guard.h"

#include <algorithm>

namespace rft::agreement {

DeadlineGuard::DeadlineGuard(const EraNode& node, uint64_t seq, int64_t start_ns,
                             int64_t deadline_ns)
    : seq_(seq),
      start_ns_(start_ns),
      deadline_ns_(deadline_ns),
      failed_seen_(node.failed().size()),
      view_changed_ns_(start_ns) {}

void DeadlineGuard::NoteView(const EraNode& node, int64_t now_ns) {
  if (node.failed().size() == failed_seen_) return;
  failed_seen_ = node.failed().size();
  view_changed_ns_ = std::max(view_changed_ns_, now_ns);
}

int64_t DeadlineGuard::Grace(int64_t deadline_ns) {
  return std::max(deadline_ns / 10, kMinGraceNs);
}

int64_t DeadlineGuard::ChildrenCheck(int64_t deadline_ns, uint32_t subtree_height,
                                     uint32_t tree_height) {
  if (tree_height <= 1 || subtree_height <= 1) return deadline_ns;
  const uint32_t h = std::min(subtree_height, tree_height);
  // In doubles: deadlines of hours in nanoseconds times small fractions.
  return deadline_ns +
         static_cast<int64_t>(static_cast<double>(deadline_ns) * 0.2 * (h - 1) / (tree_height - 1));
}

int64_t DeadlineGuard::ParentCheck(int64_t deadline_ns, uint32_t depth) {
  return deadline_ns + deadline_ns / 5 + (2 * int64_t{depth} - 1) * Grace(deadline_ns);
}

DeadlineGuard::Verdict DeadlineGuard::Check(const EraNode& node, int64_t now_ns) {
  Verdict verdict;
  if (!node.Undecided(seq_)) return verdict;  // decided (or this member failed): done
  NoteView(node, now_ns);
  const int64_t grace = Grace(deadline_ns_);
  const bool changed = view_changed_ns_ > start_ns_;
  // After a view change, the same order as at the start: children judged from the leaves up
  // (h graces), then parents from the root down (H + 2k graces).
  const int64_t height = node.subtree_height();
  const int64_t depth = node.depth();
  const int64_t children_due =
      std::max(start_ns_ + ChildrenCheck(deadline_ns_, node.subtree_height(), node.tree_height()),
               changed ? view_changed_ns_ + std::max<int64_t>(height, 1) * grace : start_ns_);
  const int64_t parent_due =
      node.parent() == kInvalidRank
          ? kNever
          : std::max(
                start_ns_ + ParentCheck(deadline_ns_, node.depth()),
                changed ? view_changed_ns_ + (node.tree_height() + 2 * depth) * grace : start_ns_);
  if (now_ns >= children_due) verdict.cut = node.Awaited(seq_);
  if (now_ns >= parent_due) verdict.cut.push_back(node.parent());
  if (!verdict.cut.empty()) {
    // The driver performs these cuts now: a view change here.
    failed_seen_ = node.failed().size() + verdict.cut.size();
    view_changed_ns_ = now_ns;
  }
  // Look again at the next due time, and at least every grace while undecided: a view change
  // may make this member a parent, or the root's child.
  verdict.next_ns = now_ns + grace;
  if (children_due > now_ns) verdict.next_ns = std::min(verdict.next_ns, children_due);
  if (parent_due > now_ns) verdict.next_ns = std::min(verdict.next_ns, parent_due);
  return verdict;
}

}  // namespace rft::agreement
