#include "tools/rftrun/finalize_grace.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace rft::rftrun {
namespace {

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kGrace = 5 * kSecond;

// What waitpid gives for exit(code) and for a death by `signal`.
int Exited(int code) { return code << 8; }
int Killed(int signal) { return signal; }

ProcessEnd CleanLookingExit() { return ProcessEnd{.wait_status = Exited(0), .connected = true}; }

// The clock is the test's: the launcher's late-notice rule without a loaded node to make a
// notice late.
TEST(FinalizeGraceTest, ANoticeAfterTheExitWithinTheGraceIsACleanEnd) {
  TimerHeap timers;
  FinalizeGrace grace(&timers, kGrace);
  ProcessEnd end = CleanLookingExit();
  const int64_t exit_at = 100 * kSecond;
  ASSERT_TRUE(grace.HoldExit(3, end, /*ending=*/false, exit_at));
  EXPECT_TRUE(grace.held(3));
  EXPECT_EQ(timers.NextAt(), exit_at + kGrace);
  EXPECT_FALSE(timers.TakeDue(exit_at + 3 * kSecond));  // 3 s later: still waiting
  ASSERT_TRUE(grace.NoticeCame(3));
  end.finalized = true;
  EXPECT_EQ(Classify(end).kind, EndKind::kNormal);
  EXPECT_FALSE(grace.held(3));
  EXPECT_FALSE(timers.TakeDue(exit_at + 10 * kSecond));  // the grace's timer is gone
}

TEST(FinalizeGraceTest, NoNoticeByTheGracesEndIsAnExitWithoutFinalize) {
  TimerHeap timers;
  FinalizeGrace grace(&timers, kGrace);
  const ProcessEnd end = CleanLookingExit();
  ASSERT_TRUE(grace.HoldExit(0, end, false, 0));
  EXPECT_FALSE(timers.TakeDue(kGrace - 1));
  EXPECT_EQ(timers.TakeDue(kGrace), (TimerId{TimerKind::kFinalizeGrace, 0}));
  EXPECT_FALSE(grace.held(0));
  EXPECT_EQ(Classify(end).kind, EndKind::kNoFinalize);
  EXPECT_FALSE(grace.NoticeCame(0));  // too late: judged already
  EXPECT_TRUE(grace.ReleaseAll().empty());
}

TEST(FinalizeGraceTest, OnlyAnExitThatLooksCleanIsHeld) {
  TimerHeap timers;
  FinalizeGrace grace(&timers, kGrace);
  ProcessEnd failed_status = CleanLookingExit();
  failed_status.wait_status = Exited(3);
  ProcessEnd killed = CleanLookingExit();
  killed.wait_status = Killed(SIGKILL);
  ProcessEnd never_connected = CleanLookingExit();
  never_connected.connected = false;
  ProcessEnd finalized = CleanLookingExit();
  finalized.finalized = true;
  EXPECT_FALSE(grace.HoldExit(0, failed_status, false, 0));
  EXPECT_FALSE(grace.HoldExit(1, killed, false, 0));
  EXPECT_FALSE(grace.HoldExit(2, never_connected, false, 0));
  EXPECT_FALSE(grace.HoldExit(3, finalized, false, 0));
  EXPECT_FALSE(grace.HoldExit(4, CleanLookingExit(), /*ending=*/true, 0));
  EXPECT_EQ(timers.size(), 0u);
}

TEST(FinalizeGraceTest, TheJobsEndReleasesEveryExitStillHeld) {
  TimerHeap timers;
  FinalizeGrace grace(&timers, kGrace);
  ASSERT_TRUE(grace.HoldExit(1, CleanLookingExit(), false, 0));
  ASSERT_TRUE(grace.HoldExit(4, CleanLookingExit(), false, kSecond));
  ASSERT_TRUE(grace.HoldExit(6, CleanLookingExit(), false, 2 * kSecond));
  ASSERT_TRUE(grace.NoticeCame(4));
  ASSERT_TRUE(timers.TakeDue(kGrace));  // 1's grace ended through the heap
  EXPECT_EQ(grace.ReleaseAll(), std::vector<uint32_t>{6});
  EXPECT_FALSE(timers.NextAt());
}

}  // namespace
}  // namespace rft::rftrun
