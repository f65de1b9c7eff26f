#include "detector/live_ring.h"

#include <gtest/gtest.h>

namespace rft::detector {
namespace {

TEST(LiveRingTest, NeighboursWithoutFailuresAreAdjacentRanks) {
  const RankSet none;
  EXPECT_EQ(NextLiveRank(none, 5, 2), 3u);
  EXPECT_EQ(PreviousLiveRank(none, 5, 2), 1u);
  EXPECT_EQ(NextLiveRank(none, 5, 4), 0u);
  EXPECT_EQ(PreviousLiveRank(none, 5, 0), 4u);
}

TEST(LiveRingTest, SkipsFailedRunsAndWraps) {
  const RankSet failed = RankSet::Range(3, 8);  // {3..7} of 10
  EXPECT_EQ(NextLiveRank(failed, 10, 2), 8u);
  EXPECT_EQ(PreviousLiveRank(failed, 10, 8), 2u);
  RankSet ends = {0, 1, 9};
  EXPECT_EQ(NextLiveRank(ends, 10, 8), 2u);
  EXPECT_EQ(PreviousLiveRank(ends, 10, 2), 8u);
}

TEST(LiveRingTest, FromMayBeFailedButIsNeverReturned) {
  const RankSet failed = {4, 5};
  EXPECT_EQ(NextLiveRank(failed, 8, 4), 6u);
  EXPECT_EQ(PreviousLiveRank(failed, 8, 5), 3u);
}

TEST(LiveRingTest, NobodyElseAlive) {
  EXPECT_EQ(NextLiveRank(RankSet(), 1, 0), kInvalidRank);
  EXPECT_EQ(PreviousLiveRank(RankSet(), 1, 0), kInvalidRank);
  RankSet others = RankSet::Range(0, 100);
  others.Erase(42);
  EXPECT_EQ(NextLiveRank(others, 100, 42), kInvalidRank);
  EXPECT_EQ(PreviousLiveRank(others, 100, 42), kInvalidRank);
  // Everything failed, asked from a failed rank.
  EXPECT_EQ(NextLiveRank(RankSet::Range(0, 6), 6, 3), kInvalidRank);
}

TEST(LiveRingTest, LargeJobWithFewFailuresIsCheap) {
  // 100,000 ranks, a few long runs: the answer comes from the runs, not a scan.
  RankSet failed = RankSet::Range(10, 90'000);
  failed.InsertRange(95'000, 100'000);
  EXPECT_EQ(NextLiveRank(failed, 100'000, 9), 90'000u);
  EXPECT_EQ(NextLiveRank(failed, 100'000, 94'999), 0u);
  EXPECT_EQ(PreviousLiveRank(failed, 100'000, 0), 94'999u);
  EXPECT_EQ(PreviousLiveRank(failed, 100'000, 90'000), 9u);
}

}  // namespace
}  // namespace rft::detector
