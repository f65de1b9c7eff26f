// A point-to-point operation in flight (isend, irecv) and what its completion reports.
//
// Requests come from the data plane's pool; the user holds a Request* handle, and the
// completion calls (Test, Wait, ...) return it to the pool and set the handle to nullptr, as
// MPI does. A request may outlive its user-visible completion while UCX still references it
// (a peer failed with a send or fetch in flight): it then goes back to the pool only when UCX
// calls back, so UCX never writes into a recycled request.
#ifndef RFT_TRANSPORT_DATAPLANE_REQUEST_H_
#define RFT_TRANSPORT_DATAPLANE_REQUEST_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/error.h"
#include "base/rank_set.h"
#include "transport/matching/matching_queue.h"
#include "transport/wire/wire_header.h"

namespace rft::transport {

// What a completed operation (or a probe) reports, like MPI_Status.
struct MessageStatus {
  Rank source = kAnySource;  // receives: the sender; sends: the destination
  int32_t tag = kAnyTag;
  // Bytes delivered into the receive buffer (on truncation: the buffer's size); for a probe,
  // the message's length; for a send, the bytes sent.
  size_t count = 0;
  // The message's full length (differs from `count` only on truncation).
  size_t message_length = 0;
  rft_error_t error = RFT_SUCCESS;
  bool cancelled = false;
};

class DataPlane;
struct Request;

// Links a request into its peer's list of pending operations (failure completion). A second
// node beside the PostedReceive one, since a receive sits on both lists at once.
struct PeerLink : ListNode {
  Request* request = nullptr;
};

// Links a send that found its same-node ring full into that peer's queue (direct_queue.cc), in
// order; `control` instead of `request` for a message the data plane sends on its own behalf.
struct RingLink : ListNode {
  Request* request = nullptr;
  void* control = nullptr;  // DataPlane::ControlSend
};

enum class RequestKind : uint8_t { kSend, kReceive };

// How a send completes. Standard: once its buffer may be reused (a small message is copied out
// and completes at once). Synchronous (MPI's Ssend): only once a matching receive has taken it.
enum class SendMode : uint8_t { kStandard, kSynchronous };

// Payloads up to this size travel in one piece with their header (see Request::header).
inline constexpr size_t kInlinePayloadMax = 224;

struct Request {
  PostedReceive posted;        // a receive's node in its context's matching queue
  PeerLink peer_link;          // on peers_[peer].pending while the operation depends on that peer
  RingLink ring_link;          // on the peer's ring queue while it waits for room
  DataPlane* plane = nullptr;  // for UCX's completion callbacks
  RequestKind kind = RequestKind::kSend;
  bool complete = false;
  // The user let go of the handle (completion returned it) while UCX still references the
  // request: UCX's callback returns it to the pool.
  bool orphaned = false;
  Rank peer = kAnySource;  // send: destination; receive: the source it names (or any)
  int32_t tag = 0;
  uint32_t context_id = 0;
  void* buffer = nullptr;
  size_t capacity = 0;          // receive buffer size, or bytes to send
  void* ucx_request = nullptr;  // a UCX send or rendezvous fetch still running
  // A same-node rendezvous send waits for the receiver's done message (and its sequence
  // number, which tells this use of the request from earlier ones).
  bool awaiting_pull_done = false;
  uint64_t pull_sequence = 0;
  // The verbs rendezvous: a send's registration of its buffer for the receiver's RDMA READ
  // (released when it completes), and a receive's read still running (its entry in the plane's
  // read table).
  void* verbs_mr = nullptr;  // ibv_mr* of the send buffer, while the receiver may read it
  int verbs_mr_entry = -1;   // its registration cache entry (RegistrationCache::Lease)
  bool verbs_reading = false;
  uint32_t verbs_read = 0;
  // A send still pending when its context was revoked: it completes with RFT_ERR_REVOKED once
  // the transport let go of its buffer (the receiver discards it, or had taken it).
  bool revoked = false;
  // A synchronous send (SendMode::kSynchronous): it completes only once the receiver matched it,
  // so it always travels by a rendezvous, whatever its size.
  bool synchronous = false;
  MessageStatus status;
  // What a send hands UCX must stay valid until UCX completes the send (UCX 1.13 has no
  // copy-header flag), so it lives here: the header alone (it travels as the AM header), or
  // for a small message the header and the payload together, or for a same-node rendezvous
  // the header and the descriptor (docs/wire_format.md).
  // Left uninitialised: every send writes what it uses.
  std::array<std::byte, kWireHeaderSize + kInlinePayloadMax> header;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_REQUEST_H_
