// The QP address table's codec: what one process publishes and its peers decode, so a table cut
// short, from another format or for another job must be refused by name, never misread.
#include "transport/verbs/qp_address.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace rft::verbs {
namespace {

// Entry i of a context's table: the shared fields, and a QP number and PSN of its own.
QpAddress Sample(uint32_t i = 0) {
  QpAddress a;
  a.lid = 0x1234;
  a.gid_index = 3;
  for (size_t g = 0; g < a.gid.size(); ++g) a.gid[g] = static_cast<uint8_t>(0xf0 + g);
  a.qpn = 0x00abcdef - i;
  a.psn = 0x00123456 + i;
  a.addr = 0x00007f0011223344ull;
  a.rkey = 0xdeadbeef;
  a.eager_credits = 16;
  a.eager_slot_size = 0x00012000;
  return a;
}

std::vector<std::byte> Table(uint32_t entries, uint32_t hole) {
  return EncodeQpAddressTable(entries, hole, [](uint32_t i) { return Sample(i); });
}

TEST(QpAddressTest, EveryEntryRoundTrips) {
  const std::vector<std::byte> bytes = Table(5, 2);
  ASSERT_EQ(bytes.size(), QpAddressTableSize(5));
  ASSERT_EQ(bytes.size(), 44u + 5 * 6);
  for (uint32_t i = 0; i < 5; ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    StatusOr<QpAddress> back = DecodeQpAddressTable(bytes, 5, i);
    if (i == 2) {
      ASSERT_FALSE(back.ok());
      EXPECT_EQ(back.status().message(),
                "QP address table of 74 bytes: entry 2 is a hole (no QP for it)");
      continue;
    }
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, Sample(i));
  }
}

TEST(QpAddressTest, ATableOfOneWithoutAHole) {
  const std::vector<std::byte> bytes = Table(1, kNoHole);
  StatusOr<QpAddress> back = DecodeQpAddressTable(bytes, 1, 0);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Sample(0));
  // The single-address form is that table, byte for byte.
  const std::vector<std::byte> single = EncodeSingleQpAddress(Sample(0));
  EXPECT_EQ(single, bytes);
  EXPECT_EQ(single.size(), kSingleQpAddressSize);
  StatusOr<QpAddress> again = DecodeSingleQpAddress(single);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, Sample(0));
  EXPECT_FALSE(DecodeSingleQpAddress(Table(2, kNoHole)).ok());  // a table of two is not one
}

TEST(QpAddressTest, LittleEndianLayout) {
  const std::vector<std::byte> bytes = Table(2, 0);
  EXPECT_EQ(bytes[0], std::byte{kQpAddressVersion});
  EXPECT_EQ(bytes[1], std::byte{2});     // entries
  EXPECT_EQ(bytes[5], std::byte{0x34});  // lid, low byte first
  EXPECT_EQ(bytes[6], std::byte{0x12});
  EXPECT_EQ(bytes[7], std::byte{3});      // gid_index
  EXPECT_EQ(bytes[8], std::byte{0xf0});   // the GID as the device gives it
  EXPECT_EQ(bytes[32], std::byte{0xef});  // rkey
  EXPECT_EQ(bytes[35], std::byte{0xde});
  EXPECT_EQ(bytes[36], std::byte{16});    // eager_credits
  EXPECT_EQ(bytes[41], std::byte{0x20});  // eager_slot_size's second byte
  EXPECT_EQ(bytes[42], std::byte{0x01});
  for (size_t i = 44; i < 50; ++i) EXPECT_EQ(bytes[i], std::byte{0}) << i;  // the hole
  EXPECT_EQ(bytes[50], std::byte{0xee});  // entry 1's qpn 0xabcdee, 24 bits
  EXPECT_EQ(bytes[52], std::byte{0xab});
  EXPECT_EQ(bytes[53], std::byte{0x57});  // its psn 0x123457
  EXPECT_EQ(bytes[55], std::byte{0x12});
}

// Which header field a table of `size` bytes cuts: the one whose bytes it does not fully hold.
std::string FieldCutAt(size_t size) {
  struct Field {
    const char* name;
    size_t end;  // one past its last byte
  };
  const Field fields[] = {{"version", 1},   {"entries", 5},        {"lid", 7},
                          {"gid_index", 8}, {"gid", 24},           {"addr", 32},
                          {"rkey", 36},     {"eager_credits", 40}, {"eager_slot_size", 44}};
  for (const Field& field : fields) {
    if (size < field.end) return field.name;
  }
  return "";
}

TEST(QpAddressTest, EveryTruncationIsRefused) {
  const std::vector<std::byte> bytes = Table(3, 1);
  for (size_t size = 0; size < bytes.size(); ++size) {
    SCOPED_TRACE("size " + std::to_string(size));
    StatusOr<QpAddress> decoded = DecodeQpAddressTable(std::span(bytes).first(size), 3, 0);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), RFT_ERR_ARG);
    const std::string& message = decoded.status().message();
    EXPECT_NE(message.find("of " + std::to_string(size) + " bytes"), std::string::npos) << message;
    if (size < kQpTableHeaderSize) {
      EXPECT_NE(message.find(" " + FieldCutAt(size) + " (bytes "), std::string::npos) << message;
    } else {
      EXPECT_NE(message.find("3 entries take 62 bytes"), std::string::npos) << message;
    }
  }
}

TEST(QpAddressTest, MessagesNameWhatIsWrong) {
  const std::vector<std::byte> bytes = Table(3, 1);
  EXPECT_EQ(DecodeQpAddressTable(std::span(bytes).first(0), 3, 0).status().message(),
            "QP address table of 0 bytes ends before version (bytes 0..0)");
  EXPECT_EQ(DecodeQpAddressTable(std::span(bytes).first(21), 3, 0).status().message(),
            "QP address table of 21 bytes ends inside gid (bytes 8..23)");
  EXPECT_EQ(DecodeQpAddressTable(std::span(bytes).first(32), 3, 0).status().message(),
            "QP address table of 32 bytes ends before rkey (bytes 32..35)");
  // A table for a job of another size: the reader's job and the publisher's differ.
  EXPECT_EQ(DecodeQpAddressTable(bytes, 4, 0).status().message(),
            "QP address table of 62 bytes has 3 entries, expected 4");
  EXPECT_EQ(DecodeQpAddressTable(bytes, 3, 3).status().message(),
            "QP address table of 62 bytes has no entry 3 (3 entries)");
}

TEST(QpAddressTest, ExtraBytesAreRefused) {
  std::vector<std::byte> bytes = Table(3, 1);
  bytes.resize(bytes.size() + 3);
  EXPECT_EQ(DecodeQpAddressTable(bytes, 3, 0).status().message(),
            "QP address table of 65 bytes: 3 entries take 62 bytes");
}

TEST(QpAddressTest, OtherVersionIsRefused) {
  std::vector<std::byte> bytes = Table(3, 1);
  bytes[0] = std::byte{2};  // the format of one 48-byte record per peer
  EXPECT_EQ(DecodeQpAddressTable(bytes, 3, 0).status().message(),
            "QP address table of 62 bytes has version 2, expected 3");
}

TEST(QpAddressTest, EntriesOfDifferentContextsAreABug) {
  EXPECT_DEATH(EncodeQpAddressTable(2, kNoHole,
                                    [](uint32_t i) {
                                      QpAddress a = Sample(i);
                                      a.rkey += i;  // another registration
                                      return a;
                                    }),
               "entries of different contexts");
}

}  // namespace
}  // namespace rft::verbs
