#include "agreement/era_message.h"

#include <gtest/gtest.h>

#include <vector>

namespace rft::agreement {
namespace {

EraMessage Sample() {
  EraMessage m;
  m.kind = EraMessage::Kind::kDecided;
  m.seq = 7;
  m.failed = RankSet{2, 5, 6};
  m.value.flag = 0x0f0f;
  m.value.max = 9;
  m.value.bits = {0xff, 0x1};
  m.value.acked = RankSet{2};
  m.value.undecided_floor = 6;
  return m;
}

TEST(EraMessageTest, RoundTrips) {
  std::vector<std::byte> bytes;
  EncodeEraMessage(Sample(), &bytes);
  auto back = DecodeEraMessage(bytes, 8);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Sample());
}

TEST(EraMessageTest, AViewCarriesNoValue) {
  EraMessage m{.kind = EraMessage::Kind::kView, .seq = 1, .failed = RankSet{0}, .value = {}};
  std::vector<std::byte> bytes;
  EncodeEraMessage(m, &bytes);
  EXPECT_EQ(bytes.size(), 1u + 8 + 4 + 8);
  auto back = DecodeEraMessage(bytes, 2);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, m);
}

TEST(EraMessageTest, RefusesWhatIsMalformedNamingTheField) {
  std::vector<std::byte> bytes;
  EncodeEraMessage(Sample(), &bytes);
  // A member beyond the communicator.
  auto beyond = DecodeEraMessage(bytes, 6);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().code(), RFT_ERR_ARG);
  EXPECT_NE(beyond.status().message().find("failed set"), std::string::npos);
  // Cut short, and with a byte too many.
  auto cut = DecodeEraMessage(std::span(bytes).first(5), 8);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("seq past the end"), std::string::npos);
  auto cut_set = DecodeEraMessage(std::span(bytes).first(bytes.size() - 1), 8);
  ASSERT_FALSE(cut_set.ok());
  EXPECT_NE(cut_set.status().message().find("acknowledged set has 1 intervals"), std::string::npos)
      << cut_set.status().ToString();
  bytes.push_back(std::byte{0});
  auto trailing = DecodeEraMessage(bytes, 8);
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("after the end"), std::string::npos);
  // An unknown kind.
  bytes[0] = std::byte{4};
  auto kind = DecodeEraMessage(bytes, 8);
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.status().message().find("kind 4"), std::string::npos);
}

TEST(EraMessageTest, MergeIsIdempotentAndCommutative) {
  AgreeValue a{
      .flag = 0b1100, .max = 3, .bits = {0b1010}, .acked = RankSet{1, 2}, .undecided_floor = 4};
  AgreeValue b{
      .flag = 0b0110, .max = 5, .bits = {0b0011}, .acked = RankSet{2, 3}, .undecided_floor = 2};
  AgreeValue ab = a;
  ab.Merge(b);
  AgreeValue ba = b;
  ba.Merge(a);
  EXPECT_EQ(ab, ba);
  EXPECT_EQ(ab.flag, 0b0100u);
  EXPECT_EQ(ab.max, 5u);
  EXPECT_EQ(ab.bits, std::vector<uint64_t>{0b0010});
  EXPECT_EQ(ab.acked, RankSet{2});
  EXPECT_EQ(ab.undecided_floor, 2u);
  AgreeValue again = ab;
  again.Merge(b);
  EXPECT_EQ(again, ab);
}

}  // namespace
}  // namespace rft::agreement
