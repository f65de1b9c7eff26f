// The death watch across a fork: a watcher learns that a child holding its mutexes was killed,
// and does not mistake a clean end for a death. Each test kills only its own child, by PID.
#include "detector/death_watch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "base/clock.h"

namespace rft::detector {
namespace {

// A token per test run, so parallel runs never share /dev/shm names.
uint32_t FreshToken() { return static_cast<uint32_t>(std::random_device()()) | 1; }

// Forks a child that creates rank 1's watch, signals readiness, then either waits to be killed
// or ends cleanly (destroying its watch) after `clean_after_ms`.
pid_t StartChild(uint32_t token, int clean_after_ms) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    auto watch = DeathWatch::Create(token, 1, [](Rank) {});
    const char ok = watch.ok() ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(3);
    if (clean_after_ms < 0) {
      for (;;) pause();
    }
    usleep(static_cast<useconds_t>(clean_after_ms) * 1000);
    watch->reset();
    _exit(0);
  }
  close(ready[1]);
  char ok = 'n';
  const bool started = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  return started ? pid : -1;
}

TEST(DeathWatchTest, AKilledHolderIsReportedPromptly) {
  const uint32_t token = FreshToken();
  std::atomic<int> deaths{0};
  std::atomic<int64_t> known_ns{0};
  auto watcher = DeathWatch::Create(token, 0, [&](Rank rank) {
    EXPECT_EQ(rank, 1u);
    known_ns.store(MonotonicNanos());
    deaths.fetch_add(1);
  });
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  const pid_t child = StartChild(token, -1);
  ASSERT_GT(child, 0);
  ASSERT_TRUE((*watcher)->Watch(1, 0).ok());
  (*watcher)->Unlink();
  usleep(20000);
  const int64_t killed_ns = MonotonicNanos();
  ASSERT_EQ(kill(child, SIGKILL), 0);
  const Deadline deadline = Deadline::After(std::chrono::seconds(10));
  while (deaths.load() == 0 && !deadline.expired()) usleep(100);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(deaths.load(), 1) << "the child's death was not reported within 10 s";
  // Loose bound (sanitizers, shared cores); the benchmark measures the real figure.
  EXPECT_LT(known_ns.load() - killed_ns, int64_t{2} * 1000 * 1000 * 1000);
}

TEST(DeathWatchTest, ACleanEndIsNotADeath) {
  const uint32_t token = FreshToken();
  std::atomic<int> deaths{0};
  auto watcher = DeathWatch::Create(token, 0, [&](Rank) { deaths.fetch_add(1); });
  ASSERT_TRUE(watcher.ok());
  const pid_t child = StartChild(token, 50);
  ASSERT_GT(child, 0);
  ASSERT_TRUE((*watcher)->Watch(1, 3).ok());
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  usleep(200000);  // a wrong report would have come by now (the watcher wakes at the exit)
  EXPECT_EQ(deaths.load(), 0);
}

TEST(DeathWatchTest, WatchingAProcessThatIsGoneOrABadSlotFailsClearly) {
  const uint32_t token = FreshToken();
  auto watcher = DeathWatch::Create(token, 0, [](Rank) {});
  ASSERT_TRUE(watcher.ok());
  const Status gone = (*watcher)->Watch(7, 0);
  EXPECT_EQ(gone.code(), RFT_ERR_PROC_FAILED) << gone.ToString();
  const Status slot = (*watcher)->Watch(7, DeathWatch::kWatcherSlots);
  EXPECT_EQ(slot.code(), RFT_ERR_ARG);
  EXPECT_NE(slot.message().find("slot 8"), std::string::npos) << slot.ToString();
}

}  // namespace
}  // namespace rft::detector
