// Asynchronous events of a verbs device (ibv_get_async_event), read without blocking and sorted
// by what they mean for the peers of a process (docs/verbs.md, "Asynchronous events").
//
// A dead peer usually shows as an error completion (retry exceeded) on its QP; the device also
// says things no completion carries: a QP that broke by itself (QP fatal, a request or access
// error the responder saw), a port whose link went down or came back, a device that died.
#ifndef RFT_TRANSPORT_VERBS_ASYNC_EVENT_H_
#define RFT_TRANSPORT_VERBS_ASYNC_EVENT_H_

#include <infiniband/verbs.h>

#include <cstdint>

namespace rft::verbs {

// What an event means to the process that owns the QPs.
enum class AsyncEffect : uint8_t {
  kQpFailed,     // that QP is in the error state: its peer is unreachable through it
  kPortDown,     // the port's link is down; RC retries decide whether peers are gone
  kPortUp,       // the port is active again
  kDeviceFatal,  // the device is gone: every peer through it is unreachable
  kNone,         // informative (path migration, a limit reached, a GID or LID change...)
};

// The part of an ibv_async_event that outlives ibv_ack_async_event.
struct AsyncEvent {
  ibv_event_type type;
  uint32_t qp_num = 0;   // QP events
  uint8_t port_num = 0;  // port events
};

AsyncEffect ClassifyAsyncEvent(ibv_event_type type);
// ibv_event_type_str's text ("unknown" for a type it does not know).
const char* AsyncEventName(ibv_event_type type);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_ASYNC_EVENT_H_
