// The QP address record's codec: what one process publishes and its peers decode, so a record
// cut short or from another format must be refused by name, never misread.
#include "transport/verbs/qp_address.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace rft::verbs {
namespace {

QpAddress Sample() {
  QpAddress a;
  a.lid = 0x1234;
  a.gid_index = 3;
  for (size_t i = 0; i < a.gid.size(); ++i) a.gid[i] = static_cast<uint8_t>(0xf0 + i);
  a.qpn = 0x00abcdef;
  a.psn = 0x00123456;
  a.addr = 0x00007f0011223344ull;
  a.rkey = 0xdeadbeef;
  a.eager_credits = 16;
  a.eager_slot_size = 0x00012000;
  return a;
}

TEST(QpAddressTest, RoundTrip) {
  const std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  ASSERT_EQ(bytes.size(), kQpAddressSize);
  StatusOr<QpAddress> back = DecodeQpAddress(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Sample());
}

TEST(QpAddressTest, LittleEndianLayout) {
  const std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  EXPECT_EQ(bytes[0], std::byte{kQpAddressVersion});
  EXPECT_EQ(bytes[1], std::byte{0x34});  // lid, low byte first
  EXPECT_EQ(bytes[2], std::byte{0x12});
  EXPECT_EQ(bytes[3], std::byte{3});      // gid_index
  EXPECT_EQ(bytes[4], std::byte{0xf0});   // the GID as the device gives it
  EXPECT_EQ(bytes[20], std::byte{0xef});  // qpn
  EXPECT_EQ(bytes[36], std::byte{0xef});  // rkey
  EXPECT_EQ(bytes[39], std::byte{0xde});
  EXPECT_EQ(bytes[40], std::byte{16});    // eager_credits
  EXPECT_EQ(bytes[45], std::byte{0x20});  // eager_slot_size's second byte
  EXPECT_EQ(bytes[46], std::byte{0x01});
}

// Which field a record of `size` bytes cuts: the one whose bytes it does not fully hold.
std::string FieldCutAt(size_t size) {
  struct Field {
    const char* name;
    size_t end;  // one past its last byte
  };
  const Field fields[] = {{"version", 1},        {"lid", 3},
                          {"gid_index", 4},      {"gid", 20},
                          {"qpn", 24},           {"psn", 28},
                          {"addr", 36},          {"rkey", 40},
                          {"eager_credits", 44}, {"eager_slot_size", 48}};
  for (const Field& field : fields) {
    if (size < field.end) return field.name;
  }
  return "";
}

TEST(QpAddressTest, EveryTruncationIsRefusedNamingTheField) {
  const std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  for (size_t size = 0; size < kQpAddressSize; ++size) {
    SCOPED_TRACE("size " + std::to_string(size));
    StatusOr<QpAddress> decoded = DecodeQpAddress(std::span(bytes).first(size));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), RFT_ERR_ARG);
    const std::string& message = decoded.status().message();
    EXPECT_NE(message.find("of " + std::to_string(size) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(" " + FieldCutAt(size) + " (bytes "), std::string::npos) << message;
  }
}

TEST(QpAddressTest, MessagesSayBeforeOrInside) {
  const std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  EXPECT_EQ(DecodeQpAddress(std::span(bytes).first(0)).status().message(),
            "QP address record of 0 bytes ends before version (bytes 0..0)");
  EXPECT_EQ(DecodeQpAddress(std::span(bytes).first(21)).status().message(),
            "QP address record of 21 bytes ends inside qpn (bytes 20..23)");
  EXPECT_EQ(DecodeQpAddress(std::span(bytes).first(36)).status().message(),
            "QP address record of 36 bytes ends before rkey (bytes 36..39)");
}

TEST(QpAddressTest, ExtraBytesAreRefused) {
  std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  bytes.resize(kQpAddressSize + 3);
  StatusOr<QpAddress> decoded = DecodeQpAddress(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "QP address record of 51 bytes has 3 bytes after eager_slot_size (expected 48)");
}

TEST(QpAddressTest, OtherVersionIsRefused) {
  std::vector<std::byte> bytes = EncodeQpAddress(Sample());
  bytes[0] = std::byte{1};  // the format before the eager channel's parameters
  StatusOr<QpAddress> decoded = DecodeQpAddress(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "QP address record of 48 bytes has version 1, expected 2");
}

}  // namespace
}  // namespace rft::verbs
