#include "detector/thread_state.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace rft::detector::internal {
namespace {

TEST(ThreadStateTest, FindsANamedThreadAndReadsItsState) {
  std::atomic<bool> stop{false};
  std::atomic<bool> named{false};
  std::thread sleeper([&] {
    pthread_setname_np(pthread_self(), "rft-test-sleep");
    named = true;
    while (!stop) usleep(1000);
  });
  while (!named) usleep(100);
  const pid_t tid = FindThread(getpid(), "rft-test-sleep");
  EXPECT_GT(tid, 0);
  const char state = ThreadState(getpid(), tid);
  EXPECT_TRUE(state == 'S' || state == 'R') << state;  // asleep in usleep, or just waking
  stop = true;
  sleeper.join();
  EXPECT_EQ(FindThread(getpid(), "rft-no-such-thread"), 0);
}

TEST(ThreadStateTest, AStoppedProcessIsTAndAGoneOneUnknown) {
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  ASSERT_GT(child, 0);
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  char state = '?';
  for (int i = 0; i < 1000 && state != 'T'; ++i) {
    usleep(1000);
    state = ThreadState(child, child);
  }
  EXPECT_EQ(state, 'T');
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(ThreadState(child, child), '?');
}

}  // namespace
}  // namespace rft::detector::internal
