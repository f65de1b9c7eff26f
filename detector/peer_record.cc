#include "detector/peer_record.h"

#include <cstring>

#include "base/byte_order.h"

namespace rft::detector {
namespace {
constexpr size_t kFixedSize = 20;
// Longer than any name DeathWatch or LocalDatagramChannel makes; a bound so a bad record cannot
// ask for much.
constexpr size_t kMaxSegmentName = 255;
constexpr size_t kMaxSocketName = 107;  // sockaddr_un's path, less the abstract name's NUL
// The heartbeats' part (16 bytes and a QP address table) and the control messages' (4 bytes and
// a table), tables of up to 2^20 ranks: 44 bytes and 6 per rank (transport/verbs/qp_address.h).
constexpr size_t kMaxHeartbeatQps = 2 * (16 + 44 + (size_t{6} << 20));
}  // namespace

std::vector<std::byte> EncodePeerRecord(const PeerRecord& record) {
  const uint32_t descriptor_size = static_cast<uint32_t>(record.region_descriptor.size());
  const uint32_t name_size = static_cast<uint32_t>(record.death_watch_segment.size());
  const uint32_t socket_size = static_cast<uint32_t>(record.control_socket.size());
  const uint32_t qps_size = static_cast<uint32_t>(record.verbs_qps.size());
  std::vector<std::byte> bytes(kFixedSize + descriptor_size + name_size + socket_size + qps_size +
                               record.worker_address.size());
  StoreLittleEndian<uint32_t>(bytes, 0, record.pid);
  StoreLittleEndian<uint32_t>(bytes, 4, descriptor_size);
  StoreLittleEndian<uint32_t>(bytes, 8, name_size);
  StoreLittleEndian<uint32_t>(bytes, 12, socket_size);
  StoreLittleEndian<uint32_t>(bytes, 16, qps_size);
  std::byte* out = bytes.data() + kFixedSize;
  if (descriptor_size > 0) std::memcpy(out, record.region_descriptor.data(), descriptor_size);
  out += descriptor_size;
  if (name_size > 0) std::memcpy(out, record.death_watch_segment.data(), name_size);
  out += name_size;
  if (socket_size > 0) std::memcpy(out, record.control_socket.data(), socket_size);
  out += socket_size;
  if (qps_size > 0) std::memcpy(out, record.verbs_qps.data(), qps_size);
  out += qps_size;
  if (!record.worker_address.empty()) {
    std::memcpy(out, record.worker_address.data(), record.worker_address.size());
  }
  return bytes;
}

StatusOr<PeerRecord> DecodePeerRecord(std::span<const std::byte> bytes, uint32_t rank) {
  const std::string who = "rank " + std::to_string(rank) + " published ";
  if (bytes.size() < kFixedSize) {
    return OtherError(who + std::to_string(bytes.size()) +
                      " bytes of control-plane record: expected at least " +
                      std::to_string(kFixedSize + 1));
  }
  PeerRecord record;
  record.pid = LoadLittleEndian<uint32_t>(bytes, 0);
  const uint32_t descriptor_size = LoadLittleEndian<uint32_t>(bytes, 4);
  const uint32_t name_size = LoadLittleEndian<uint32_t>(bytes, 8);
  const uint32_t socket_size = LoadLittleEndian<uint32_t>(bytes, 12);
  const uint32_t qps_size = LoadLittleEndian<uint32_t>(bytes, 16);
  if (name_size > kMaxSegmentName) {
    return OtherError(who + "a death-watch segment name of " + std::to_string(name_size) +
                      " bytes: expected at most " + std::to_string(kMaxSegmentName));
  }
  if (socket_size > kMaxSocketName) {
    return OtherError(who + "a control socket name of " + std::to_string(socket_size) +
                      " bytes: expected at most " + std::to_string(kMaxSocketName));
  }
  if (qps_size > kMaxHeartbeatQps) {
    return OtherError(who + "verbs QP addresses of " + std::to_string(qps_size) +
                      " bytes: expected at most " + std::to_string(kMaxHeartbeatQps));
  }
  const size_t rest = bytes.size() - kFixedSize;
  // 64-bit sums: four u32 lengths cannot wrap.
  if (static_cast<uint64_t>(descriptor_size) + name_size + socket_size + qps_size >= rest) {
    return OtherError(
        who + std::to_string(bytes.size()) + " bytes with a " + std::to_string(descriptor_size) +
        "-byte region descriptor, a " + std::to_string(name_size) + "-byte segment name, a " +
        std::to_string(socket_size) + "-byte socket name and " + std::to_string(qps_size) +
        " bytes of verbs QP addresses: expected them and a worker address to "
        "fit");
  }
  const std::byte* in = bytes.data() + kFixedSize;
  record.region_descriptor.assign(in, in + descriptor_size);
  in += descriptor_size;
  record.death_watch_segment.assign(reinterpret_cast<const char*>(in), name_size);
  in += name_size;
  record.control_socket.assign(reinterpret_cast<const char*>(in), socket_size);
  in += socket_size;
  record.verbs_qps.assign(in, in + qps_size);
  in += qps_size;
  record.worker_address.assign(in, bytes.data() + bytes.size());
  return record;
}

}  // namespace rft::detector
