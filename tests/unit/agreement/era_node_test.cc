// EraNode's rules one at a time (the simulator checks them together under random schedules).
#include "agreement/era_node.h"

#include <gtest/gtest.h>

#include <variant>
#include <vector>

namespace rft::agreement {
namespace {

std::vector<SendEra> Sends(const std::vector<EraAction>& actions) {
  std::vector<SendEra> sends;
  for (const EraAction& a : actions) {
    if (const auto* s = std::get_if<SendEra>(&a)) sends.push_back(*s);
  }
  return sends;
}

const Decide* FindDecide(const std::vector<EraAction>& actions) {
  for (const EraAction& a : actions) {
    if (const auto* d = std::get_if<Decide>(&a)) return d;
  }
  return nullptr;
}

AgreeValue Flag(uint32_t flag) {
  AgreeValue v;
  v.flag = flag;
  return v;
}

TEST(EraNodeTest, AMemberAloneDecidesAtOnce) {
  EraNode node(0, 1, RankSet());
  std::vector<EraAction> out;
  EXPECT_EQ(node.Start(Flag(5), &out), 0u);
  const Decide* d = FindDecide(out);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->decision.value.flag, 5u);
  EXPECT_TRUE(d->decision.failed.empty());
  EXPECT_FALSE(node.undecided());
}

TEST(EraNodeTest, TwoMembersUpThenDown) {
  EraNode root(0, 2, RankSet());
  EraNode leaf(1, 2, RankSet());
  std::vector<EraAction> out;
  root.Start(Flag(0b110), &out);
  EXPECT_TRUE(out.empty());  // waits for its child
  leaf.Start(Flag(0b011), &out);
  auto up = Sends(out);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].to, 0u);
  EXPECT_EQ(up[0].message.kind, EraMessage::Kind::kUp);
  out.clear();
  root.OnMessage(1, up[0].message, &out);
  auto down = Sends(out);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].message.kind, EraMessage::Kind::kDecided);
  // The decision goes out before it is decided here (early return hands it on first).
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<Decide>(out[1]));
  EXPECT_EQ(std::get<Decide>(out[1]).decision.value.flag, 0b010u);
  out.clear();
  leaf.OnMessage(0, down[0].message, &out);
  ASSERT_NE(FindDecide(out), nullptr);
  EXPECT_EQ(FindDecide(out)->decision.value.flag, 0b010u);
}

TEST(EraNodeTest, AnUpUnderAnOlderViewIsAnsweredWithTheViewNotCounted) {
  // Member 0 knows member 2 failed; member 1 does not yet.
  EraNode root(0, 3, RankSet{2});
  std::vector<EraAction> out;
  root.Start(Flag(1), &out);
  EraMessage stale{.kind = EraMessage::Kind::kUp, .seq = 0, .failed = RankSet(), .value = Flag(1)};
  out.clear();
  root.OnMessage(1, stale, &out);
  auto sends = Sends(out);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].message.kind, EraMessage::Kind::kView);
  EXPECT_EQ(sends[0].message.failed, RankSet{2});
  EXPECT_EQ(FindDecide(out), nullptr);
  // Under the same view it counts, and the root decides with 2 in the failed set.
  EraMessage current = stale;
  current.failed = RankSet{2};
  out.clear();
  root.OnMessage(1, current, &out);
  ASSERT_NE(FindDecide(out), nullptr);
  EXPECT_EQ(FindDecide(out)->decision.failed, RankSet{2});
  EXPECT_TRUE(FindDecide(out)->decision.unacknowledged_failure());
}

TEST(EraNodeTest, AViewInAMessageIsLearnedAndReported) {
  EraNode leaf(2, 3, RankSet());
  std::vector<EraAction> out;
  leaf.Start(Flag(1), &out);
  out.clear();
  leaf.OnMessage(0, {.kind = EraMessage::Kind::kView, .seq = 0, .failed = RankSet{1}, .value = {}},
                 &out);
  ASSERT_FALSE(out.empty());
  ASSERT_TRUE(std::holds_alternative<LearnFailed>(out[0]));
  EXPECT_EQ(std::get<LearnFailed>(out[0]).member, 1u);
  // Its Up goes again, under the new view (its parent is 0 either way).
  auto sends = Sends(out);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].to, 0u);
  EXPECT_EQ(sends[0].message.failed, RankSet{1});
}

TEST(EraNodeTest, NothingFromAFailedMemberCountsNotEvenADecision) {
  EraNode leaf(1, 3, RankSet());
  std::vector<EraAction> out;
  leaf.Start(Flag(1), &out);
  leaf.OnFailure(0, &out);
  out.clear();
  EraMessage decided{
      .kind = EraMessage::Kind::kDecided, .seq = 0, .failed = RankSet(), .value = Flag(1)};
  leaf.OnMessage(0, decided, &out);
  EXPECT_EQ(FindDecide(out), nullptr);
  EXPECT_EQ(leaf.dropped(), 1u);
  // The same decision relayed by a live member is adopted.
  leaf.OnMessage(2, decided, &out);
  EXPECT_NE(FindDecide(out), nullptr);
}

TEST(EraNodeTest, MessagesBeforeTheStartWaitForIt) {
  EraNode root(0, 2, RankSet());
  std::vector<EraAction> out;
  root.OnMessage(
      1, {.kind = EraMessage::Kind::kUp, .seq = 0, .failed = RankSet(), .value = Flag(2)}, &out);
  EXPECT_TRUE(out.empty());
  root.Start(Flag(3), &out);
  ASSERT_NE(FindDecide(out), nullptr);
  EXPECT_EQ(FindDecide(out)->decision.value.flag, 2u);
  // Too far ahead: dropped and counted.
  root.OnMessage(1,
                 {.kind = EraMessage::Kind::kUp,
                  .seq = 1 + EraNode::kMaxAhead,
                  .failed = RankSet(),
                  .value = Flag(2)},
                 &out);
  EXPECT_EQ(root.dropped(), 1u);
}

TEST(EraNodeTest, DecisionsAreKeptUntilEveryMemberIsPastThem) {
  EraNode root(0, 2, RankSet());
  std::vector<EraAction> out;
  for (uint64_t seq = 0; seq < 3; ++seq) {
    root.Start(Flag(1), &out);
    AgreeValue up = Flag(1);
    up.undecided_floor = seq;  // the leaf started `seq` having decided everything before
    root.OnMessage(1, {.kind = EraMessage::Kind::kUp, .seq = seq, .failed = RankSet(), .value = up},
                   &out);
    ASSERT_TRUE(root.decision(seq).has_value());
  }
  // Agreement 2's decision says every member decided 0 and 1: only 2 is kept.
  EXPECT_FALSE(root.decision(0).has_value());
  EXPECT_FALSE(root.decision(1).has_value());
  EXPECT_TRUE(root.decision(2).has_value());
  EXPECT_EQ(root.kept(), 1u);
  // A late Up for the kept one is answered with the decision.
  out.clear();
  root.OnMessage(
      1, {.kind = EraMessage::Kind::kUp, .seq = 2, .failed = RankSet(), .value = Flag(1)}, &out);
  auto sends = Sends(out);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].message.kind, EraMessage::Kind::kDecided);
}

TEST(EraNodeTest, ANewRootAdoptsADecisionAChildHolds) {
  // Members 0..3; 0 (the root) decided and told 1, then failed. 2 and 3 did not hear it.
  EraNode one(1, 4, RankSet());
  std::vector<EraAction> out;
  one.Start(Flag(1), &out);
  out.clear();
  Decision d{.value = Flag(7), .failed = RankSet()};
  one.OnMessage(
      0, {.kind = EraMessage::Kind::kDecided, .seq = 0, .failed = d.failed, .value = d.value},
      &out);
  ASSERT_NE(FindDecide(out), nullptr);
  // 0 fails: 1 is the new root and hands the decision to its new children (2 and 3).
  out.clear();
  one.OnFailure(0, &out);
  auto sends = Sends(out);
  ASSERT_EQ(sends.size(), 2u);
  for (const SendEra& s : sends) {
    EXPECT_EQ(s.message.kind, EraMessage::Kind::kDecided);
    EXPECT_EQ(s.message.value.flag, 7u);
  }
}

TEST(EraNodeTest, ADecisionOfTheFastPathAnswersMembersThatFellBack) {
  // Member 1 fell back (it learned that 2 failed) and sends its Up to 0, which decided on the
  // fast path before it knew: 0 answers with the fast decision, and its number moves on.
  EraNode root(0, 3, RankSet());
  std::vector<EraAction> out;
  root.OnMessage(
      1, {.kind = EraMessage::Kind::kUp, .seq = 0, .failed = RankSet{2}, .value = Flag(1)}, &out);
  const Decision fast{.value = Flag(9), .failed = {}};
  EXPECT_EQ(root.Install(fast, &out), 0u);
  EXPECT_EQ(root.started(), 1u);
  bool answered = false;
  for (const SendEra& send : Sends(out)) {
    answered |= send.to == 1 && send.message.kind == EraMessage::Kind::kDecided &&
                send.message.value.flag == 9u && send.message.failed.empty();
  }
  EXPECT_TRUE(answered);
  EXPECT_EQ(FindDecide(out), nullptr);  // the caller already has it
}

// Member 0 decided on the fast path and finalizes: its decision goes to every live member (not
// to 2, failed), and member 3, which fell back (it knows 2 failed) and started on the service,
// adopts it from that message alone.
TEST(EraNodeTest, ADepartingMemberHandsItsDecisionsToEveryLiveMember) {
  EraNode leaving(0, 4, RankSet());
  std::vector<EraAction> out;
  leaving.Install(Decision{.value = Flag(7), .failed = {}}, &out);
  out.clear();
  leaving.OnFailure(2, &out);
  out.clear();
  leaving.Depart(&out);
  const std::vector<SendEra> departing = Sends(out);
  std::vector<Rank> to;
  for (const SendEra& send : departing) {
    EXPECT_EQ(send.message.kind, EraMessage::Kind::kDecided);
    EXPECT_EQ(send.message.value.flag, 7u);
    to.push_back(send.to);
  }
  EXPECT_EQ(to, (std::vector<Rank>{1, 3}));

  EraNode fell_back(3, 4, RankSet{2});
  out.clear();
  fell_back.Start(Flag(1), &out);
  ASSERT_EQ(FindDecide(out), nullptr);
  out.clear();
  fell_back.OnMessage(0, departing[1].message, &out);
  const Decide* decided = FindDecide(out);
  ASSERT_NE(decided, nullptr);
  EXPECT_EQ(decided->decision.value.flag, 7u);
}

}  // namespace
}  // namespace rft::agreement
