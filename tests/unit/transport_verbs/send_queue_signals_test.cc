// Selective signaling of a send queue without a device: the queue never holds more than its
// depth, never fills with nothing signaled to free it, signals at least every k-th SEND, and
// each completion frees exactly what was posted up to its SEND.
#include "transport/verbs/send_queue_signals.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

namespace rft::verbs {
namespace {

TEST(SendQueueSignalsTest, SignalsEveryKthAndFreesWhatCameBefore) {
  SendQueueSignals q(16, 4);
  int signaled = 0;
  for (int i = 1; i <= 8; ++i) {
    const bool s = q.Take(false);
    EXPECT_EQ(s, i % 4 == 0) << i;
    signaled += s;
  }
  EXPECT_EQ(signaled, 2);
  EXPECT_EQ(q.in_use(), 8u);
  EXPECT_EQ(q.awaited(), 2u);
  ASSERT_TRUE(q.Completed());
  EXPECT_EQ(q.in_use(), 4u);
  ASSERT_TRUE(q.Completed());
  EXPECT_EQ(q.in_use(), 0u);
  EXPECT_EQ(q.awaited(), 0u);
  EXPECT_FALSE(q.Completed());  // nothing awaited: refused, nothing changes
  EXPECT_EQ(q.in_use(), 0u);
}

TEST(SendQueueSignalsTest, ASendThatMustBeSignaledRestartsTheCount) {
  SendQueueSignals q(16, 4);
  EXPECT_FALSE(q.Take(false));
  EXPECT_FALSE(q.Take(false));
  EXPECT_TRUE(q.Take(true));  // frees itself and the two before it
  EXPECT_FALSE(q.Take(false));
  EXPECT_FALSE(q.Take(false));
  EXPECT_FALSE(q.Take(false));
  EXPECT_TRUE(q.Take(false));
  ASSERT_TRUE(q.Completed());
  EXPECT_EQ(q.in_use(), 4u);
}

TEST(SendQueueSignalsTest, TheSendTakingTheLastEntryIsSignaled) {
  SendQueueSignals q(3, 100);  // `every` beyond the depth is clamped to it
  EXPECT_FALSE(q.Take(false));
  EXPECT_FALSE(q.Take(false));
  EXPECT_TRUE(q.Take(false));
  EXPECT_FALSE(q.has_room());
  ASSERT_TRUE(q.Completed());
  EXPECT_TRUE(q.has_room());
  EXPECT_EQ(q.in_use(), 0u);
}

TEST(SendQueueSignalsTest, EverySignalsAll) {
  SendQueueSignals q(4, 1);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.Take(false));
  EXPECT_EQ(q.awaited(), 4u);
}

// A simulated QP: SENDs complete in order after a random delay; only signaled ones report.
// Whatever the mix of forced signals, the queue stays within its depth, and a full queue always
// has a signaled SEND coming to free it (the sender never waits forever).
TEST(SendQueueSignalsTest, RandomTrafficNeverOverflowsNorStalls) {
  std::mt19937 random(12);
  for (uint32_t depth : {1u, 2u, 3u, 9u, 18u}) {
    for (uint32_t every : {1u, 2u, depth / 2 + 1, depth}) {
      SendQueueSignals q(depth, every);
      std::deque<bool> on_wire;  // posted, not yet completed by the device; true: signaled
      uint32_t unsignaled_run = 0;
      uint64_t posted = 0;
      for (int step = 0; step < 20000; ++step) {
        if (q.has_room() && random() % 2 == 0) {
          const bool s = q.Take(random() % 5 == 0);
          on_wire.push_back(s);
          ++posted;
          unsignaled_run = s ? 0 : unsignaled_run + 1;
          ASSERT_LT(unsignaled_run, every);
          ASSERT_LE(q.in_use(), depth);
        } else if (!on_wire.empty()) {
          const bool s = on_wire.front();
          on_wire.pop_front();
          if (s) {
            ASSERT_TRUE(q.Completed());
          }
        }
        if (!q.has_room()) {
          // Full: the newest SEND on the wire must be signaled, or nothing would ever free it.
          ASSERT_FALSE(on_wire.empty());
          ASSERT_TRUE(on_wire.back());
        }
        // What is in use is exactly what the device has not yet reported, plus unsignaled
        // SENDs it completed after the last report.
        ASSERT_GE(q.in_use(), on_wire.size());
      }
      while (!on_wire.empty()) {
        if (on_wire.front()) {
          ASSERT_TRUE(q.Completed());
        }
        on_wire.pop_front();
      }
      // Only the unsignaled SENDs after the last signaled one are still counted: no completion
      // reports them (the channel's Idle() does not wait for them).
      EXPECT_EQ(q.awaited(), 0u);
      EXPECT_EQ(q.in_use(), unsignaled_run) << "depth " << depth << " every " << every;
      EXPECT_GT(posted, 1000u);
    }
  }
}

}  // namespace
}  // namespace rft::verbs
