// rft::agreement::DeadlineGuard: the guarded agreement's cut-offs (rft_comm_agree_deadline,
// docs/agreement.md "Guarded agreement"), sans-I/O: the driver asks it at the times it names,
// declares failed the members it names (fail-stop then kills them), and stops once it says so.
//
// Who cuts whom. A member waits for its children in the agreement's tree (their Ups), then for
// the decision from above; so it cuts the children it still waits for, and, last, its parent if
// no decision came (a stuck root, or a chain of stuck members above it). Each member counts from
// its own start of the agreement, with the caller's deadline d and grace g = max(d / 10, 20 ms):
// - children: at d × (1 + 0.2 (h − 1) / (H − 1)) for a subtree of height h in a tree of height H:
//   members nearest the leaves cut first, at d, and the root last, at 1.2 d, so a stuck member
//   deep down is cut by its parent before the members above give up on that whole subtree.
// - the parent, at depth k: at 1.2 d + (2k − 1) g. The root's children go first (1.2 d + g; the
//   root itself decides by 1.2 d once its own cuts are done), and deeper members later, so a
//   live parent has sorted out its own parent before its children judge it.
// After a view change (a cut, a crash) the new tree is judged in the same order, in graces from
// the change: children at h g (from the leaves up), parents at (H + 2k) g (from the root down).
// So every member returns: each check either finds the decision or cuts someone, and members
// are finitely many. Failure-free of stuck members, nobody is cut when messages take far less
// than g. A member that is alive but later than its deadline is cut too: that is the contract.
#ifndef RFT_AGREEMENT_DEADLINE_GUARD_H_
#define RFT_AGREEMENT_DEADLINE_GUARD_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "agreement/era_node.h"

namespace rft::agreement {

class DeadlineGuard {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMinGraceNs = 20'000'000;

  // Guards agreement `seq` of `node`, started here at `start_ns` with deadline `deadline_ns`
  // (> 0); the view `node` has now is the one the deadline starts with.
  DeadlineGuard(const EraNode& node, uint64_t seq, int64_t start_ns, int64_t deadline_ns);

  // The grace after a view change, and the times (from the start) of the first checks.
  static int64_t Grace(int64_t deadline_ns);
  static int64_t ChildrenCheck(int64_t deadline_ns, uint32_t subtree_height, uint32_t tree_height);
  static int64_t ParentCheck(int64_t deadline_ns, uint32_t depth);  // depth >= 1

  struct Verdict {
    std::vector<Rank> cut;     // members to declare failed now
    int64_t next_ns = kNever;  // when to check again; kNever: decided here, the guard is done
  };
  // The driver performs the cuts of a Verdict on `node` before anything else happens.
  Verdict Check(const EraNode& node, int64_t now_ns);
  // Call after anything that may have changed `node`'s view (a failure, a message): the new
  // tree's members then get their grace from now.
  void NoteView(const EraNode& node, int64_t now_ns);

  uint64_t seq() const { return seq_; }

 private:
  uint64_t seq_;
  int64_t start_ns_;
  int64_t deadline_ns_;
  size_t failed_seen_;
  int64_t view_changed_ns_;  // when the last view change was seen here (the start until one)
};

}  // namespace rft::agreement

#endif  // RFT_AGREEMENT_DEADLINE_GUARD_H_
