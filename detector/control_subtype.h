// The control plane's message kinds (WireHeader::flags of a kControl message). Not part of the
// interface; shared by the control plane's files.
#ifndef RFT_DETECTOR_CONTROL_SUBTYPE_H_
#define RFT_DETECTOR_CONTROL_SUBTYPE_H_

#include <cstdint>

namespace rft::detector::internal {

enum ControlSubtype : uint16_t {
  kObserveRequest = 1,  // payload: generation, u32 little-endian
  kBroadcast = 2,       // payload: an encoded BroadcastMessage
  kDeparture = 3,       // no payload: the sender ends cleanly (control_departure.cc)
  kDepartureAck = 4,    // no payload: the departure was recorded
};

}  // namespace rft::detector::internal

#endif  // RFT_DETECTOR_CONTROL_SUBTYPE_H_
