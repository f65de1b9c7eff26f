#include "transport/verbs/qp_address.h"

#include <cstring>
#include <string>

#include "base/byte_order.h"

namespace rft::verbs {
namespace {

// The fields in wire order: one table drives both the offsets and the truncation messages.
struct Field {
  const char* name;
  size_t size;
};
constexpr Field kFields[] = {
    {"version", 1}, {"lid", 2},  {"gid_index", 1}, {"gid", 16},          {"qpn", 4},
    {"psn", 4},     {"addr", 8}, {"rkey", 4},      {"eager_credits", 4}, {"eager_slot_size", 4}};
constexpr const char* kLastField = "eager_slot_size";

constexpr size_t TotalSize() {
  size_t total = 0;
  for (const Field& field : kFields) total += field.size;
  return total;
}
static_assert(TotalSize() == kQpAddressSize, "kQpAddressSize must match the field table");

}  // namespace

std::vector<std::byte> EncodeQpAddress(const QpAddress& address) {
  std::vector<std::byte> out(kQpAddressSize);
  std::span<std::byte> bytes(out);
  StoreLittleEndian<uint8_t>(bytes, 0, kQpAddressVersion);
  StoreLittleEndian<uint16_t>(bytes, 1, address.lid);
  StoreLittleEndian<uint8_t>(bytes, 3, address.gid_index);
  std::memcpy(out.data() + 4, address.gid.data(), address.gid.size());  // network order as is
  StoreLittleEndian<uint32_t>(bytes, 20, address.qpn);
  StoreLittleEndian<uint32_t>(bytes, 24, address.psn);
  StoreLittleEndian<uint64_t>(bytes, 28, address.addr);
  StoreLittleEndian<uint32_t>(bytes, 36, address.rkey);
  StoreLittleEndian<uint32_t>(bytes, 40, address.eager_credits);
  StoreLittleEndian<uint32_t>(bytes, 44, address.eager_slot_size);
  return out;
}

StatusOr<QpAddress> DecodeQpAddress(std::span<const std::byte> bytes) {
  const std::string what = "QP address record of " + std::to_string(bytes.size()) + " bytes";
  size_t offset = 0;
  for (const Field& field : kFields) {
    if (bytes.size() < offset + field.size) {
      return ArgError(what + (bytes.size() == offset ? " ends before " : " ends inside ") +
                      field.name + " (bytes " + std::to_string(offset) + ".." +
                      std::to_string(offset + field.size - 1) + ")");
    }
    offset += field.size;
  }
  if (bytes.size() > kQpAddressSize) {
    return ArgError(what + " has " + std::to_string(bytes.size() - kQpAddressSize) +
                    " bytes after " + kLastField + " (expected " + std::to_string(kQpAddressSize) +
                    ")");
  }
  const auto version = LoadLittleEndian<uint8_t>(bytes, 0);
  if (version != kQpAddressVersion) {
    return ArgError(what + " has version " + std::to_string(version) + ", expected " +
                    std::to_string(kQpAddressVersion));
  }
  QpAddress address;
  address.lid = LoadLittleEndian<uint16_t>(bytes, 1);
  address.gid_index = LoadLittleEndian<uint8_t>(bytes, 3);
  std::memcpy(address.gid.data(), bytes.data() + 4, address.gid.size());
  address.qpn = LoadLittleEndian<uint32_t>(bytes, 20);
  address.psn = LoadLittleEndian<uint32_t>(bytes, 24);
  address.addr = LoadLittleEndian<uint64_t>(bytes, 28);
  address.rkey = LoadLittleEndian<uint32_t>(bytes, 36);
  address.eager_credits = LoadLittleEndian<uint32_t>(bytes, 40);
  address.eager_slot_size = LoadLittleEndian<uint32_t>(bytes, 44);
  return address;
}

}  // namespace rft::verbs
