// The control plane's published record: a round trip, and every malformed record refused with
// a message that names the rank and the field.
#include "detector/peer_record.h"

#include <gtest/gtest.h>

#include <cstring>

namespace rft::detector {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> bytes;
  for (int v : values) bytes.push_back(static_cast<std::byte>(v));
  return bytes;
}

TEST(PeerRecordTest, RoundTripsWithAndWithoutASegmentASocketOrHeartbeatQps) {
  PeerRecord record{.pid = 4242,
                    .region_descriptor = Bytes({1, 2, 3}),
                    .death_watch_segment = "/rft-0000abcd-3-0123456789abcdef",
                    .control_socket = "rft.0000abcd00005eed.3",
                    .verbs_qps = Bytes({5, 5, 5, 5, 5}),
                    .worker_address = Bytes({9, 8, 7, 6})};
  auto decoded = DecodePeerRecord(EncodePeerRecord(record), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  record.verbs_qps.clear();
  decoded = DecodePeerRecord(EncodePeerRecord(record), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  record.death_watch_segment.clear();
  decoded = DecodePeerRecord(EncodePeerRecord(record), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  record.control_socket.clear();
  decoded = DecodePeerRecord(EncodePeerRecord(record), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
}

TEST(PeerRecordTest, MalformedRecordsAreRefusedByName) {
  PeerRecord record{.pid = 1,
                    .region_descriptor = Bytes({1}),
                    .death_watch_segment = "",
                    .control_socket = "",
                    .verbs_qps = {},
                    .worker_address = Bytes({2})};
  std::vector<std::byte> good = EncodePeerRecord(record);

  auto short_record = DecodePeerRecord(std::span(good).first(15), 5);
  EXPECT_EQ(short_record.status().code(), RFT_ERR_OTHER);
  EXPECT_NE(short_record.status().message().find("rank 5 published 15 bytes"), std::string::npos)
      << short_record.status().ToString();

  std::vector<std::byte> long_socket = good;
  const uint32_t too_long = 108;
  std::memcpy(long_socket.data() + 12, &too_long, 4);
  auto socket = DecodePeerRecord(long_socket, 5);
  EXPECT_NE(socket.status().message().find("control socket name of 108 bytes"), std::string::npos)
      << socket.status().ToString();

  std::vector<std::byte> huge_qps = good;
  const uint32_t qps = 0x7fffffffu;
  std::memcpy(huge_qps.data() + 16, &qps, 4);
  auto too_many = DecodePeerRecord(huge_qps, 5);
  EXPECT_NE(too_many.status().message().find("verbs QP addresses of 2147483647 bytes"),
            std::string::npos)
      << too_many.status().ToString();
  const uint32_t overrun = 1;  // as many bytes as the address: none left for it
  std::memcpy(huge_qps.data() + 16, &overrun, 4);
  auto no_room = DecodePeerRecord(huge_qps, 5);
  EXPECT_NE(no_room.status().message().find("1 bytes of verbs QP addresses"), std::string::npos)
      << no_room.status().ToString();

  std::vector<std::byte> no_address = good;
  no_address.pop_back();
  auto missing = DecodePeerRecord(no_address, 5);
  EXPECT_NE(missing.status().message().find("worker address"), std::string::npos)
      << missing.status().ToString();

  std::vector<std::byte> huge = good;
  const uint32_t lots = 0xffffffffu;
  std::memcpy(huge.data() + 4, &lots, 4);  // descriptor length
  std::memcpy(huge.data() + 8, &lots, 4);  // name length: would wrap a 32-bit sum
  auto wraps = DecodePeerRecord(huge, 5);
  EXPECT_EQ(wraps.status().code(), RFT_ERR_OTHER);
  EXPECT_NE(wraps.status().message().find("segment name of 4294967295 bytes"), std::string::npos)
      << wraps.status().ToString();
  const uint32_t fits = 0;
  std::memcpy(huge.data() + 8, &fits, 4);
  auto descriptor = DecodePeerRecord(huge, 5);
  EXPECT_NE(descriptor.status().message().find("4294967295-byte region descriptor"),
            std::string::npos)
      << descriptor.status().ToString();
}

}  // namespace
}  // namespace rft::detector
