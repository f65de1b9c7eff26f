// The pull rendezvous: large messages the receiver pulls from the sender's memory once they are
// matched, by process_vm_readv between processes of one node (below) or by RDMA READ over the
// verbs path (verbs_read.cc), without UCX's rendezvous. Both share the request and the done
// message here; which reads is the pair's path (the same-node pull, else verbs).
//
// The sender sends a request-to-send (a kRendezvousRequest: the header and a descriptor of
// where the data is) and keeps its request pending. The receiver matches it like any message;
// once matched it copies the data with one process_vm_readv (cross-memory attach: a single
// kernel copy, no shared bounce buffer) straight into the receive buffer, completes the
// receive, and answers with a kRendezvousDone that completes the send. UCX drops its own CMA
// transport under peer error handling (../shared/NOTES.md), so without this, large messages
// on one node cost a second copy through shared memory.
//
// Failures: a sender that died is ESRCH (the receive fails with PROC_FAILED and the failure is
// reported); a receiver that died leaves the send pending on its peer list, which failure
// completion ends. A done message is trusted only if it names, by cookie and sequence number,
// a send still pending to the rank it came from.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transport/dataplane/cma/peer_process.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"

namespace rft::transport {
namespace {

static_assert(kRendezvousDescriptorSize <= kInlinePayloadMax,
              "a rendezvous request travels in the request's header buffer");

}  // namespace

void DataPlane::EncodePullRequest(Request* request, uint32_t rkey) {
  request->awaiting_pull_done = true;
  request->pull_sequence = ++pull_sequence_;
  const RendezvousDescriptor descriptor{
      .address = reinterpret_cast<uint64_t>(request->buffer),
      .length = request->capacity,
      .cookie = reinterpret_cast<uint64_t>(request),
      .sequence = request->pull_sequence,
      .rkey = rkey,
  };
  EncodeRendezvousDescriptor(
      descriptor, std::span<std::byte, kRendezvousDescriptorSize>(
                      request->header.data() + kWireHeaderSize, kRendezvousDescriptorSize));
}

void DataPlane::HandlePullRequest(const WireHeader& header, std::span<const std::byte> payload) {
  RendezvousDescriptor descriptor;
  // An empty descriptor (a synchronous send of 0 bytes) needs no read: it may come from anyone.
  const bool decoded = DecodeRendezvousDescriptor(payload, &descriptor);
  const bool readable = peers_[header.source].same_node_pull ||
                        peers_[header.source].path == Path::kVerbs ||
                        (decoded && descriptor.length == 0);
  if (!readable || !decoded) {
    drops_.Record(DecodeError::kBadPayload);  // not a peer we agreed to read from, or garbage
    return;
  }
  Context* context = ContextForArrival(header);
  if (context == nullptr) {
    // Dropped unread (revoked traffic); like an eager message, the send still succeeds.
    SendPullDone(header.source, descriptor, kRendezvousDiscarded);
    return;
  }
  HandleMessage(context, context->queue.MatchArrival(header.source, header.tag), header, nullptr, 0,
                nullptr, /*rendezvous=*/false, /*persistent=*/false, &descriptor);
}

void DataPlane::PullMessage(Request* request, Rank source, int32_t tag,
                            const RendezvousDescriptor& descriptor) {
  const size_t count = std::min<uint64_t>(descriptor.length, request->capacity);
  request->status.count = count;
  request->status.message_length = descriptor.length;
  if (endpoints_->failed(source)) {
    CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
    return;
  }
  if (descriptor.length == 0) {
    // A synchronous send of nothing: matched, which is all its sender waits for.
    request->status.source = source;
    request->status.tag = tag;
    request->status.error = RFT_SUCCESS;
    SendPullDone(source, descriptor, 0, request);
    return;
  }
  // The same rule as the sender's (Isend): CMA with a peer of this node, else verbs.
  if (!peers_[source].same_node_pull) return ReadVerbs(request, source, tag, descriptor);
  const int error = cma::Read(peers_[source].pid, request->buffer, descriptor.address, count);
  // Checked after the read: if the sender had ended, its pid may belong to another process by
  // now, and whatever was read (or refused) came from that one.
  if (error == ESRCH || PeerProcessEnded(source)) {
    // The sender is gone: its data with it.
    CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
    Discovered(source);
    return;
  }
  if (error != 0) {
    RFT_LOG_ERROR(
        "receive of %llu bytes from rank %u: process_vm_readv from pid %d failed (%s); the "
        "message is lost and both ends get RFT_ERR_OTHER. RFT_RENDEZVOUS=ucx avoids it",
        static_cast<unsigned long long>(descriptor.length), source,
        static_cast<int>(peers_[source].pid), std::strerror(error));
    request->status.count = 0;
    CompleteReceive(request, source, tag, RFT_ERR_OTHER);
    SendPullDone(source, descriptor, kRendezvousReadFailed);
    return;
  }
  request->status.source = source;
  request->status.tag = tag;
  request->status.error = descriptor.length > request->capacity ? RFT_ERR_TRUNCATE : RFT_SUCCESS;
  SendPullDone(source, descriptor, 0, request);
}

bool DataPlane::PeerProcessEnded(Rank rank) const {
  if (!peers_.Contains(rank) || peers_[rank].pidfd < 0) return false;
  return cma::Ended(peers_[rank].pidfd);
}

bool DataPlane::HasPeerProcess(Rank peer) const {
  return peers_.Contains(peer) && peers_[peer].pidfd >= 0 && peer != rank_;
}

int DataPlane::CopyPeerDescriptor(Rank peer, int fd) const {
  if (!HasPeerProcess(peer)) {
    errno = ESRCH;
    return -1;
  }
  return cma::CopyDescriptor(peers_[peer].pidfd, fd);
}

void DataPlane::SendPullDone(Rank source, const RendezvousDescriptor& descriptor, uint16_t flags,
                             Request* receive) {
  // Whenever the message is not left queued, the receive (if any) completes now.
  auto complete_receive = [this, receive] {
    if (receive != nullptr) Complete(receive, receive->status.error);
  };
  // Closing (nobody waits any more), or the sender failed (its send completed with it).
  if (endpoints_ == nullptr) return complete_receive();
  auto ep = EndpointFor(source);
  if (!ep.ok()) return complete_receive();
  WireHeader header;
  header.type = MessageType::kRendezvousDone;
  header.flags = flags;
  header.length = kRendezvousDoneSize;
  ControlSend* send = NewControlSend(header);
  EncodeRendezvousDone({.cookie = descriptor.cookie, .sequence = descriptor.sequence},
                       std::span<std::byte, kRendezvousDoneSize>(
                           send->bytes.data() + kWireHeaderSize, kRendezvousDoneSize));
  if (DirectSendControl(source, send, send->bytes.size(), receive)) return;
  // Sent at once, or the endpoint failed (then the sender's failure ends its send).
  if (!SendControlByUcx(*ep, send, send->bytes.size())) return complete_receive();
  if (receive != nullptr) {
    // Queued (the sender's FIFO is full): the receive completes when the message leaves, so
    // whoever waits for it keeps progressing until then. The done message owns it now: a
    // failure of the sender must not complete it a second time.
    UnlinkFromPeer(receive);
    send->receive = receive;
  }
}

void DataPlane::OnControlSendDone(void* ucx_request, ucs_status_t, void* user_data) {
  auto* send = static_cast<ControlSend*>(user_data);
  ucp_request_free(ucx_request);
  // The data was read whatever became of the message (a purge by the sender's failure too).
  send->plane->FinishControlSend(send);
}

void DataPlane::HandlePullDone(const WireHeader& header, std::span<const std::byte> payload) {
  RendezvousDone done;
  if (!DecodeRendezvousDone(payload, &done)) {
    drops_.Record(DecodeError::kBadPayload);
    return;
  }
  // The cookie is a pointer we handed out: never dereferenced before it is found among the
  // sends still waiting on that peer.
  Request* request = nullptr;
  const IntrusiveList<PeerLink>& pending = peers_[header.source].pending;
  for (PeerLink* link = pending.front(); link != nullptr; link = pending.next(link)) {
    if (reinterpret_cast<uint64_t>(link->request) == done.cookie) {
      request = link->request;
      break;
    }
  }
  if (request == nullptr || !request->awaiting_pull_done ||
      request->pull_sequence != done.sequence) {
    drops_.Record(DecodeError::kBadPayload);  // stale or forged
    return;
  }
  request->awaiting_pull_done = false;
  const rft_error_t error =
      (header.flags & kRendezvousReadFailed) != 0 ? RFT_ERR_OTHER : RFT_SUCCESS;
  if (request->ucx_request != nullptr) {
    request->status.error = error;  // the request-to-send itself is still with UCX: it finishes
    return;
  }
  Complete(request, error);
}

}  // namespace rft::transport
