#include "base/clock.h"

#include <climits>
#include <thread>

#include "gtest/gtest.h"

namespace rft {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(ClockTest, MonotonicNanosNeverGoesBack) {
  int64_t previous = MonotonicNanos();
  EXPECT_GT(previous, 0);
  for (int i = 0; i < 10000; ++i) {
    int64_t now = MonotonicNanos();
    ASSERT_GE(now, previous);
    previous = now;
  }
}

TEST(DeadlineTest, NeverNeverExpires) {
  Deadline d = Deadline::Never();
  EXPECT_TRUE(d.is_never());
  EXPECT_FALSE(d.expired());
  EXPECT_FALSE(d.expired(INT64_MAX - 1));
  EXPECT_EQ(d.remaining(), nanoseconds::max());
  EXPECT_EQ(d.remaining_ms_for_poll(), -1);
  EXPECT_EQ(d.remaining_ms_for_poll(0), -1);
}

TEST(DeadlineTest, ZeroAndNegativeTimeoutsAreAlreadyExpired) {
  for (nanoseconds t : {nanoseconds(0), nanoseconds(-1), nanoseconds(-seconds(5))}) {
    Deadline d = Deadline::After(t);
    EXPECT_TRUE(d.expired()) << t.count();
    EXPECT_EQ(d.remaining(), nanoseconds(0));
    EXPECT_EQ(d.remaining_ms_for_poll(), 0);
  }
}

TEST(DeadlineTest, HugeTimeoutIsNever) {
  EXPECT_TRUE(Deadline::After(nanoseconds::max()).is_never());
  EXPECT_TRUE(Deadline::AfterFrom(INT64_MAX - 5, nanoseconds(10)).is_never());
  EXPECT_FALSE(Deadline::AfterFrom(INT64_MAX - 50, nanoseconds(10)).is_never());
}

TEST(DeadlineTest, InjectedTime) {
  const int64_t t0 = 1000000000;
  Deadline d = Deadline::AfterFrom(t0, milliseconds(5));
  EXPECT_EQ(d.at_ns(), t0 + 5000000);
  EXPECT_FALSE(d.expired(t0));
  EXPECT_FALSE(d.expired(t0 + 4999999));
  EXPECT_TRUE(d.expired(t0 + 5000000));
  EXPECT_TRUE(d.expired(t0 + 6000000));
  EXPECT_EQ(d.remaining(t0), milliseconds(5));
  EXPECT_EQ(d.remaining(t0 + 4000000), milliseconds(1));
  EXPECT_EQ(d.remaining(t0 + 9000000), nanoseconds(0));
  EXPECT_EQ(Deadline::At(42).at_ns(), 42);
}

TEST(DeadlineTest, PollTimeoutRoundsUp) {
  const int64_t t0 = 5;
  EXPECT_EQ(Deadline::AfterFrom(t0, nanoseconds(1)).remaining_ms_for_poll(t0), 1);
  EXPECT_EQ(Deadline::AfterFrom(t0, milliseconds(1)).remaining_ms_for_poll(t0), 1);
  EXPECT_EQ(Deadline::AfterFrom(t0, milliseconds(1) + nanoseconds(1)).remaining_ms_for_poll(t0), 2);
  EXPECT_EQ(Deadline::AfterFrom(t0, milliseconds(250)).remaining_ms_for_poll(t0), 250);
  EXPECT_EQ(Deadline::AfterFrom(t0, milliseconds(250)).remaining_ms_for_poll(t0 + 250000000), 0);
  // Years away: capped rather than overflowing int.
  EXPECT_EQ(Deadline::AfterFrom(t0, std::chrono::hours(24 * 365 * 100)).remaining_ms_for_poll(t0),
            INT_MAX);
}

TEST(DeadlineTest, RealClock) {
  Deadline d = Deadline::After(milliseconds(20));
  EXPECT_FALSE(d.expired());
  EXPECT_LE(d.remaining(), milliseconds(20));
  EXPECT_GT(d.remaining_ms_for_poll(), 0);
  EXPECT_LE(d.remaining_ms_for_poll(), 20);
  std::this_thread::sleep_for(milliseconds(25));
  EXPECT_TRUE(d.expired());
  EXPECT_EQ(d.remaining_ms_for_poll(), 0);
}

TEST(DeadlineTest, Earliest) {
  Deadline a = Deadline::At(10), b = Deadline::At(20);
  EXPECT_EQ(Deadline::Earliest(a, b), a);
  EXPECT_EQ(Deadline::Earliest(b, a), a);
  EXPECT_EQ(Deadline::Earliest(Deadline::Never(), b), b);
  EXPECT_TRUE(Deadline::Earliest(Deadline::Never(), Deadline::Never()).is_never());
}

TEST(StopwatchTest, MeasuresSleeps) {
  Stopwatch w;
  std::this_thread::sleep_for(milliseconds(10));
  int64_t e = w.elapsed_ns();
  EXPECT_GE(e, 10000000);
  EXPECT_LT(e, 10000000000);  // generous: a loaded CI machine
  EXPECT_GE(w.elapsed(), milliseconds(10));
  w.Restart();
  EXPECT_LT(w.elapsed_ns(), e);
}

}  // namespace
}  // namespace rft
