// QP addresses between two processes that know each other by IP address instead of through a
// job's bootstrap: the RDMA connection manager (librdmacm) carries them over the RDMA network
// itself, in the private data of its connection request and of its reply. For programs started
// by hand on two hosts, as perftest's -R does, with no PMIx launcher (docs/verbs.md, "Connecting
// by IP address").
//
// The connection manager only exchanges the addresses: it owns no QP. Each end connects its own
// QP (the eager channel's, RoCE GID and all) to the address it received, at a point where the
// other end cannot yet send: the listener before it accepts, the connecting end before it
// confirms. So when ExchangeByCm returns at either end, both QPs are ready to receive.
#ifndef RFT_TRANSPORT_VERBS_CM_EXCHANGE_H_
#define RFT_TRANSPORT_VERBS_CM_EXCHANGE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "transport/verbs/qp_address.h"

namespace rft::verbs {

struct CmPeer {
  // Listening: the local address to listen on ("" or "0.0.0.0": every address). Connecting:
  // the listener's host name or address.
  std::string host;
  uint16_t port = 0;
  bool listen = false;
};

// Parses "HOST:PORT" (connecting) or "PORT" / "HOST:PORT" (listening): RFT_ERR_ARG naming the
// text and what was expected.
StatusOr<CmPeer> ParseCmPeer(std::string_view text, bool listen);

// Exchanges `mine` (this process's QP address for the peer) with the one peer at `peer`:
// `connect` gets the peer's address and must connect the QP to it; it runs before the peer can
// send. `device` is the name of the device that QP is on: the peer must be reached through it
// (RFT_ERR_ARG naming both devices when the route takes another). Errors name the step that
// failed (resolving the address or route, the peer rejecting or not answering) and the peer;
// RFT_ERR_TIMEOUT when `deadline` passes first.
Status ExchangeByCm(const CmPeer& peer, std::string_view device, const QpAddress& mine,
                    const std::function<Status(const QpAddress&)>& connect, Deadline deadline);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_CM_EXCHANGE_H_
