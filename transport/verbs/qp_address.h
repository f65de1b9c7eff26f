// What a process publishes so that its peers can connect RC queue pairs to its own and write
// into its registered buffer: the wire records exchanged through the bootstrap.
//
// A process has one QP per peer, and all the QPs of one context share everything but their
// number and first PSN (the port's LID and GID, the registered buffer, the eager channel's
// parameters). So it publishes a *table*: the shared fields once, then 6 bytes per peer. At
// 48 bytes per peer, three tables per process (data plane, heartbeats, control messages) made a
// job's start-up exchange 3 · 48 · N² bytes; at 6 it was 3 · 6 · N² plus 3 · 44 · N. Since
// the heartbeats write on the control messages' QPs, two tables: 2 · 6 · N² + 2 · 44 · N; since
// the data plane connects on demand (sending single addresses), one: 6 · N² + 44 · N; since
// the control plane's table holds only its O(log N) neighbours' entries, 6 · N · 2⌈log2 N⌉ at
// most.
//
// Plain data and bytes only (no libibverbs), so the codec is tested without RDMA.
#ifndef RFT_TRANSPORT_VERBS_QP_ADDRESS_H_
#define RFT_TRANSPORT_VERBS_QP_ADDRESS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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

// The table's layout, little-endian, after a one-byte format version so that a table from a
// different build is refused by name instead of being misread:
//   header:  version 1 | entries 4 | lid 2 | gid_index 1 | gid 16 | addr 8 | rkey 4
//            | eager_credits 4 | eager_slot_size 4                              = 44 bytes
//   entries: qpn 3 | psn 3, one per entry                                      = 6 bytes each
// An entry of all zeros is a hole (the publisher's own slot): QP number 0 is never an RC QP's.
inline constexpr uint8_t kQpAddressVersion = 3;
inline constexpr size_t kQpTableHeaderSize = 44;
inline constexpr size_t kQpTableEntrySize = 6;

constexpr size_t QpAddressTableSize(uint32_t entries) {
  return kQpTableHeaderSize + size_t{entries} * kQpTableEntrySize;
}

// A table of `entries` entries: entry i is `address_for(i)`, except `hole` (kNoHole: none),
// left zero. Every entry must share the header's fields (those of the first one encoded): the
// QPs of one context do, so a difference is a bug (RFT_CHECK). QP numbers and PSNs must fit in
// 24 bits, as the transport's do.
inline constexpr uint32_t kNoHole = UINT32_MAX;
std::vector<std::byte> EncodeQpAddressTable(uint32_t entries, uint32_t hole,
                                            const std::function<QpAddress(uint32_t)>& address_for);

// Entry `index` of a table of exactly `entries` entries, with the header's fields. Refused, with
// RFT_ERR_ARG and a message naming what is wrong: a table cut inside its header (naming the
// field, e.g. "QP address table of 21 bytes ends inside gid (bytes 8..23)"), another version,
// another entry count, a size that is not the header plus its entries, a hole.
StatusOr<QpAddress> DecodeQpAddressTable(std::span<const std::byte> bytes, uint32_t entries,
                                         uint32_t index);

// One QP's address alone (a table of one entry): what goes to a single peer, e.g. a survivor's
// QP for a replacement that joined.
inline constexpr size_t kSingleQpAddressSize = QpAddressTableSize(1);
std::vector<std::byte> EncodeSingleQpAddress(const QpAddress& address);
StatusOr<QpAddress> DecodeSingleQpAddress(std::span<const std::byte> bytes);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_QP_ADDRESS_H_
