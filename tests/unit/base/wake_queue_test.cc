#include "base/wake_queue.h"

#include <poll.h>

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rft {
namespace {

bool Readable(int fd) {
  pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(WakeQueueTest, APushWakesThePollAndDrainsInOrder) {
  WakeQueue<int> queue;
  ASSERT_TRUE(queue.Open().ok());
  EXPECT_FALSE(queue.HasItems());
  EXPECT_FALSE(Readable(queue.fd()));
  queue.Push(3);
  queue.Push(1);
  EXPECT_TRUE(queue.HasItems());
  EXPECT_TRUE(Readable(queue.fd()));
  std::vector<int> items = {99};  // replaced, not appended to
  queue.Drain(&items);
  EXPECT_EQ(items, (std::vector<int>{3, 1}));
  EXPECT_FALSE(queue.HasItems());
  queue.ClearWakeups();
  EXPECT_FALSE(Readable(queue.fd()));
}

TEST(WakeQueueTest, AWakeWithoutAnItemWakesThePollOnly) {
  WakeQueue<int> queue;
  ASSERT_TRUE(queue.Open().ok());
  queue.Wake();
  EXPECT_TRUE(Readable(queue.fd()));
  EXPECT_FALSE(queue.HasItems());
}

// Pushes from several threads while the owner drains: nothing is lost or duplicated, and once
// every pusher is done the flag says whether anything is left.
TEST(WakeQueueTest, ConcurrentPushesAreAllDrainedOnce) {
  WakeQueue<int> queue;
  ASSERT_TRUE(queue.Open().ok());
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> pushers;
  for (int t = 0; t < kThreads; ++t) {
    pushers.emplace_back([&queue, t] {
      for (int i = 0; i < kEach; ++i) queue.Push(t * kEach + i);
    });
  }
  std::vector<int> seen(kThreads * kEach, 0);
  std::vector<int> batch;
  int drained = 0;
  auto drain = [&] {
    if (!queue.HasItems()) return;
    queue.Drain(&batch);
    for (int item : batch) ++seen[item];
    drained += static_cast<int>(batch.size());
  };
  while (drained < kThreads * kEach) drain();
  for (auto& pusher : pushers) pusher.join();
  drain();
  EXPECT_FALSE(queue.HasItems());
  for (int i = 0; i < kThreads * kEach; ++i) ASSERT_EQ(seen[i], 1) << "item " << i;
}

}  // namespace
}  // namespace rft
