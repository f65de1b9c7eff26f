#include "detector/heartbeat_ring.h"

#include <gtest/gtest.h>

#include <vector>

namespace rft::detector {
namespace {

constexpr int64_t kPeriod = 2'000'000;
constexpr int64_t kTimeout = 20'000'000;
constexpr HeartbeatConfig kConfig{kPeriod, kTimeout};

using Actions = std::vector<HeartbeatAction>;

// The actions other than heartbeat puts (a suspicion may fall on a tick that also puts).
Actions WithoutPuts(const Actions& actions) {
  Actions rest;
  for (const HeartbeatAction& a : actions) {
    if (!std::holds_alternative<PutHeartbeat>(a)) rest.push_back(a);
  }
  return rest;
}

bool HasSuspect(const Actions& actions) {
  for (const HeartbeatAction& a : actions) {
    if (std::holds_alternative<Suspect>(a)) return true;
  }
  return false;
}

TEST(HeartbeatWordTest, NamesItsWriter) {
  EXPECT_EQ(HeartbeatWordWriter(0), kInvalidRank);
  EXPECT_EQ(HeartbeatWordWriter(EncodeHeartbeatWord(0, 0)), 0u);
  EXPECT_EQ(HeartbeatWordWriter(EncodeHeartbeatWord(7, 0xffffffff)), 7u);
  EXPECT_EQ(HeartbeatWordWriter(EncodeHeartbeatWord(kMaxRank, 1)), kMaxRank);
  EXPECT_NE(EncodeHeartbeatWord(1, 5), EncodeHeartbeatWord(2, 5));
}

TEST(HeartbeatRingTest, ObservesPredecessorAndPutsToSuccessor) {
  HeartbeatRing ring(2, 5, kConfig, 0);
  EXPECT_EQ(ring.observed(), 1u);
  EXPECT_EQ(ring.observer(), 3u);
  EXPECT_EQ(ring.next_timer_ns(), 0);
  Actions out;
  ring.OnTimer(0, 0, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], HeartbeatAction(PutHeartbeat{3, EncodeHeartbeatWord(2, 1)}));
  EXPECT_EQ(ring.next_timer_ns(), kPeriod);
  out.clear();
  ring.OnTimer(kPeriod, 0, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], HeartbeatAction(PutHeartbeat{3, EncodeHeartbeatWord(2, 2)}));
}

TEST(HeartbeatRingTest, SingleProcessHasNothingToDo) {
  HeartbeatRing ring(0, 1, kConfig, 0);
  EXPECT_EQ(ring.observed(), kInvalidRank);
  EXPECT_EQ(ring.observer(), kInvalidRank);
  EXPECT_EQ(ring.next_timer_ns(), HeartbeatRing::kNoTimer);
  Actions out;
  ring.OnTimer(5, 0, &out);
  EXPECT_TRUE(out.empty());
}

TEST(HeartbeatRingTest, NoSuspicionWhileThePeerMakesProgress) {
  HeartbeatRing ring(1, 3, kConfig, 0);
  Actions out;
  uint32_t counter = 0;
  for (int64_t t = 0; t < 50 * kTimeout; t = ring.next_timer_ns()) {
    ring.OnTimer(t, EncodeHeartbeatWord(0, ++counter), &out);
  }
  EXPECT_FALSE(HasSuspect(out));
  EXPECT_EQ(ring.observed(), 0u);
}

TEST(HeartbeatRingTest, SuspectsAfterTimeoutAndObservesTheNextPredecessor) {
  HeartbeatRing ring(2, 5, kConfig, 0);
  Actions out;
  ring.OnTimer(0, EncodeHeartbeatWord(1, 1), &out);
  int64_t t = 0;
  while (!HasSuspect(out)) {
    out.clear();
    t = ring.next_timer_ns();
    ring.OnTimer(t, EncodeHeartbeatWord(1, 1), &out);  // no progress
  }
  EXPECT_EQ(t, kTimeout);  // the deadline itself is a timer
  const Actions rest = WithoutPuts(out);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0], HeartbeatAction(Suspect{1}));
  EXPECT_EQ(rest[1], HeartbeatAction(SendObserveRequest{0, 1, 5}));
  EXPECT_EQ(ring.observed(), 0u);
  EXPECT_TRUE(ring.failed().Contains(1));
  // The registry's callback for the same rank changes nothing.
  out.clear();
  ring.OnFailure(1, t, &out);
  EXPECT_TRUE(out.empty());
}

TEST(HeartbeatRingTest, LateWriteFromFormerObservedIsNotProgress) {
  HeartbeatRing ring(2, 5, kConfig, 0);
  Actions out;
  ring.OnFailure(1, 0, &out);  // now observing 0
  ASSERT_EQ(ring.observed(), 0u);
  uint32_t counter = 0;
  int64_t t = 0;
  while (!HasSuspect(out)) {
    out.clear();
    t = ring.next_timer_ns();
    ring.OnTimer(t, EncodeHeartbeatWord(1, ++counter), &out);  // only rank 1 keeps writing
  }
  EXPECT_EQ(t, kTimeout);
  EXPECT_EQ(WithoutPuts(out)[0], HeartbeatAction(Suspect{0}));
}

TEST(HeartbeatRingTest, OwnLateTickIsNotThePeersFault) {
  HeartbeatRing ring(1, 3, kConfig, 0);
  Actions out;
  ring.OnTimer(0, EncodeHeartbeatWord(0, 1), &out);
  // This process is descheduled for 3δ; the peer's slot shows nothing new (it was descheduled
  // too). That silence is not held against it.
  ring.OnTimer(3 * kTimeout, EncodeHeartbeatWord(0, 1), &out);
  EXPECT_FALSE(HasSuspect(out));
  EXPECT_EQ(ring.late_ticks(), 1u);
  // On-time ticks without progress count again: suspicion after δ of them (the one period that
  // was due during the late gap counts too).
  int64_t t = 3 * kTimeout;
  while (!HasSuspect(out)) {
    t = ring.next_timer_ns();
    ring.OnTimer(t, EncodeHeartbeatWord(0, 1), &out);
  }
  EXPECT_EQ(t, 3 * kTimeout + kTimeout - kPeriod);
}

TEST(HeartbeatRingTest, ProgressAfterLateTickKeepsPeerAlive) {
  HeartbeatRing ring(1, 3, kConfig, 0);
  Actions out;
  ring.OnTimer(0, EncodeHeartbeatWord(0, 1), &out);
  ring.OnTimer(kTimeout + kPeriod, EncodeHeartbeatWord(0, 9), &out);
  EXPECT_FALSE(HasSuspect(out));
}

TEST(HeartbeatRingTest, LearningObserverFailedPutsToNextSuccessorAtOnce) {
  HeartbeatRing ring(2, 6, kConfig, 0);
  Actions out;
  ring.OnFailure(3, 100, &out);
  EXPECT_EQ(ring.observer(), 4u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<PutHeartbeat>(out[0]).observer, 4u);
  EXPECT_EQ(HeartbeatWordWriter(std::get<PutHeartbeat>(out[0]).word), 2u);
}

TEST(HeartbeatRingTest, ObserveRequestFromBeyondTheObserverIsAccepted) {
  // 3 asks 0 to put to it: 3 knows 1 and 2 were declared failed, 0 does not know yet.
  HeartbeatRing ring(0, 5, kConfig, 0);
  Actions out;
  ring.OnObserveRequest(3, 1, 5, 10, &out);
  EXPECT_EQ(ring.observer(), 3u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<PutHeartbeat>(out[0]).observer, 3u);
  // When 3 fails, 0 moves past it, not back to 1 or 2.
  out.clear();
  ring.OnFailure(3, 20, &out);
  EXPECT_EQ(ring.observer(), 4u);
}

TEST(HeartbeatRingTest, StaleObserveRequestsAreIgnored) {
  HeartbeatRing ring(0, 7, kConfig, 0);
  Actions out;
  ring.OnObserveRequest(4, 3, 7, 10, &out);  // installs 4 (generation 3)
  ASSERT_EQ(ring.observer(), 4u);
  out.clear();
  ring.OnObserveRequest(2, 7, 7, 11, &out);  // between 0 and 4: older than the request from 4
  ring.OnObserveRequest(4, 2, 7, 12, &out);  // 4 again with an older generation
  ring.OnFailure(5, 13, &out);
  ring.OnObserveRequest(5, 9, 7, 14, &out);  // known failed
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ring.observer(), 4u);
  EXPECT_EQ(ring.stale_requests(), 3u);
  ring.OnObserveRequest(4, 3, 7, 15, &out);  // a duplicate of the accepted one is harmless
  EXPECT_EQ(out.size(), 1u);
}

TEST(HeartbeatRingTest, RepairsAroundConsecutiveFailures) {
  HeartbeatRing ring(5, 8, kConfig, 0);
  Actions out;
  ring.OnFailure(4, 0, &out);
  ring.OnFailure(3, 0, &out);
  ring.OnFailure(6, 0, &out);
  EXPECT_EQ(ring.observed(), 2u);
  EXPECT_EQ(ring.observer(), 7u);
  EXPECT_EQ(ring.generation(), 2u);
  EXPECT_EQ(out.back(), HeartbeatAction(PutHeartbeat{7, EncodeHeartbeatWord(5, 1)}));
  EXPECT_EQ(out[1], HeartbeatAction(SendObserveRequest{2, 2, 8}));
}

TEST(HeartbeatRingTest, LastSurvivorGoesQuiet) {
  HeartbeatRing ring(0, 2, kConfig, 0);
  Actions out;
  ring.OnTimer(0, 0, &out);
  int64_t t = 0;
  while (!HasSuspect(out)) {
    out.clear();
    t = ring.next_timer_ns();
    ring.OnTimer(t, 0, &out);
  }
  EXPECT_EQ(ring.observed(), kInvalidRank);
  EXPECT_EQ(ring.observer(), kInvalidRank);
  EXPECT_EQ(ring.next_timer_ns(), HeartbeatRing::kNoTimer);
}

TEST(HeartbeatRingTest, DeclaredFailedGoesSilent) {
  HeartbeatRing ring(1, 4, kConfig, 0);
  Actions out;
  ring.OnFailure(1, 0, &out);
  EXPECT_EQ(ring.next_timer_ns(), HeartbeatRing::kNoTimer);
  ring.OnTimer(kTimeout * 2, 0, &out);
  ring.OnObserveRequest(2, 1, 4, kTimeout * 2, &out);
  EXPECT_TRUE(out.empty());
}

// Growth: only the edge across the wrap moves. In 0..3 grown to 0..5, 3 puts to 4 from now on
// (and to 0 in 0's hand-over slot for the window), 0 observes 5; 1 and 2 keep their edges.
TEST(HeartbeatRingTest, GrowthMovesOnlyTheEdgeAcrossTheWrap) {
  HeartbeatRing middle(1, 4, kConfig, 0);
  Actions out;
  middle.Grow(6, 10, kTimeout, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(middle.observer(), 2u);
  EXPECT_EQ(middle.observed(), 0u);

  HeartbeatRing highest(3, 4, kConfig, 0);
  highest.Grow(6, 10, kTimeout, &out);
  EXPECT_EQ(highest.observer(), 4u);
  EXPECT_EQ(highest.observed(), 2u);
  EXPECT_EQ(highest.former_observer(), 0u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], HeartbeatAction(PutHeartbeat{4, EncodeHeartbeatWord(3, 1)}));
  EXPECT_EQ(out[1], HeartbeatAction(PutHeartbeat{0, EncodeHeartbeatWord(3, 1), true}));
  // Past the window, only the new observer gets puts.
  out.clear();
  highest.OnTimer(10 + kTimeout + kPeriod, EncodeHeartbeatWord(2, 1), &out);
  EXPECT_EQ(out, Actions{HeartbeatAction(PutHeartbeat{4, EncodeHeartbeatWord(3, 2)})});
  EXPECT_EQ(highest.former_observer(), kInvalidRank);

  HeartbeatRing lowest(0, 4, kConfig, 0);
  out.clear();
  lowest.Grow(6, 10, kTimeout, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(lowest.observer(), 1u);
  EXPECT_EQ(lowest.observed(), 5u);
  EXPECT_EQ(lowest.size(), 6u);
}

// 0 has not grown yet, lost its observed process 3 and asks 2 (in its view of 4 ranks). 2 grew
// to 6 and puts to 3: the request crosses the new ranks 4 and 5, so 2 serves it as a hand-over
// beside its observer instead of giving the new edge up.
TEST(HeartbeatRingTest, ARequestFromBeforeTheGrowthIsServedAsAHandOver) {
  HeartbeatRing ring(2, 4, kConfig, 0);
  Actions out;
  ring.Grow(6, 10, kTimeout, &out);
  ASSERT_EQ(ring.observer(), 3u);
  out.clear();
  ring.OnObserveRequest(0, 1, 4, 20, &out);
  EXPECT_EQ(ring.observer(), 3u);
  EXPECT_EQ(ring.former_observer(), 0u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], HeartbeatAction(PutHeartbeat{0, EncodeHeartbeatWord(2, 1), true}));
  // The same request in the grown view (0 grew and knows 3, 4 and 5 failed) is taken as usual.
  out.clear();
  ring.OnObserveRequest(0, 2, 6, 30, &out);
  EXPECT_EQ(ring.observer(), 0u);
}

// Progress is a new word of the observed process: its old word seen again after another writer's
// (two writers share the slot while the job grows) is no sign of life.
TEST(HeartbeatRingTest, AnOldWordSeenAgainIsNoProgress) {
  HeartbeatRing ring(1, 3, kConfig, 0);
  Actions out;
  const uint64_t old_word = EncodeHeartbeatWord(0, 7);
  int64_t t = 0;
  bool flip = false;
  while (!HasSuspect(out) && t < 4 * kTimeout) {
    t += kPeriod;
    ring.OnTimer(t, (flip = !flip) ? old_word : EncodeHeartbeatWord(2, 1), &out);
  }
  EXPECT_TRUE(HasSuspect(out));
  EXPECT_LE(t, kTimeout + 2 * kPeriod);
}
}  // namespace
}  // namespace rft::detector
