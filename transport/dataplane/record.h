// What each process publishes for the data plane at start-up ("rft.dataplane", exchanged by
// setup.cc and read of replacements by growth.cc): how to reach it on each path. A peer's
// record is input from another process: the decoder checks every length and names what is
// wrong (tests/unit/transport_dataplane/record_test.cc; fuzzed by fuzz/dataplane_record_fuzz.cc).
#ifndef RFT_TRANSPORT_DATAPLANE_RECORD_H_
#define RFT_TRANSPORT_DATAPLANE_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"

namespace rft::transport {

// The verbs path's part: the eager channel's configuration, which every rank must share. No
// QP address: a pair's QPs are made when one of them first sends to the other.
struct VerbsRecordPart {
  uint32_t credits = 0;
  uint32_t max_payload = 0;
  friend bool operator==(const VerbsRecordPart&, const VerbsRecordPart&) = default;
};

struct DataPlaneRecord {
  // flags: it takes part in the same-node rendezvous (kCmaUsable), only its parent's
  // descendants may read its memory (kCmaParentOnly, Yama), it sleeps when idle (kBlocks), it
  // offers the verbs path (kVerbs, exactly when `verbs` is there).
  static constexpr uint32_t kCmaUsable = 1, kCmaParentOnly = 2, kBlocks = 4, kVerbs = 8;

  uint32_t pid = 0;
  uint32_t flags = 0;
  uint32_t parent = 0;   // its parent's pid (kCmaParentOnly)
  int32_t ring_fd = -1;  // the descriptor of its segment of same-node rings (-1: none)
  uint32_t ring_capacity = 0;
  int32_t wake_fd = -1;  // the descriptor of its wake-up eventfd (ring/ring_path.h)
  std::optional<VerbsRecordPart> verbs;
  std::vector<std::byte> ucx_address;  // its UCX worker's, never empty
  friend bool operator==(const DataPlaneRecord&, const DataPlaneRecord&) = default;
};

// Layout, little-endian like every rft encoding: pid, flags, parent, ring_fd, ring_capacity,
// wake_fd (six u32), then with kVerbs the verbs part (credits, max_payload: two u32), then the
// UCX address (the rest, at least one byte). `record.verbs` must be there exactly with kVerbs.
std::vector<std::byte> EncodeDataPlaneRecord(const DataPlaneRecord& record);
// RFT_ERR_OTHER naming `rank`, the record's size and the part that does not fit; an unknown
// flag is refused too (a record of another version).
StatusOr<DataPlaneRecord> DecodeDataPlaneRecord(std::span<const std::byte> bytes, uint32_t rank);

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_RECORD_H_
