// Constants and helpers shared by the data plane's source files; not part of its interface.
#ifndef RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_
#define RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_

#include <ucp/api/ucp.h>

#include <cstddef>

#include "base/error.h"

namespace rft::transport::internal {

// The UCX active-message id of rft data messages. Other planes use other ids.
inline constexpr unsigned kDataAmId = 1;

// The rft error class of a failed UCX operation. Errors UCX raises for a broken or closed
// endpoint (a failed peer; rft force-closes the endpoints of failed ranks, which cancels what
// runs on them) are PROC_FAILED.
inline rft_error_t ErrorFromUcx(ucs_status_t status) {
  switch (status) {
    case UCS_OK:
      return RFT_SUCCESS;
    case UCS_ERR_CANCELED:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
      return RFT_ERR_PROC_FAILED;
    case UCS_ERR_MESSAGE_TRUNCATED:
      return RFT_ERR_TRUNCATE;
    default:
      return RFT_ERR_OTHER;
  }
}

// Sends `length` bytes at `bytes` (an rft header first, then its payload) as one eager data
// active message on `ep`: the data plane's own small messages (a rendezvous done, a revoke
// notice, a verbs address). `done(request, status, user_data)` runs if UCX keeps the message;
// the result is ucp_am_send_nbx's (a request, an error, or nullptr when sent at once), and
// `bytes` must stay until `done` when it is a request.
inline void* SendOwnMessage(ucp_ep_h ep, const std::byte* bytes, size_t length,
                            ucp_send_nbx_callback_t done, void* user_data) {
  ucp_request_param_t param;
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = done;
  param.user_data = user_data;
  // The header travels inside the AM data (a small message: header first, see Isend).
  return ucp_am_send_nbx(ep, kDataAmId, nullptr, 0, bytes, length, &param);
}

}  // namespace rft::transport::internal

#endif  // RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_
