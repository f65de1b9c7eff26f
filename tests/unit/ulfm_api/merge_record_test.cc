#include "ulfm_api/merge_record.h"

#include <gtest/gtest.h>

#include <vector>

namespace rft::api {
namespace {

TEST(MergeRecordTest, RoundTrips) {
  MergeRecord record{.members = {0, 1, 4, 3, 5}, .pair = 9, .epoch = 12, .failed = {2, 6, 7, 8}};
  auto decoded = DecodeMergeRecord(EncodeMergeRecord(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  record.parents = 3;  // a spawn's: parents 0, 1, 4; spawned 3, 5
  decoded = DecodeMergeRecord(EncodeMergeRecord(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  EXPECT_EQ(MergeRecordKey("rftrun.42.s1"), "rft.merge.rftrun.42.s1");
}

// It comes through PMIx from another process: every malformed form is refused, naming why.
TEST(MergeRecordTest, RefusesMalformedRecordsNamingWhy) {
  const MergeRecord record{.members = {0, 3}, .pair = 2, .epoch = 1, .failed = {1, 2}};
  const std::vector<std::byte> good = EncodeMergeRecord(record);
  for (size_t length = 0; length < good.size(); ++length) {
    const auto decoded = DecodeMergeRecord(std::span(good.data(), length));
    EXPECT_EQ(decoded.status().code(), RFT_ERR_ARG) << length;
  }
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_EQ(DecodeMergeRecord(longer).status().code(), RFT_ERR_ARG);

  const MergeRecord empty{.members = {}, .pair = 2, .epoch = 1, .failed = {}};
  EXPECT_EQ(DecodeMergeRecord(EncodeMergeRecord(empty)).status().code(), RFT_ERR_ARG);

  std::vector<std::byte> bad_member = good;
  for (size_t i = 20; i < 24; ++i) bad_member[i] = std::byte{0xff};  // kInvalidRank
  const auto member = DecodeMergeRecord(bad_member);
  EXPECT_NE(member.status().message().find("member 0"), std::string::npos)
      << member.status().message();

  std::vector<std::byte> reversed = good;  // the failed interval [1, 3) as [3, 1)
  std::swap(reversed[28], reversed[32]);
  const auto interval = DecodeMergeRecord(reversed);
  EXPECT_NE(interval.status().message().find("failed interval"), std::string::npos)
      << interval.status().message();

  MergeRecord no_child = record;  // every member a parent: nobody was spawned
  no_child.parents = 2;
  const auto parents = DecodeMergeRecord(EncodeMergeRecord(no_child));
  EXPECT_NE(parents.status().message().find("2 parents of 2 members"), std::string::npos)
      << parents.status().message();
}

TEST(MergeRecordTest, FitsOnlyAJobThatHoldsEveryRankItNames) {
  const MergeRecord record{.members = {0, 5}, .pair = 2, .epoch = 1, .failed = {1, 7}};
  EXPECT_TRUE(CheckMergeRecordFits(record, 8).ok());
  const Status failed = CheckMergeRecordFits(record, 7);
  EXPECT_NE(failed.message().find("failed rank 7"), std::string::npos) << failed.message();
  const Status member = CheckMergeRecordFits(record, 5);
  EXPECT_NE(member.message().find("member 5"), std::string::npos) << member.message();
}

}  // namespace
}  // namespace rft::api
