#include "transport/wire/wire_header.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace rft::transport {
namespace {

constexpr uint32_t kToken = 0xC0FFEE11;
constexpr uint32_t kJobSize = 64;

std::vector<std::byte> Message(const WireHeader& header, size_t payload) {
  std::vector<std::byte> bytes(kWireHeaderSize + payload, std::byte{0x5a});
  EncodeHeader(header, std::span<std::byte, kWireHeaderSize>(bytes.data(), kWireHeaderSize));
  return bytes;
}

WireHeader Valid(size_t payload = 3) {
  WireHeader h;
  h.type = MessageType::kEager;
  h.flags = 0x0102;
  h.source = 5;
  h.context_id = 0x01020304;
  h.epoch = 9;
  h.tag = 77;
  h.length = payload;
  h.job_token = kToken;
  return h;
}

TEST(WireHeaderTest, GoldenBytes) {
  // The wire format must not drift silently: this is the byte layout peers of every version
  // 1 implementation agree on.
  WireHeader h;
  h.type = MessageType::kRendezvousRequest;
  h.flags = 0xA1B2;
  h.source = 0x01020304;
  h.context_id = 0x0A0B0C0D;
  h.epoch = 0x11223344;
  h.tag = -2;  // encodes as two's complement (decoding rejects it; encoding is total)
  h.length = 0x0102030405060708;
  h.job_token = 0xDEADBEEF;
  std::array<std::byte, kWireHeaderSize> out{};
  EncodeHeader(h, out);
  const uint8_t expected[kWireHeaderSize] = {0x01, 0x02, 0xB2, 0xA1, 0x04, 0x03, 0x02, 0x01,
                                             0x0D, 0x0C, 0x0B, 0x0A, 0x44, 0x33, 0x22, 0x11,
                                             0xFE, 0xFF, 0xFF, 0xFF, 0x08, 0x07, 0x06, 0x05,
                                             0x04, 0x03, 0x02, 0x01, 0xEF, 0xBE, 0xAD, 0xDE};
  for (size_t i = 0; i < kWireHeaderSize; ++i) {
    EXPECT_EQ(static_cast<uint8_t>(out[i]), expected[i]) << "byte " << i;
  }
}

TEST(WireHeaderTest, RandomHeadersRoundTrip) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 10000; ++i) {
    WireHeader h;
    h.type = static_cast<MessageType>(1 + rng() % 6);
    h.flags = static_cast<uint16_t>(rng());
    h.source = static_cast<uint32_t>(rng() % kJobSize);
    h.context_id = static_cast<uint32_t>(rng());
    h.epoch = static_cast<uint32_t>(rng());
    h.tag = static_cast<int32_t>(rng() & 0x7fffffff);
    h.length = rng() % 5000;
    h.job_token = kToken;
    auto bytes = Message(h, h.length);
    WireHeader decoded;
    ASSERT_EQ(DecodeMessage(bytes, kToken, kJobSize, &decoded), DecodeError::kNone);
    ASSERT_EQ(decoded, h);
    // The separate-payload form agrees.
    WireHeader split;
    ASSERT_EQ(
        DecodeHeader(std::span(bytes).first(kWireHeaderSize), h.length, kToken, kJobSize, &split),
        DecodeError::kNone);
    ASSERT_EQ(split, h);
  }
}

TEST(WireHeaderTest, EveryFieldIsValidated) {
  WireHeader out;
  const WireHeader sentinel = Valid(99);
  auto expect = [&](std::vector<std::byte> bytes, DecodeError error) {
    out = sentinel;
    EXPECT_EQ(DecodeMessage(bytes, kToken, kJobSize, &out), error) << DecodeErrorName(error);
    if (error != DecodeError::kNone) {
      EXPECT_EQ(out, sentinel) << "written despite an error";
    }
  };
  expect(Message(Valid(), 3), DecodeError::kNone);
  WireHeader h = Valid();
  h.version = 2;
  expect(Message(h, 3), DecodeError::kBadVersion);
  for (uint8_t bad : {0, 13, 255}) {
    h = Valid();
    h.type = static_cast<MessageType>(bad);
    expect(Message(h, 3), DecodeError::kUnknownType);
  }
  expect(Message(Valid(3), 2), DecodeError::kLengthMismatch);
  expect(Message(Valid(3), 4), DecodeError::kLengthMismatch);
  h = Valid();
  h.length = UINT64_MAX;  // a length that would overflow naive arithmetic
  expect(Message(h, 3), DecodeError::kLengthMismatch);
  h = Valid();
  h.job_token = kToken + 1;
  expect(Message(h, 3), DecodeError::kForeignJob);
  h = Valid();
  h.source = kJobSize;
  expect(Message(h, 3), DecodeError::kBadSource);
  h = Valid();
  h.tag = -1;
  expect(Message(h, 3), DecodeError::kBadTag);
  // A header span of the wrong size is refused too.
  auto bytes = Message(Valid(0), 0);
  bytes.push_back(std::byte{0});
  EXPECT_EQ(DecodeHeader(bytes, 0, kToken, kJobSize, &out), DecodeError::kLengthMismatch);
}

TEST(WireHeaderTest, EveryTruncationIsTooShort) {
  const auto full = Message(Valid(0), 0);
  for (size_t n = 0; n < kWireHeaderSize; ++n) {
    WireHeader out;
    EXPECT_EQ(DecodeMessage(std::span(full).first(n), kToken, kJobSize, &out),
              DecodeError::kTooShort)
        << n << " bytes";
  }
}

TEST(WireHeaderTest, RandomBytesNeverCrashAndOnlyValidHeadersPass) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    std::vector<std::byte> bytes(rng() % 101);
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
    // Bias some inputs towards almost-valid headers so the later checks are reached.
    if (bytes.size() >= kWireHeaderSize && rng() % 2 == 0) {
      WireHeader h = Valid(bytes.size() - kWireHeaderSize);
      h.type = static_cast<MessageType>(rng() % 14);
      h.source = static_cast<uint32_t>(rng() % (kJobSize + 2));
      h.tag = static_cast<int32_t>(rng() % 3) - 1;
      if (rng() % 8 == 0) h.job_token = static_cast<uint32_t>(rng());
      EncodeHeader(h, std::span<std::byte, kWireHeaderSize>(bytes.data(), kWireHeaderSize));
    }
    WireHeader out;
    if (DecodeMessage(bytes, kToken, kJobSize, &out) == DecodeError::kNone) {
      ++accepted;
      ASSERT_EQ(out.version, kWireVersion);
      ASSERT_GE(static_cast<int>(out.type), 1);
      ASSERT_LE(static_cast<int>(out.type), static_cast<int>(MessageType::kVerbsClosed));
      ASSERT_EQ(out.length, bytes.size() - kWireHeaderSize);
      ASSERT_EQ(out.job_token, kToken);
      ASSERT_LT(out.source, kJobSize);
      ASSERT_GE(out.tag, 0);
    }
  }
  EXPECT_GT(accepted, 1000);  // the biased inputs do reach acceptance
}

TEST(DropCountersTest, CountsByReason) {
  DropCounters counters;
  EXPECT_EQ(counters.total(), 0u);
  counters.Record(DecodeError::kForeignJob);
  counters.Record(DecodeError::kForeignJob);
  counters.Record(DecodeError::kTooShort);
  EXPECT_EQ(counters.count(DecodeError::kForeignJob), 2u);
  EXPECT_EQ(counters.count(DecodeError::kTooShort), 1u);
  EXPECT_EQ(counters.count(DecodeError::kBadTag), 0u);
  EXPECT_EQ(counters.total(), 3u);
  for (int e = 0; e < static_cast<int>(DecodeError::kCount); ++e) {
    EXPECT_STRNE(DecodeErrorName(static_cast<DecodeError>(e)), "unknown");
  }
}

}  // namespace
}  // namespace rft::transport
