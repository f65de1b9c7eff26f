// Fuzzes the wire header decoder (transport/wire/wire_header.h), the first code that touches
// every byte a peer sends.
//
// Input: job_token (4 bytes LE), job_size (4 bytes LE), then one contiguous message (header and
// payload). Properties:
// - DecodeMessage returns exactly the error an independent byte-by-byte reading of
//   docs/wire_format.md predicts, in the documented check order;
// - `*out` is written only on success, and an accepted header has every field in bounds and
//   re-encodes to the very bytes it came from;
// - DecodeHeader given more or fewer than 32 header bytes never accepts;
// - a header built from the input and made valid survives EncodeHeader -> DecodeHeader intact.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string>

#include "fuzz/fuzz_check.h"
#include "transport/wire/wire_header.h"

namespace {

using rft::transport::DecodeError;
using rft::transport::DecodeErrorName;
using rft::transport::DecodeHeader;
using rft::transport::DecodeMessage;
using rft::transport::EncodeHeader;
using rft::transport::kWireHeaderSize;
using rft::transport::kWireVersion;
using rft::transport::MessageType;
using rft::transport::WireHeader;

// Byte-by-byte little-endian read, deliberately not the memcpy loads of the code under test.
uint64_t ReadLe(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// What docs/wire_format.md ("Validation") says the receiver must answer, check by check.
DecodeError Expected(const uint8_t* m, size_t size, uint32_t job_token, uint32_t job_size) {
  if (size < kWireHeaderSize) return DecodeError::kTooShort;
  if (m[0] != kWireVersion) return DecodeError::kBadVersion;
  if (m[1] < 1 || m[1] > 12) return DecodeError::kUnknownType;  // types 1..12
  if (ReadLe(m + 20, 8) != size - kWireHeaderSize) return DecodeError::kLengthMismatch;
  if (ReadLe(m + 28, 4) != job_token) return DecodeError::kForeignJob;
  if (ReadLe(m + 4, 4) >= job_size) return DecodeError::kBadSource;
  if (ReadLe(m + 16, 4) >= 0x80000000u) return DecodeError::kBadTag;
  return DecodeError::kNone;
}

// A header no decoder may produce, to see whether a failed decode wrote anything.
WireHeader Sentinel() {
  WireHeader h;
  h.version = 0xee;
  h.type = static_cast<MessageType>(0xee);
  h.flags = 0xeeee;
  h.source = 0xeeeeeeee;
  h.context_id = 0xeeeeeeee;
  h.epoch = 0xeeeeeeee;
  h.tag = -0x11111112;
  h.length = 0xeeeeeeeeeeeeeeee;
  h.job_token = 0xeeeeeeee;
  return h;
}

void CheckErrorNames() {
  std::set<std::string> names;
  for (int i = 0; i < static_cast<int>(DecodeError::kCount); ++i) {
    const char* name = DecodeErrorName(static_cast<DecodeError>(i));
    FUZZ_CHECK(name != nullptr && std::string(name) != "unknown");
    names.insert(name);
  }
  // Drop counters are reported by name: two reasons sharing one would be indistinguishable.
  FUZZ_CHECK(names.size() == static_cast<size_t>(DecodeError::kCount));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool names_checked = (CheckErrorNames(), true);
  (void)names_checked;
  if (size < 8) return 0;
  const auto job_token = static_cast<uint32_t>(ReadLe(data, 4));
  const auto job_size = static_cast<uint32_t>(ReadLe(data + 4, 4));
  const uint8_t* m = data + 8;
  const size_t m_size = size - 8;
  const auto message = std::as_bytes(std::span<const uint8_t>(m, m_size));

  WireHeader out = Sentinel();
  const DecodeError error = DecodeMessage(message, job_token, job_size, &out);
  FUZZ_CHECK(error == Expected(m, m_size, job_token, job_size));
  if (error != DecodeError::kNone) {
    FUZZ_CHECK(out == Sentinel());
  } else {
    FUZZ_CHECK(out.version == kWireVersion);
    FUZZ_CHECK(static_cast<uint8_t>(out.type) >= 1 && static_cast<uint8_t>(out.type) <= 12);
    FUZZ_CHECK(out.length == m_size - kWireHeaderSize);
    FUZZ_CHECK(out.job_token == job_token);
    FUZZ_CHECK(out.source < job_size);
    FUZZ_CHECK(out.tag >= 0);
    std::byte again[kWireHeaderSize];
    EncodeHeader(out, std::span<std::byte, kWireHeaderSize>(again));
    FUZZ_CHECK(std::memcmp(again, m, kWireHeaderSize) == 0);
  }

  // The separate-payload form: a header span of the wrong size is never a header.
  if (m_size != kWireHeaderSize) {
    WireHeader wrong = Sentinel();
    const DecodeError e = DecodeHeader(message, 0, job_token, job_size, &wrong);
    FUZZ_CHECK(e ==
               (m_size < kWireHeaderSize ? DecodeError::kTooShort : DecodeError::kLengthMismatch));
    FUZZ_CHECK(wrong == Sentinel());
  }

  // Encoder round trip: take the fields from the message bytes and force them valid.
  if (m_size >= kWireHeaderSize && job_size > 0) {
    WireHeader h;
    h.version = kWireVersion;
    h.type = static_cast<MessageType>(m[1] % 12 + 1);
    h.flags = static_cast<uint16_t>(ReadLe(m + 2, 2));
    h.source = static_cast<uint32_t>(ReadLe(m + 4, 4)) % job_size;
    h.context_id = static_cast<uint32_t>(ReadLe(m + 8, 4));
    h.epoch = static_cast<uint32_t>(ReadLe(m + 12, 4));
    h.tag = static_cast<int32_t>(ReadLe(m + 16, 4) & 0x7fffffff);
    h.length = ReadLe(m + 20, 8);
    h.job_token = job_token;
    std::byte encoded[kWireHeaderSize];
    EncodeHeader(h, std::span<std::byte, kWireHeaderSize>(encoded));
    WireHeader decoded = Sentinel();
    FUZZ_CHECK(DecodeHeader(encoded, h.length, job_token, job_size, &decoded) ==
               DecodeError::kNone);
    FUZZ_CHECK(decoded == h);
    // The claimed length is compared, never used: a payload one byte off is a mismatch even at
    // the extremes of uint64_t.
    WireHeader off = Sentinel();
    FUZZ_CHECK(DecodeHeader(encoded, h.length + 1, job_token, job_size, &off) ==
               DecodeError::kLengthMismatch);
    FUZZ_CHECK(off == Sentinel());
  }
  return 0;
}
