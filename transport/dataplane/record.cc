#include "transport/dataplane/record.h"

#include <algorithm>
#include <string>

#include "base/byte_order.h"

namespace rft::transport {
namespace {

constexpr size_t kFixedBytes = 6 * 4;
constexpr size_t kVerbsBytes = 2 * 4;
constexpr uint32_t kKnownFlags = DataPlaneRecord::kCmaUsable | DataPlaneRecord::kCmaParentOnly |
                                 DataPlaneRecord::kBlocks | DataPlaneRecord::kVerbs;

}  // namespace

std::vector<std::byte> EncodeDataPlaneRecord(const DataPlaneRecord& record) {
  const bool verbs = (record.flags & DataPlaneRecord::kVerbs) != 0;
  std::vector<std::byte> out(kFixedBytes + (verbs ? kVerbsBytes : 0) + record.ucx_address.size());
  const uint32_t words[] = {record.pid,           record.flags,
                            record.parent,        static_cast<uint32_t>(record.ring_fd),
                            record.ring_capacity, static_cast<uint32_t>(record.wake_fd)};
  size_t at = 0;
  for (uint32_t word : words) {
    StoreLittleEndian<uint32_t>(out, at, word);
    at += 4;
  }
  if (verbs) {
    const VerbsRecordPart part = record.verbs.value_or(VerbsRecordPart{});
    StoreLittleEndian<uint32_t>(out, at, part.credits);
    StoreLittleEndian<uint32_t>(out, at + 4, part.max_payload);
    at += kVerbsBytes;
  }
  std::copy(record.ucx_address.begin(), record.ucx_address.end(),
            out.begin() + static_cast<std::ptrdiff_t>(at));
  return out;
}

StatusOr<DataPlaneRecord> DecodeDataPlaneRecord(std::span<const std::byte> bytes, uint32_t rank) {
  const auto refuse = [&](const std::string& what) {
    return OtherError("rank " + std::to_string(rank) + "'s data-plane record of " +
                      std::to_string(bytes.size()) + " bytes " + what);
  };
  if (bytes.size() < kFixedBytes) {
    return refuse("is shorter than its " + std::to_string(kFixedBytes) + "-byte fixed part");
  }
  DataPlaneRecord record;
  record.pid = LoadLittleEndian<uint32_t>(bytes, 0);
  record.flags = LoadLittleEndian<uint32_t>(bytes, 4);
  record.parent = LoadLittleEndian<uint32_t>(bytes, 8);
  record.ring_fd = static_cast<int32_t>(LoadLittleEndian<uint32_t>(bytes, 12));
  record.ring_capacity = LoadLittleEndian<uint32_t>(bytes, 16);
  record.wake_fd = static_cast<int32_t>(LoadLittleEndian<uint32_t>(bytes, 20));
  if ((record.flags & ~kKnownFlags) != 0) {
    return refuse("has unknown flags " + std::to_string(record.flags & ~kKnownFlags) +
                  ": expected a combination of 1, 2, 4 and 8 (a record of another rft version?)");
  }
  size_t at = kFixedBytes;
  if ((record.flags & DataPlaneRecord::kVerbs) != 0) {
    if (bytes.size() < at + kVerbsBytes) return refuse("ends inside its verbs part");
    record.verbs = VerbsRecordPart{.credits = LoadLittleEndian<uint32_t>(bytes, at),
                                   .max_payload = LoadLittleEndian<uint32_t>(bytes, at + 4)};
    at += kVerbsBytes;
  }
  if (bytes.size() == at) return refuse("has no UCX address after its other parts");
  record.ucx_address.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.end());
  return record;
}

}  // namespace rft::transport
