#include "transport/bootstrap/rank_space.h"

#include <gtest/gtest.h>

namespace rft::transport {
namespace {

TEST(RankSpaceTest, BlocksMapJobRanksToNamespaces) {
  RankSpace space;
  ASSERT_TRUE(space.Add("job", 4).ok());
  ASSERT_TRUE(space.Add("job.s1", 1).ok());
  ASSERT_TRUE(space.Add("job.s2", 2).ok());
  EXPECT_EQ(space.size(), 7u);
  ASSERT_NE(space.BlockOf(3), nullptr);
  EXPECT_EQ(space.BlockOf(3)->nspace, "job");
  EXPECT_EQ(space.BlockOf(4)->nspace, "job.s1");
  EXPECT_EQ(space.BlockOf(6)->first, 5u);
  EXPECT_EQ(space.BlockOf(7), nullptr);
  EXPECT_EQ(space.JobRankOf("job", 2), 2u);
  EXPECT_EQ(space.JobRankOf("job.s2", 1), 6u);
  EXPECT_EQ(space.JobRankOf("job.s2", 2), kInvalidRank);
  EXPECT_EQ(space.JobRankOf("other", 0), kInvalidRank);
}

TEST(RankSpaceTest, EncodesAndDecodes) {
  RankSpace space;
  ASSERT_TRUE(space.Add("prterun-host-12@1", 8).ok());
  ASSERT_TRUE(space.Add("prterun-host-12@2", 3).ok());
  EXPECT_EQ(space.Encode(), "8:prterun-host-12@1;3:prterun-host-12@2");
  auto decoded = RankSpace::Decode(space.Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->blocks(), space.blocks());
  EXPECT_EQ(decoded->size(), 11u);
}

TEST(RankSpaceTest, RefusesBadInputNamingIt) {
  RankSpace space;
  EXPECT_EQ(space.Add("", 1).code(), RFT_ERR_ARG);
  EXPECT_EQ(space.Add("a;b", 1).code(), RFT_ERR_ARG);
  EXPECT_EQ(space.Add("job", 0).code(), RFT_ERR_ARG);
  ASSERT_TRUE(space.Add("job", 2).ok());
  const Status twice = space.Add("job", 2);
  EXPECT_NE(twice.message().find("\"job\" is in the job already"), std::string::npos)
      << twice.message();
  EXPECT_EQ(space.Add("big", kMaxRank).code(), RFT_ERR_ARG);
  for (const char* bad :
       {"", "4", "x:job", "4:", "4:job;", ";4:job", "4:job;4:job", "-1:job", "99999999999:job"}) {
    const auto decoded = RankSpace::Decode(bad);
    EXPECT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().code(), RFT_ERR_ARG) << bad;
  }
}

}  // namespace
}  // namespace rft::transport
