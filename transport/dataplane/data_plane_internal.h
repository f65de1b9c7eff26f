// Constants and helpers shared by the data plane's source files; not part of its interface.
#ifndef RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_
#define RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_

#include <ucp/api/ucp.h>

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

}  // namespace rft::transport::internal

#endif  // RFT_TRANSPORT_DATAPLANE_DATA_PLANE_INTERNAL_H_
