#include "base/byte_order.h"

#include <array>
#include <cstdint>

#include "gtest/gtest.h"

namespace rft {
namespace {

// The layout is fixed whatever the host: least significant byte first, at the given offset.
TEST(ByteOrderTest, StoresLeastSignificantByteFirstAtTheOffset) {
  std::array<std::byte, 16> bytes{};
  StoreLittleEndian<uint32_t>(bytes, 1, 0x11223344u);
  StoreLittleEndian<uint64_t>(bytes, 5, 0x0102030405060708ull);
  StoreLittleEndian<uint16_t>(bytes, 13, 0xa1b2);
  const std::array<uint8_t, 16> want = {0x00, 0x44, 0x33, 0x22, 0x11, 0x08, 0x07, 0x06,
                                        0x05, 0x04, 0x03, 0x02, 0x01, 0xb2, 0xa1, 0x00};
  for (size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_EQ(static_cast<uint8_t>(bytes[i]), want[i]) << "byte " << i;
  }
}

TEST(ByteOrderTest, LoadsWhatWasStored) {
  std::array<std::byte, 15> bytes{};
  StoreLittleEndian<uint8_t>(bytes, 0, 0xfe);
  StoreLittleEndian<int16_t>(bytes, 1, -2);
  StoreLittleEndian<int32_t>(bytes, 3, -123456789);
  StoreLittleEndian<uint64_t>(bytes, 7, UINT64_MAX - 1);
  const std::span<const std::byte> in(bytes);
  EXPECT_EQ(LoadLittleEndian<uint8_t>(in, 0), 0xfe);
  EXPECT_EQ(LoadLittleEndian<int16_t>(in, 1), -2);
  EXPECT_EQ(LoadLittleEndian<int32_t>(in, 3), -123456789);
  EXPECT_EQ(LoadLittleEndian<uint64_t>(in, 7), UINT64_MAX - 1);
}

}  // namespace
}  // namespace rft
