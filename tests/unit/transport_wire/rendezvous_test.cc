#include "transport/wire/rendezvous.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <random>
#include <vector>

namespace rft::transport {
namespace {

TEST(RendezvousDescriptorTest, GoldenBytesAreLittleEndian) {
  RendezvousDescriptor descriptor{
      .address = 0x0102030405060708, .length = 0x1122, .cookie = 0xAABBCCDD, .sequence = 7};
  std::array<std::byte, kRendezvousDescriptorSize> bytes;
  EncodeRendezvousDescriptor(descriptor, bytes);
  EXPECT_EQ(bytes[0], std::byte{0x08});
  EXPECT_EQ(bytes[7], std::byte{0x01});
  EXPECT_EQ(bytes[8], std::byte{0x22});
  EXPECT_EQ(bytes[9], std::byte{0x11});
  EXPECT_EQ(bytes[16], std::byte{0xDD});
  EXPECT_EQ(bytes[24], std::byte{7});
  RendezvousDescriptor decoded;
  ASSERT_TRUE(DecodeRendezvousDescriptor(bytes, &decoded));
  EXPECT_EQ(decoded, descriptor);
}

TEST(RendezvousDescriptorTest, RandomValuesRoundTrip) {
  std::mt19937_64 random(42);
  for (int i = 0; i < 1000; ++i) {
    RendezvousDescriptor descriptor{random(), random(), random(), random()};
    std::array<std::byte, kRendezvousDescriptorSize> bytes;
    EncodeRendezvousDescriptor(descriptor, bytes);
    RendezvousDescriptor decoded;
    ASSERT_TRUE(DecodeRendezvousDescriptor(bytes, &decoded));
    ASSERT_EQ(decoded, descriptor);
  }
}

TEST(RendezvousDescriptorTest, ANonZeroReservedWordIsRejected) {
  RendezvousDescriptor descriptor{.address = 1, .length = 2, .cookie = 3, .sequence = 4, .rkey = 5};
  std::array<std::byte, kRendezvousDescriptorSize> bytes;
  EncodeRendezvousDescriptor(descriptor, bytes);
  EXPECT_EQ(bytes[32], std::byte{5});
  bytes[38] = std::byte{1};
  RendezvousDescriptor decoded;
  EXPECT_FALSE(DecodeRendezvousDescriptor(bytes, &decoded));
}

TEST(RendezvousDescriptorTest, EveryOtherSizeIsRejectedAndLeavesTheOutputAlone) {
  std::vector<std::byte> bytes(kRendezvousDescriptorSize + 8, std::byte{0x5A});
  for (size_t size = 0; size <= bytes.size(); ++size) {
    if (size == kRendezvousDescriptorSize) continue;
    RendezvousDescriptor decoded{.address = 1, .length = 2, .cookie = 3, .sequence = 4};
    EXPECT_FALSE(DecodeRendezvousDescriptor(std::span(bytes).first(size), &decoded)) << size;
    EXPECT_EQ(decoded, (RendezvousDescriptor{1, 2, 3, 4}));
  }
}

TEST(RendezvousDoneTest, RoundTripsAndRejectsOtherSizes) {
  RendezvousDone done{.cookie = 0xFEEDFACECAFEBEEF, .sequence = 99};
  std::array<std::byte, kRendezvousDoneSize> bytes;
  EncodeRendezvousDone(done, bytes);
  RendezvousDone decoded;
  ASSERT_TRUE(DecodeRendezvousDone(bytes, &decoded));
  EXPECT_EQ(decoded, done);
  for (size_t size : {size_t{0}, size_t{8}, size_t{15}}) {
    EXPECT_FALSE(DecodeRendezvousDone(std::span<const std::byte>(bytes).first(size), &decoded));
  }
  std::array<std::byte, kRendezvousDoneSize + 1> longer{};
  EXPECT_FALSE(DecodeRendezvousDone(longer, &decoded));
}

}  // namespace
}  // namespace rft::transport
