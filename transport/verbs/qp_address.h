// What a process publishes so that a peer can connect an RC queue pair to one of its own and
// write into its registered buffer: the wire record exchanged through the bootstrap.
//
// Plain data and bytes only (no libibverbs), so the codec is tested without RDMA.
#ifndef RFT_TRANSPORT_VERBS_QP_ADDRESS_H_
#define RFT_TRANSPORT_VERBS_QP_ADDRESS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace rft::verbs {

struct QpAddress {
  uint16_t lid = 0;                  // the port's LID (InfiniBand; 0 on RoCE)
  uint8_t gid_index = 0;             // the sender's GID index, for the record's reader to report
  std::array<uint8_t, 16> gid = {};  // the port's GID (RoCE routes by it; zero on plain IB)
  uint32_t qpn = 0;                  // 24 bits on the wire of the transport
  uint32_t psn = 0;                  // the first packet sequence number this QP sends (24 bits)
  uint64_t addr = 0;                 // the registered buffer's virtual address
  uint32_t rkey = 0;                 // and its remote key
  // The eager channel's parameters on the publishing side (0 for a QP of no channel): the two
  // ends must agree, or one's sends would overrun the other's slots or reservation.
  uint32_t eager_credits = 0;
  uint32_t eager_slot_size = 0;

  friend bool operator==(const QpAddress&, const QpAddress&) = default;
};

// The record's layout, little-endian, after a one-byte format version so that a record from a
// different build is refused by name instead of being misread:
//   version 1 | lid 2 | gid_index 1 | gid 16 | qpn 4 | psn 4 | addr 8 | rkey 4
//   | eager_credits 4 | eager_slot_size 4                                        = 48 bytes
inline constexpr uint8_t kQpAddressVersion = 2;
inline constexpr size_t kQpAddressSize = 48;

std::vector<std::byte> EncodeQpAddress(const QpAddress& address);

// Exactly kQpAddressSize bytes of version kQpAddressVersion. A short record is refused naming
// the first field it cuts, e.g. "QP address record of 21 bytes ends inside qpn (bytes 20..23)";
// a long one naming the extra bytes; RFT_ERR_ARG either way.
StatusOr<QpAddress> DecodeQpAddress(std::span<const std::byte> bytes);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_QP_ADDRESS_H_
