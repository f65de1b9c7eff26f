#include "transport/verbs/qp_address.h"

#include <cstring>
#include <string>

#include "base/byte_order.h"
#include "base/check.h"

namespace rft::verbs {
namespace {

// The header's fields in wire order: one table drives the offsets and the truncation messages.
struct Field {
  const char* name;
  size_t size;
};
constexpr Field kHeaderFields[] = {{"version", 1},   {"entries", 4},       {"lid", 2},
                                   {"gid_index", 1}, {"gid", 16},          {"addr", 8},
                                   {"rkey", 4},      {"eager_credits", 4}, {"eager_slot_size", 4}};

constexpr size_t HeaderSize() {
  size_t total = 0;
  for (const Field& field : kHeaderFields) total += field.size;
  return total;
}
static_assert(HeaderSize() == kQpTableHeaderSize, "kQpTableHeaderSize must match the fields");

constexpr uint32_t k24Bits = 0xffffff;

// Whether two addresses share what a table's header holds once.
bool SameHeader(const QpAddress& a, const QpAddress& b) {
  return a.lid == b.lid && a.gid_index == b.gid_index && a.gid == b.gid && a.addr == b.addr &&
         a.rkey == b.rkey && a.eager_credits == b.eager_credits &&
         a.eager_slot_size == b.eager_slot_size;
}

void Store24(std::span<std::byte> bytes, size_t at, uint32_t value) {
  for (size_t i = 0; i < 3; ++i) bytes[at + i] = static_cast<std::byte>(value >> (8 * i));
}

uint32_t Load24(std::span<const std::byte> bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 3; ++i) value |= std::to_integer<uint32_t>(bytes[at + i]) << (8 * i);
  return value;
}

}  // namespace

std::vector<std::byte> EncodeQpAddressTable(uint32_t entries, uint32_t hole,
                                            const std::function<QpAddress(uint32_t)>& address_for) {
  std::vector<std::byte> out(QpAddressTableSize(entries));
  std::span<std::byte> bytes(out);
  bool have_header = false;
  QpAddress header;
  for (uint32_t i = 0; i < entries; ++i) {
    if (i == hole) continue;
    const QpAddress address = address_for(i);
    if (!have_header) {
      header = address;
      have_header = true;
    }
    RFT_CHECK(SameHeader(address, header), "QP address table: entries of different contexts");
    RFT_CHECK(address.qpn != 0 && address.qpn <= k24Bits && address.psn <= k24Bits,
              "QP address table: a QP number or PSN beyond 24 bits");
    Store24(bytes, kQpTableHeaderSize + i * kQpTableEntrySize, address.qpn);
    Store24(bytes, kQpTableHeaderSize + i * kQpTableEntrySize + 3, address.psn);
  }
  StoreLittleEndian<uint8_t>(bytes, 0, kQpAddressVersion);
  StoreLittleEndian<uint32_t>(bytes, 1, entries);
  StoreLittleEndian<uint16_t>(bytes, 5, header.lid);
  StoreLittleEndian<uint8_t>(bytes, 7, header.gid_index);
  std::memcpy(out.data() + 8, header.gid.data(), header.gid.size());  // network order as is
  StoreLittleEndian<uint64_t>(bytes, 24, header.addr);
  StoreLittleEndian<uint32_t>(bytes, 32, header.rkey);
  StoreLittleEndian<uint32_t>(bytes, 36, header.eager_credits);
  StoreLittleEndian<uint32_t>(bytes, 40, header.eager_slot_size);
  return out;
}

StatusOr<QpAddress> DecodeQpAddressTable(std::span<const std::byte> bytes, uint32_t entries,
                                         uint32_t index) {
  const std::string what = "QP address table of " + std::to_string(bytes.size()) + " bytes";
  size_t offset = 0;
  for (const Field& field : kHeaderFields) {
    if (bytes.size() < offset + field.size) {
      return ArgError(what + (bytes.size() == offset ? " ends before " : " ends inside ") +
                      field.name + " (bytes " + std::to_string(offset) + ".." +
                      std::to_string(offset + field.size - 1) + ")");
    }
    offset += field.size;
  }
  const auto version = LoadLittleEndian<uint8_t>(bytes, 0);
  if (version != kQpAddressVersion) {
    return ArgError(what + " has version " + std::to_string(version) + ", expected " +
                    std::to_string(kQpAddressVersion));
  }
  const auto has = LoadLittleEndian<uint32_t>(bytes, 1);
  if (has != entries) {
    return ArgError(what + " has " + std::to_string(has) + " entries, expected " +
                    std::to_string(entries));
  }
  if (bytes.size() != QpAddressTableSize(entries)) {
    return ArgError(what + ": " + std::to_string(entries) + " entries take " +
                    std::to_string(QpAddressTableSize(entries)) + " bytes");
  }
  if (index >= entries) {
    return ArgError(what + " has no entry " + std::to_string(index) + " (" +
                    std::to_string(entries) + " entries)");
  }
  QpAddress address;
  address.lid = LoadLittleEndian<uint16_t>(bytes, 5);
  address.gid_index = LoadLittleEndian<uint8_t>(bytes, 7);
  std::memcpy(address.gid.data(), bytes.data() + 8, address.gid.size());
  address.addr = LoadLittleEndian<uint64_t>(bytes, 24);
  address.rkey = LoadLittleEndian<uint32_t>(bytes, 32);
  address.eager_credits = LoadLittleEndian<uint32_t>(bytes, 36);
  address.eager_slot_size = LoadLittleEndian<uint32_t>(bytes, 40);
  address.qpn = Load24(bytes, kQpTableHeaderSize + index * kQpTableEntrySize);
  address.psn = Load24(bytes, kQpTableHeaderSize + index * kQpTableEntrySize + 3);
  if (address.qpn == 0) {
    return ArgError(what + ": entry " + std::to_string(index) + " is a hole (no QP for it)");
  }
  return address;
}

std::vector<std::byte> EncodeSingleQpAddress(const QpAddress& address) {
  return EncodeQpAddressTable(1, kNoHole, [&](uint32_t) { return address; });
}

StatusOr<QpAddress> DecodeSingleQpAddress(std::span<const std::byte> bytes) {
  return DecodeQpAddressTable(bytes, 1, 0);
}

}  // namespace rft::verbs
