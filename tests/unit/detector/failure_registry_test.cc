#include "detector/failure_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace rft::detector {
namespace {

std::unique_ptr<FailureRegistry> Make(Rank self, uint32_t size) {
  auto registry = FailureRegistry::Create(self, size);
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  return std::move(*registry);
}

TEST(FailureRegistryTest, RecordsEachRankOnceInOrderWithItsFirstSource) {
  auto registry = Make(0, 8);
  std::vector<FailureRecord> heard;
  const Subscription subscription =
      registry->Subscribe([&](const FailureRecord& r) { heard.push_back(r); });
  EXPECT_TRUE(registry->Report(3, FailureSource::kLauncher));
  EXPECT_TRUE(registry->Report(5, FailureSource::kHeartbeat));
  EXPECT_FALSE(registry->Report(3, FailureSource::kPropagated));
  EXPECT_EQ(registry->count(), 2u);
  auto records = registry->Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].rank, 3u);
  EXPECT_EQ(records[0].source, FailureSource::kLauncher);
  EXPECT_EQ(records[1].rank, 5u);
  EXPECT_LE(records[0].known_ns, records[1].known_ns);
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0].rank, 3u);
  EXPECT_EQ(heard[1].rank, 5u);
  EXPECT_TRUE(registry->IsFailed(5));
  EXPECT_FALSE(registry->IsFailed(4));
  EXPECT_EQ(registry->Failed(), (RankSet{3, 5}));
  EXPECT_EQ(registry->ignored_reports(), 1u);
}

TEST(FailureRegistryTest, SelfAndOutOfRangeAreIgnoredNotRecorded) {
  auto registry = Make(2, 4);
  EXPECT_FALSE(registry->Report(2, FailureSource::kPropagated));
  EXPECT_FALSE(registry->Report(4, FailureSource::kTransport));
  EXPECT_FALSE(registry->Report(kInvalidRank, FailureSource::kTransport));
  EXPECT_FALSE(registry->IsFailed(4));
  EXPECT_EQ(registry->count(), 0u);
  EXPECT_EQ(registry->ignored_reports(), 3u);
}

// A rank that said it ends cleanly is never recorded failed afterwards (its endpoints close,
// it stops answering); one already failed stays failed.
TEST(FailureRegistryTest, ADepartedRankIsNeverRecordedFailed) {
  auto registry = Make(0, 4);
  int heard = 0;
  const Subscription subscription = registry->Subscribe([&](const FailureRecord&) { ++heard; });
  EXPECT_TRUE(registry->Depart(2));
  EXPECT_TRUE(registry->IsDeparted(2));
  EXPECT_FALSE(registry->Report(2, FailureSource::kTransport));
  EXPECT_FALSE(registry->Report(2, FailureSource::kPropagated));
  EXPECT_FALSE(registry->IsFailed(2));
  EXPECT_TRUE(registry->Report(3, FailureSource::kLauncher));
  EXPECT_FALSE(registry->Depart(3));  // failed first: stays failed
  EXPECT_TRUE(registry->IsFailed(3));
  EXPECT_FALSE(registry->Depart(0));  // itself
  EXPECT_FALSE(registry->Depart(4));  // outside the job
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(registry->count(), 1u);
}

TEST(FailureRegistryTest, ABadSelfIsRefusedByValue) {
  auto registry = FailureRegistry::Create(4, 4);
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.status().code(), RFT_ERR_ARG);
  EXPECT_NE(registry.status().message().find("rank 4"), std::string::npos);
}

TEST(FailureRegistryTest, AReportFromAListenerIsDispatchedAfterTheCurrentOneInOrder) {
  auto registry = Make(0, 8);
  std::vector<Rank> first, second;
  const Subscription one = registry->Subscribe([&](const FailureRecord& r) {
    first.push_back(r.rank);
    if (r.rank == 1) registry->Report(2, FailureSource::kPropagated);  // nested
  });
  const Subscription two =
      registry->Subscribe([&](const FailureRecord& r) { second.push_back(r.rank); });
  registry->Report(1, FailureSource::kHeartbeat);
  EXPECT_EQ(first, (std::vector<Rank>{1, 2}));
  EXPECT_EQ(second, (std::vector<Rank>{1, 2}));  // 1 reached every listener before 2
}

TEST(FailureRegistryTest, AResetSubscriptionIsNeverCalledAgain) {
  auto registry = Make(0, 8);
  int calls = 0, self_removing_calls = 0;
  Subscription counting = registry->Subscribe([&](const FailureRecord&) { ++calls; });
  Subscription self_removing;
  self_removing = registry->Subscribe([&](const FailureRecord&) {
    ++self_removing_calls;
    self_removing.Reset();  // from inside itself: later records skip it
  });
  registry->Report(1, FailureSource::kLauncher);
  EXPECT_FALSE(self_removing.active());
  counting.Reset();
  registry->Report(2, FailureSource::kLauncher);
  counting.Reset();  // twice is harmless
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(self_removing_calls, 1);
}

// What a listener calls into owns its subscription: when the owner goes (on any return path),
// the listener goes first, and a later report cannot reach freed memory (ASan would say so).
TEST(FailureRegistryTest, ASubscriptionEndsWithItsOwner) {
  auto registry = Make(0, 8);
  struct Owner {
    std::vector<Rank> heard;
    Subscription subscription;
  };
  {
    auto owner = std::make_unique<Owner>();
    Owner* raw = owner.get();
    owner->subscription =
        registry->Subscribe([raw](const FailureRecord& r) { raw->heard.push_back(r.rank); });
    registry->Report(1, FailureSource::kLauncher);
    EXPECT_EQ(owner->heard, (std::vector<Rank>{1}));
  }
  EXPECT_TRUE(registry->Report(2, FailureSource::kLauncher));  // nobody left to call
  // Moving a subscription moves the registration, not a copy of it.
  int calls = 0;
  Subscription first = registry->Subscribe([&](const FailureRecord&) { ++calls; });
  Subscription second = std::move(first);
  EXPECT_FALSE(first.active());
  EXPECT_TRUE(second.active());
  registry->Report(3, FailureSource::kLauncher);
  second = Subscription();
  registry->Report(4, FailureSource::kLauncher);
  EXPECT_EQ(calls, 1);
}

TEST(FailureRegistryTest, ConcurrentReportersAgreeOnOneOrderAndListenersSeeIt) {
  constexpr uint32_t kSize = 2000;
  auto registry = Make(0, kSize);
  std::vector<Rank> heard;  // listeners run one at a time (one dispatcher): no lock needed
  const Subscription subscription =
      registry->Subscribe([&](const FailureRecord& r) { heard.push_back(r.rank); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Every thread reports every rank: each rank must be recorded exactly once.
      for (Rank r = 1; r < kSize; ++r) {
        registry->Report((r * 7 + static_cast<Rank>(t) * 13) % (kSize - 1) + 1,
                         FailureSource::kPropagated);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto records = registry->Records();
  ASSERT_EQ(records.size(), kSize - 1);
  std::vector<Rank> recorded;
  for (const auto& r : records) recorded.push_back(r.rank);
  EXPECT_EQ(heard, recorded);
  std::sort(recorded.begin(), recorded.end());
  EXPECT_EQ(std::adjacent_find(recorded.begin(), recorded.end()), recorded.end());
  EXPECT_EQ(registry->ignored_reports(), 4u * (kSize - 1) - (kSize - 1));
}

TEST(FailureRegistryTest, WaitersAndTheWakeFdSeeANewFailure) {
  auto registry = Make(0, 4);
  EXPECT_FALSE(registry->WaitForChange(0, Deadline::After(std::chrono::milliseconds(5))));
  std::thread reporter([&] {
    usleep(20000);
    registry->Report(3, FailureSource::kLauncher);
  });
  EXPECT_TRUE(registry->WaitForChange(0, Deadline::After(std::chrono::seconds(10))));
  reporter.join();
  uint64_t value = 0;
  EXPECT_EQ(read(registry->wake_fd(), &value, sizeof(value)), 8);
  EXPECT_EQ(value, 1u);
}

// Replacements join as new ranks: before the growth they are out of range, after it they are
// recorded like any other, across several growths (each past the capacity allocates a block),
// and a shrink or a size beyond kMaxRank + 1 is refused naming both sizes.
TEST(FailureRegistryTest, GrowsByNewRanks) {
  auto registry = Make(0, 3);
  EXPECT_FALSE(registry->Report(3, FailureSource::kLauncher));
  ASSERT_TRUE(registry->Grow(4).ok());
  EXPECT_EQ(registry->size(), 4u);
  EXPECT_FALSE(registry->IsFailed(3));
  EXPECT_TRUE(registry->Report(3, FailureSource::kLauncher));
  EXPECT_TRUE(registry->IsFailed(3));
  for (uint32_t size = 5; size <= 40; size += 7) ASSERT_TRUE(registry->Grow(size).ok());
  EXPECT_TRUE(registry->Report(39, FailureSource::kHeartbeat));
  EXPECT_TRUE(registry->Depart(38));
  EXPECT_TRUE(registry->IsDeparted(38));
  EXPECT_FALSE(registry->Report(38, FailureSource::kTransport));
  EXPECT_FALSE(registry->Report(40, FailureSource::kLauncher));
  for (Rank r = 0; r < 40; ++r) EXPECT_EQ(registry->IsFailed(r), r == 3 || r == 39) << r;
  EXPECT_EQ(registry->Failed(), (RankSet{3, 39}));
  const Status smaller = registry->Grow(20);
  EXPECT_EQ(smaller.code(), RFT_ERR_ARG);
  EXPECT_NE(smaller.message().find("from 40 to 20"), std::string::npos) << smaller.message();
  EXPECT_EQ(registry->Grow(kMaxRank + 2).code(), RFT_ERR_ARG);
  EXPECT_TRUE(registry->Grow(40).ok());
}

// Readers never lock: one thread grows the job and reports every new rank while another reads
// IsFailed of ranks at and beyond the size (under TSan this checks the publication order).
TEST(FailureRegistryTest, ReadersSeeGrowthWithoutLocks) {
  auto registry = Make(0, 2);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    uint64_t seen = 0;
    while (!done.load(std::memory_order_acquire)) {
      const uint32_t size = registry->size();
      for (Rank r = 1; r < size + 2; ++r) seen += registry->IsFailed(r);
    }
    EXPECT_GE(seen, 0u);
  });
  for (uint32_t size = 3; size <= 600; ++size) {
    ASSERT_TRUE(registry->Grow(size).ok());
    EXPECT_TRUE(registry->Report(size - 1, FailureSource::kLauncher));
  }
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(registry->count(), 598u);
  EXPECT_TRUE(registry->IsFailed(599));
  EXPECT_FALSE(registry->IsFailed(1));
}
}  // namespace
}  // namespace rft::detector
