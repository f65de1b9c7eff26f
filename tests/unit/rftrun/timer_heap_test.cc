#include "tools/rftrun/timer_heap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace rft::rftrun {
namespace {

constexpr TimerId kTimeout{TimerKind::kJobTimeout};
constexpr TimerId kKill{TimerKind::kKillAfterTerm};

TEST(TimerHeapTest, TakesWhatIsDueEarliestFirstAndNothingEarly) {
  TimerHeap timers;
  EXPECT_FALSE(timers.NextAt());
  timers.Arm(kTimeout, 300);
  timers.Arm(kKill, 100);
  timers.Arm({TimerKind::kFinalizeGrace, 7}, 200);
  EXPECT_EQ(timers.NextAt(), 100);
  EXPECT_FALSE(timers.TakeDue(99));
  EXPECT_EQ(timers.TakeDue(250), kKill);
  EXPECT_EQ(timers.TakeDue(250), (TimerId{TimerKind::kFinalizeGrace, 7}));
  EXPECT_FALSE(timers.TakeDue(250));
  EXPECT_EQ(timers.NextAt(), 300);
  EXPECT_TRUE(timers.armed(kTimeout));
  EXPECT_FALSE(timers.armed(kKill));  // taken: disarmed
}

TEST(TimerHeapTest, TimersDueTogetherComeInTheOrderTheyWereArmed) {
  TimerHeap timers;
  for (uint32_t subject : {5u, 1u, 3u}) timers.Arm({TimerKind::kSignalAnyway, subject}, 50);
  for (uint32_t subject : {5u, 1u, 3u}) {
    EXPECT_EQ(timers.TakeDue(50), (TimerId{TimerKind::kSignalAnyway, subject}));
  }
}

TEST(TimerHeapTest, ReArmingMovesATimerAndDisarmingRemovesIt) {
  TimerHeap timers;
  timers.Arm(kKill, 100);
  timers.Arm(kKill, 400);  // moved later: not due at 100 any more
  EXPECT_FALSE(timers.TakeDue(100));
  EXPECT_EQ(timers.NextAt(), 400);
  timers.Arm(kKill, 50);  // and earlier
  EXPECT_EQ(timers.TakeDue(60), kKill);
  EXPECT_FALSE(timers.TakeDue(1000));  // once only: the entry at 400 was stale

  timers.Arm(kTimeout, 10);
  timers.Disarm(kTimeout);
  EXPECT_FALSE(timers.NextAt());
  EXPECT_FALSE(timers.TakeDue(1000));
  EXPECT_EQ(timers.size(), 0u);
}

TEST(TimerHeapTest, ArmOnceKeepsTheFirstDeadline) {
  TimerHeap timers;
  timers.ArmOnce({TimerKind::kNodesGiveUp}, 100);
  timers.ArmOnce({TimerKind::kNodesGiveUp}, 900);
  EXPECT_EQ(timers.NextAt(), 100);
}

TEST(TimerHeapTest, DisarmAllTakesOneKindAndLeavesTheOthers) {
  TimerHeap timers;
  timers.Arm({TimerKind::kFinalizeGrace, 6}, 30);
  timers.Arm({TimerKind::kFinalizeGrace, 2}, 10);
  timers.Arm(kKill, 20);
  timers.Arm({TimerKind::kDrainOutput}, 5);
  EXPECT_EQ(timers.DisarmAll(TimerKind::kFinalizeGrace), (std::vector<uint32_t>{2, 6}));
  EXPECT_EQ(timers.TakeDue(100), (TimerId{TimerKind::kDrainOutput}));
  EXPECT_EQ(timers.TakeDue(100), kKill);
  EXPECT_FALSE(timers.TakeDue(100));
}

// Against a model (the armed set and its times): random arm, re-arm, disarm and take at moving
// times; every timer comes out once, at or after its time, earliest first.
TEST(TimerHeapTest, AgreesWithASimpleModelOverRandomOperations) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 random(seed);
    TimerHeap timers;
    std::map<TimerId, int64_t> model;
    int64_t now = 0;
    for (int step = 0; step < 2000; ++step) {
      const TimerId id{static_cast<TimerKind>(random() % 7), static_cast<uint32_t>(random() % 5)};
      switch (random() % 4) {
        case 0:
        case 1: {
          const int64_t at = now + static_cast<int64_t>(random() % 100);
          timers.Arm(id, at);
          model[id] = at;
          break;
        }
        case 2:
          timers.Disarm(id);
          model.erase(id);
          break;
        case 3: {
          now += static_cast<int64_t>(random() % 30);
          int64_t last = INT64_MIN;
          while (const auto taken = timers.TakeDue(now)) {
            ASSERT_TRUE(model.count(*taken)) << "seed " << seed << " step " << step;
            ASSERT_LE(model[*taken], now) << "seed " << seed;
            ASSERT_GE(model[*taken], last) << "seed " << seed;
            last = model[*taken];
            model.erase(*taken);
          }
          for (const auto& [timer, at] : model) ASSERT_GT(at, now) << "seed " << seed;
          break;
        }
      }
      ASSERT_EQ(timers.size(), model.size()) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace rft::rftrun
