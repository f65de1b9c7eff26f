// DeadlineGuard's timings and cut-offs on single EraNodes (the simulator checks them together,
// with stuck members and crashes, in agreement_properties_test).
#include "agreement/deadline_guard.h"

#include <gtest/gtest.h>

#include <vector>

namespace rft::agreement {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kDeadline = kSecond;      // d
constexpr int64_t kGrace = kDeadline / 10;  // max(d / 10, 20 ms)

AgreeValue Flag(uint32_t flag) {
  AgreeValue v;
  v.flag = flag;
  return v;
}

TEST(DeadlineGuardTest, LeavesAreJudgedFirstTheRootLastThenParentsFromTheTop) {
  EXPECT_EQ(DeadlineGuard::Grace(kDeadline), kGrace);
  EXPECT_EQ(DeadlineGuard::Grace(1'000'000), DeadlineGuard::kMinGraceNs);  // 1 ms: 20 ms floor
  // Children: d for a parent of leaves, 1.2 d at the root, between in between.
  EXPECT_EQ(DeadlineGuard::ChildrenCheck(kDeadline, 1, 3), kDeadline);
  EXPECT_EQ(DeadlineGuard::ChildrenCheck(kDeadline, 2, 3), kDeadline + kDeadline / 10);
  EXPECT_EQ(DeadlineGuard::ChildrenCheck(kDeadline, 3, 3), kDeadline + kDeadline / 5);
  EXPECT_EQ(DeadlineGuard::ChildrenCheck(kDeadline, 1, 1), kDeadline);
  // Parents: after the root's own check, one grace more per level down, twice.
  EXPECT_EQ(DeadlineGuard::ParentCheck(kDeadline, 1), kDeadline + kDeadline / 5 + kGrace);
  EXPECT_EQ(DeadlineGuard::ParentCheck(kDeadline, 2), kDeadline + kDeadline / 5 + 3 * kGrace);
}

// Member 0 of 4 (children 1 and 2): nothing before 1.2 d; then the children it waits for.
TEST(DeadlineGuardTest, TheRootCutsTheChildrenItStillAwaits) {
  EraNode node(0, 4, RankSet());
  std::vector<EraAction> out;
  const uint64_t seq = node.Start(Flag(1), &out);
  DeadlineGuard guard(node, seq, 0, kDeadline);
  DeadlineGuard::Verdict early = guard.Check(node, 0);
  EXPECT_TRUE(early.cut.empty());
  EXPECT_EQ(early.next_ns, kGrace);  // it looks again at least every grace
  // Child 1 reports (an Up under the same, empty view); child 2 does not.
  out.clear();
  node.OnMessage(
      1, EraMessage{.kind = EraMessage::Kind::kUp, .seq = seq, .failed = {}, .value = Flag(1)},
      &out);
  EXPECT_TRUE(guard.Check(node, kDeadline).cut.empty());  // the root's check is at 1.2 d
  const DeadlineGuard::Verdict due = guard.Check(node, kDeadline + kDeadline / 5);
  EXPECT_EQ(due.cut, std::vector<Rank>{2});
  EXPECT_NE(due.next_ns, DeadlineGuard::kNever);
}

// Member 3 of 4 (parent 2, depth 2): it cuts its parent if no decision came by its parent check.
TEST(DeadlineGuardTest, ADeepMemberCutsItsParentLastAndRegracesAfterAViewChange) {
  EraNode node(3, 4, RankSet());
  std::vector<EraAction> out;
  const uint64_t seq = node.Start(Flag(1), &out);
  ASSERT_EQ(node.parent(), 2u);
  ASSERT_EQ(node.depth(), 2u);
  DeadlineGuard guard(node, seq, 0, kDeadline);
  const int64_t parent_due = DeadlineGuard::ParentCheck(kDeadline, 2);
  EXPECT_TRUE(guard.Check(node, parent_due - 1).cut.empty());
  // Member 2 fails just before: 3's parent is now the root (depth 1), and the new tree is given
  // (H + 2k) graces from the change before 3 judges its new parent.
  const int64_t changed = parent_due - 2;
  out.clear();
  node.OnFailure(2, &out);
  guard.NoteView(node, changed);
  ASSERT_EQ(node.parent(), 0u);
  const int64_t regraced = changed + (node.tree_height() + 2 * node.depth()) * kGrace;
  EXPECT_TRUE(guard.Check(node, regraced - 1).cut.empty());
  EXPECT_EQ(guard.Check(node, regraced).cut, std::vector<Rank>{0});
}

TEST(DeadlineGuardTest, ADecidedAgreementEndsTheGuard) {
  EraNode node(0, 1, RankSet());  // alone: decided inside Start
  std::vector<EraAction> out;
  const uint64_t seq = node.Start(Flag(1), &out);
  DeadlineGuard guard(node, seq, 0, kDeadline);
  const DeadlineGuard::Verdict verdict = guard.Check(node, 10 * kDeadline);
  EXPECT_TRUE(verdict.cut.empty());
  EXPECT_EQ(verdict.next_ns, DeadlineGuard::kNever);
}

}  // namespace
}  // namespace rft::agreement
