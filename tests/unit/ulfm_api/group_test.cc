// Groups: MPI's orders for the set operations, rank translation, comparison, and bad input
// refused by name; plus seeded random groups checked against a plain model (a failure prints
// its seed).
#include "ulfm_api/group.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace rft::api {
namespace {

using Ranks = std::vector<Rank>;

Group Of(Ranks job_ranks) {
  auto group = Group::FromJobRanks(std::move(job_ranks));
  EXPECT_TRUE(group.ok()) << group.status().ToString();
  return group.ok() ? *group : Group();
}

TEST(GroupTest, RanksAreMemberPositions) {
  const Group g = Of({7, 3, 9});
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.JobRank(0), 7u);
  EXPECT_EQ(g.RankOf(9), 2u);
  EXPECT_EQ(g.RankOf(4), Group::kUndefined);
  EXPECT_TRUE(Group().empty());
  EXPECT_EQ(Group::Range(2, 3).job_ranks(), (Ranks{2, 3, 4}));
}

TEST(GroupTest, SetOperationsKeepMpisOrders) {
  const Group a = Of({5, 1, 3, 7});
  const Group b = Of({3, 8, 5, 2});
  EXPECT_EQ(Group::Union(a, b).job_ranks(), (Ranks{5, 1, 3, 7, 8, 2}));
  EXPECT_EQ(Group::Union(b, a).job_ranks(), (Ranks{3, 8, 5, 2, 1, 7}));
  EXPECT_EQ(Group::Intersection(a, b).job_ranks(), (Ranks{5, 3}));
  EXPECT_EQ(Group::Intersection(b, a).job_ranks(), (Ranks{3, 5}));
  EXPECT_EQ(Group::Difference(a, b).job_ranks(), (Ranks{1, 7}));
  EXPECT_TRUE(Group::Difference(a, a).empty());
  EXPECT_EQ(Group::Union(a, Group()).job_ranks(), a.job_ranks());
}

TEST(GroupTest, InclAndExclTakeGroupRanks) {
  const Group a = Of({5, 1, 3, 7});
  auto incl = a.Incl(Ranks{3, 0});
  ASSERT_TRUE(incl.ok()) << incl.status().ToString();
  EXPECT_EQ(incl->job_ranks(), (Ranks{7, 5}));
  auto excl = a.Excl(Ranks{2, 0});
  ASSERT_TRUE(excl.ok()) << excl.status().ToString();
  EXPECT_EQ(excl->job_ranks(), (Ranks{1, 7}));
  auto none = a.Incl(Ranks{});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(GroupTest, BadRanksAreRefusedByValue) {
  const Group a = Of({5, 1, 3});
  auto out_of_range = a.Incl(Ranks{0, 3});
  ASSERT_EQ(out_of_range.status().code(), RFT_ERR_ARG);
  EXPECT_NE(out_of_range.status().ToString().find("rank 3"), std::string::npos)
      << out_of_range.status().ToString();
  auto twice = a.Excl(Ranks{1, 1});
  ASSERT_EQ(twice.status().code(), RFT_ERR_ARG);
  EXPECT_NE(twice.status().ToString().find("twice"), std::string::npos);
  auto duplicate = Group::FromJobRanks({4, 2, 4});
  ASSERT_EQ(duplicate.status().code(), RFT_ERR_ARG);
  EXPECT_NE(duplicate.status().ToString().find("job rank 4"), std::string::npos);
  EXPECT_EQ(Group::FromJobRanks({1, kInvalidRank}).status().code(), RFT_ERR_ARG);
  std::vector<Rank> translated;
  EXPECT_EQ(a.TranslateRanks(Ranks{7}, a, &translated).code(), RFT_ERR_ARG);
}

TEST(GroupTest, TranslateRanksNamesTheCounterpartOrUndefined) {
  const Group a = Of({5, 1, 3});
  const Group b = Of({3, 9, 5});
  std::vector<Rank> out;
  ASSERT_TRUE(a.TranslateRanks(Ranks{0, 1, 2}, b, &out).ok());
  EXPECT_EQ(out, (Ranks{2, Group::kUndefined, 0}));
}

TEST(GroupTest, CompareTellsOrderFromMembership) {
  EXPECT_EQ(Group::Compare(Of({1, 2, 3}), Of({1, 2, 3})), Group::Comparison::kIdentical);
  EXPECT_EQ(Group::Compare(Of({1, 2, 3}), Of({3, 1, 2})), Group::Comparison::kSimilar);
  EXPECT_EQ(Group::Compare(Of({1, 2, 3}), Of({1, 2, 4})), Group::Comparison::kUnequal);
  EXPECT_EQ(Group::Compare(Of({1, 2}), Of({1, 2, 3})), Group::Comparison::kUnequal);
  EXPECT_EQ(Group::Compare(Group(), Group()), Group::Comparison::kIdentical);
}

// The operations against a model that scans vectors, on seeded random groups.
TEST(GroupTest, RandomGroupsMatchAPlainModel) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto random_group = [&] {
      Ranks all(64);
      for (Rank r = 0; r < all.size(); ++r) all[r] = r;
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(rng() % 40);
      return all;
    };
    const Ranks ma = random_group();
    const Ranks mb = random_group();
    const Group a = Of(ma);
    const Group b = Of(mb);
    auto in = [](const Ranks& v, Rank r) { return std::find(v.begin(), v.end(), r) != v.end(); };
    Ranks uni = ma, inter, diff;
    for (Rank r : mb) {
      if (!in(ma, r)) uni.push_back(r);
    }
    for (Rank r : ma) {
      (in(mb, r) ? inter : diff).push_back(r);
    }
    ASSERT_EQ(Group::Union(a, b).job_ranks(), uni) << "seed " << seed;
    ASSERT_EQ(Group::Intersection(a, b).job_ranks(), inter) << "seed " << seed;
    ASSERT_EQ(Group::Difference(a, b).job_ranks(), diff) << "seed " << seed;
    for (Rank i = 0; i < ma.size(); ++i) ASSERT_EQ(a.RankOf(ma[i]), i) << "seed " << seed;
    Ranks sa = ma, sb = mb;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    const auto expected = ma == mb   ? Group::Comparison::kIdentical
                          : sa == sb ? Group::Comparison::kSimilar
                                     : Group::Comparison::kUnequal;
    ASSERT_EQ(Group::Compare(a, b), expected) << "seed " << seed;
  }
}

}  // namespace
}  // namespace rft::api
