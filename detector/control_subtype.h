// The detector's own control message kinds (service ControlService::kDetector, so WireHeader::flags
// of its messages is the kind alone). Not part of the interface; shared by the control plane's
// files.
#ifndef RFT_DETECTOR_CONTROL_SUBTYPE_H_
#define RFT_DETECTOR_CONTROL_SUBTYPE_H_

#include <cstddef>
#include <cstdint>

#include "detector/reliable_broadcast.h"
#include "transport/wire/wire_header.h"

namespace rft::detector::internal {

// The control plane's active-message id on its own worker (the data plane's is 1).
inline constexpr unsigned kControlAmId = 2;

// The heartbeat slots' offsets in the region each control plane registers (kRegionSize bytes):
// the main one, and the one hand-over puts go to while the job grows (HeartbeatRing, "Growth").
inline constexpr uint64_t kSlotOffset = 0;
inline constexpr uint64_t kHandoverSlotOffset = 8;
inline constexpr size_t kRegionSize = 64;

inline constexpr transport::ControlService kDetectorService = transport::ControlService::kDetector;

enum ControlSubtype : uint8_t {
  kObserveRequest = 1,  // payload: generation, the requester's job size; u32 little-endian
  kBroadcast = 2,       // payload: an encoded BroadcastMessage
  kDeparture = 3,       // no payload: the sender ends cleanly (control_departure.cc)
  kDepartureAck = 4,    // no payload: the departure was recorded
  // From a peer that connected its message channel QP to the receiver's (control_verbs.cc): a
  // survivor to a replacement that joined, or the answer to a kVerbsOffer. The heartbeat slots'
  // part (VerbsHeartbeats::Part), then a one-entry QP address table of the message channel's QP.
  kVerbsAddress = 5,
  // The same payload, from a peer outside the receiver's static neighbours that made a QP for
  // it on demand (a message to it went through UCX): the receiver connects and answers with
  // kVerbsAddress.
  kVerbsOffer = 6,
  // No payload: the answer to a kVerbsOffer whose receiver could not connect its QP (no place
  // left, a device error); the offering end withdraws its QP.
  kVerbsDecline = 7,
};

// The service a delivered broadcast of `kind` belongs to; kDetector for failures (the
// detector's own).
inline constexpr transport::ControlService ServiceOfBroadcast(BroadcastKind kind) {
  return kind == BroadcastKind::kRevoke ? transport::ControlService::kRevoke : kDetectorService;
}

}  // namespace rft::detector::internal

#endif  // RFT_DETECTOR_CONTROL_SUBTYPE_H_
