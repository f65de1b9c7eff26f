// What each process publishes through the launcher for the control plane (not part of the
// interface): its pid, its heartbeat region's descriptor, the name of its death-watch segment
// (empty when it has none), its verbs QPs' part (empty without verbs) and its UCX worker
// address. A peer's record is input from another
// process: the decoder checks every length and names what is wrong.
#ifndef RFT_DETECTOR_PEER_RECORD_H_
#define RFT_DETECTOR_PEER_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace rft::detector {

struct PeerRecord {
  uint32_t pid = 0;
  std::vector<std::byte> region_descriptor;
  std::string death_watch_segment;  // empty: not watchable (its DeathWatch::Create failed)
  // Where same-node peers send its control messages (LocalDatagramChannel); empty: none, UCX.
  std::string control_socket;
  // VerbsHeartbeats::Part (verbs_heartbeats.h: the heartbeat slots), then the message
  // channel's QP addresses (control_verbs.cc); empty: heartbeats and messages through UCX only.
  std::vector<std::byte> verbs_qps;
  std::vector<std::byte> worker_address;
  friend bool operator==(const PeerRecord&, const PeerRecord&) = default;
};

// Layout: pid u32, descriptor length u32, segment-name length u32, socket-name length u32,
// verbs-QP part length u32 (little-endian, like every rft encoding), then the descriptor,
// the segment name, the socket name, the verbs-QP part and the address (the rest, at least
// one byte).
std::vector<std::byte> EncodePeerRecord(const PeerRecord& record);
// RFT_ERR_OTHER naming `rank` and the field that does not fit.
StatusOr<PeerRecord> DecodePeerRecord(std::span<const std::byte> bytes, uint32_t rank);

}  // namespace rft::detector

#endif  // RFT_DETECTOR_PEER_RECORD_H_
