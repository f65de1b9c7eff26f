#include "transport/verbs/async_event.h"

namespace rft::verbs {

AsyncEffect ClassifyAsyncEvent(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
      return AsyncEffect::kQpFailed;
    // A QP on an SRQ that entered the error state (the last receive it will take is done). Not
    // a failure of its own: whatever moved the QP there is reported already, by an error
    // completion or one of the events above, or was this process's choice (a Close). A close's
    // event may even come after the QP was reset for another peer, whom it must not fail.
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return AsyncEffect::kNone;
    case IBV_EVENT_PORT_ERR:
      return AsyncEffect::kPortDown;
    case IBV_EVENT_PORT_ACTIVE:
      return AsyncEffect::kPortUp;
    case IBV_EVENT_DEVICE_FATAL:
      return AsyncEffect::kDeviceFatal;
    default:
      // Path migration (we load no alternate path), CQ errors (a CQ overrun is this process's
      // bug, found by the poll that follows), SRQ limits, LID, GID, P_Key and SM changes, client
      // reregistration, communication established, SQ drained, WQ events.
      return AsyncEffect::kNone;
  }
}

const char* AsyncEventName(ibv_event_type type) { return ibv_event_type_str(type); }

}  // namespace rft::verbs
