#include "transport/dataplane/record.h"

#include <gtest/gtest.h>

#include <vector>

namespace rft::transport {
namespace {

DataPlaneRecord Sample(bool verbs) {
  DataPlaneRecord record{.pid = 4242,
                         .flags = DataPlaneRecord::kCmaUsable | DataPlaneRecord::kBlocks,
                         .parent = 4000,
                         .ring_fd = 17,
                         .ring_capacity = 1 << 20,
                         .wake_fd = -1,
                         .verbs = std::nullopt,
                         .ucx_address = {std::byte{9}, std::byte{8}, std::byte{7}}};
  if (verbs) {
    record.flags |= DataPlaneRecord::kVerbs;
    record.verbs = VerbsRecordPart{.credits = 64, .max_payload = 8192};
  }
  return record;
}

TEST(DataPlaneRecordTest, RoundTripsWithAndWithoutTheVerbsPart) {
  for (bool verbs : {false, true}) {
    const DataPlaneRecord record = Sample(verbs);
    const std::vector<std::byte> bytes = EncodeDataPlaneRecord(record);
    EXPECT_EQ(bytes.size(), 24u + (verbs ? 8u : 0u) + 3u);
    auto decoded = DecodeDataPlaneRecord(bytes, 3);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, record);
  }
}

// The layout is the one docs/architecture.md and the fuzzer's seeds describe: little-endian
// words, the verbs part between them and the address.
TEST(DataPlaneRecordTest, IsLittleEndianWordsThenTheVerbsPartThenTheAddress) {
  const std::vector<std::byte> bytes = EncodeDataPlaneRecord(Sample(true));
  EXPECT_EQ(bytes[0], std::byte{0x92});  // 4242 = 0x1092
  EXPECT_EQ(bytes[1], std::byte{0x10});
  EXPECT_EQ(bytes[4], std::byte{1 | 4 | 8});
  EXPECT_EQ(bytes[20], std::byte{0xff});  // wake_fd -1
  EXPECT_EQ(bytes[24], std::byte{64});    // credits
  EXPECT_EQ(bytes[29], std::byte{0x20});  // 8192 = 0x2000
  EXPECT_EQ(bytes[32], std::byte{9});     // the address
}

TEST(DataPlaneRecordTest, RefusesWhatDoesNotFitNamingTheRankAndTheSize) {
  const std::vector<std::byte> good = EncodeDataPlaneRecord(Sample(true));
  struct Case {
    std::vector<std::byte> bytes;
    const char* says;
  };
  std::vector<std::byte> unknown_flag = EncodeDataPlaneRecord(Sample(false));
  unknown_flag[4] |= std::byte{0x40};
  const std::vector<Case> cases = {
      {{}, "shorter than its 24-byte fixed part"},
      {std::vector<std::byte>(good.begin(), good.begin() + 23), "shorter than its 24-byte"},
      {std::vector<std::byte>(good.begin(), good.begin() + 30), "ends inside its verbs part"},
      {std::vector<std::byte>(good.begin(), good.begin() + 32), "has no UCX address"},
      {unknown_flag, "unknown flags 64"},
  };
  for (const Case& c : cases) {
    auto decoded = DecodeDataPlaneRecord(c.bytes, 5);
    ASSERT_FALSE(decoded.ok()) << c.says;
    EXPECT_EQ(decoded.status().code(), RFT_ERR_OTHER);
    EXPECT_NE(decoded.status().message().find("rank 5's data-plane record of " +
                                              std::to_string(c.bytes.size()) + " bytes"),
              std::string::npos)
        << decoded.status().message();
    EXPECT_NE(decoded.status().message().find(c.says), std::string::npos)
        << decoded.status().message();
  }
}

}  // namespace
}  // namespace rft::transport
