// Fuzzes the verbs QP address table's decoder (transport/verbs/qp_address.h): every rank decodes
// the tables each other rank published through the launcher, and connects a QP to what it reads.
//
// Input: a u32 entry count (taken modulo 4097: the reader's job size), a u32 index (modulo the
// count + 1, so that an index past the end is tried too), then the table's bytes. Properties:
// - a decoder that refuses says RFT_ERR_ARG with a message;
// - an accepted entry comes from a table of exactly the header plus its entries, has a QP number
//   that is neither 0 (a hole) nor beyond 24 bits, and a PSN within 24 bits;
// - encoding the entry as a table of one and decoding that gives the same address.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "fuzz/fuzz_check.h"
#include "transport/verbs/qp_address.h"

using rft::verbs::DecodeQpAddressTable;
using rft::verbs::EncodeQpAddressTable;
using rft::verbs::QpAddress;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t entries = 0;
  uint32_t index = 0;
  std::memcpy(&entries, data, 4);
  std::memcpy(&index, data + 4, 4);
  entries %= 4097;
  index %= entries + 1;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data) + 8, size - 8);
  auto decoded = DecodeQpAddressTable(bytes, entries, index);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_ARG && !decoded.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(bytes.size() == rft::verbs::QpAddressTableSize(entries) && index < entries);
  FUZZ_CHECK(decoded->qpn != 0 && decoded->qpn <= 0xffffff && decoded->psn <= 0xffffff);
  const std::vector<std::byte> one =
      EncodeQpAddressTable(1, rft::verbs::kNoHole, [&](uint32_t) { return *decoded; });
  auto again = DecodeQpAddressTable(one, 1, 0);
  FUZZ_CHECK(again.ok() && *again == *decoded);
  return 0;
}
