// The queue of records that wait for room on a peer's direct path (a same-node ring,
// transport/dataplane/ring/, or the verbs channel, verbs_path.cc): a record that finds no room
// waits in that peer's queue, in order, and what follows it to that peer waits behind it. Here
// too: the control records (rendezvous done, revoke notice) that go the same way, and their
// UCX fallback.
#include <algorithm>

#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"

namespace rft::transport {

bool DataPlane::DirectWriteSend(const Request& request) {
  // A rendezvous request is its header and descriptor; an eager message its header and the
  // caller's bytes.
  const std::span<const std::byte> header(
      request.header.data(),
      request.awaiting_pull_done ? kWireHeaderSize + kRendezvousDescriptorSize : kWireHeaderSize);
  if (request.awaiting_pull_done) return DirectWrite(request.peer, header, {});
  return DirectWrite(
      request.peer, header,
      std::span<const std::byte>(static_cast<const std::byte*>(request.buffer), request.capacity));
}

void DataPlane::DirectSend(Request* request) {
  const Rank peer = request->peer;
  if (peers_[peer].direct_queue.empty() && DirectWriteSend(*request)) [[likely]] {
    if (request->awaiting_pull_done) {
      LinkToPeer(request, peer);  // the receiver's done message completes it
    } else {
      request->complete = true;  // copied out, as UCX's inline sends
    }
    return;
  }
  if (peers_[peer].direct_queue.empty()) direct_backlog_.push_back(peer);
  request->ring_link.request = request;
  request->ring_link.control = nullptr;
  peers_[peer].direct_queue.push_back(&request->ring_link);
  LinkToPeer(request, peer);  // a failure of the peer completes it
}

StatusOr<ucp_ep_h> DataPlane::EndpointFor(Rank peer) {
  if (peer < size_ && peers_[peer].path != Path::kUcx) {
    if (endpoints_->failed(peer)) [[unlikely]] {
      return Status(RFT_ERR_PROC_FAILED, "rank " + std::to_string(peer) + " has failed");
    }
    return nullptr;
  }
  return endpoints_->Get(peer);
}

bool DataPlane::DirectSendControl(Rank peer, ControlSend* send, size_t bytes, Request* receive) {
  if (peer >= size_ || peers_[peer].path == Path::kUcx) return false;
  const std::span<const std::byte> message(send->bytes.data(), bytes);
  if (peers_[peer].direct_queue.empty() && DirectWrite(peer, message, {})) {
    send->receive = receive;
    FinishControlSend(send);
    return true;
  }
  if (peers_[peer].direct_queue.empty()) direct_backlog_.push_back(peer);
  if (receive != nullptr) {
    UnlinkFromPeer(receive);  // the done message owns it now, as when UCX queues it
    send->receive = receive;
  }
  send->length = bytes;
  send->ring_link.request = nullptr;
  send->ring_link.control = send;
  peers_[peer].direct_queue.push_back(&send->ring_link);
  return true;
}

void DataPlane::FinishControlSend(ControlSend* send) {
  if (send->receive != nullptr) Complete(send->receive, send->receive->status.error);
  control_sends_.Release(send);
}

DataPlane::ControlSend* DataPlane::NewControlSend(WireHeader header) {
  ControlSend* send = control_sends_.Acquire();
  send->plane = this;
  send->receive = nullptr;
  header.source = rank_;
  header.job_token = job_token_;
  EncodeHeader(header, std::span<std::byte, kWireHeaderSize>(send->bytes.data(), kWireHeaderSize));
  return send;
}

bool DataPlane::SendControlByUcx(ucp_ep_h ep, ControlSend* send, size_t length) {
  void* sending = SendOwnMessage(ep, send->bytes.data(), length, &OnControlSendDone, send);
  if (UCS_PTR_IS_PTR(sending) && sending != nullptr) return true;
  FinishControlSend(send);
  return false;
}

void DataPlane::FlushDirectQueues() {
  for (size_t i = 0; i < direct_backlog_.size();) {
    const Rank peer = direct_backlog_[i];
    IntrusiveList<RingLink>& queue = peers_[peer].direct_queue;
    while (RingLink* link = queue.front()) {
      if (link->control != nullptr) {
        auto* send = static_cast<ControlSend*>(link->control);
        if (!DirectWrite(peer, std::span<const std::byte>(send->bytes.data(), send->length), {})) {
          break;
        }
        queue.erase(link);
        FinishControlSend(send);
        continue;
      }
      Request* request = link->request;
      if (!DirectWriteSend(*request)) break;
      queue.erase(link);
      // The done message completes a rendezvous.
      if (!request->awaiting_pull_done) Complete(request, RFT_SUCCESS);
    }
    if (queue.empty()) {
      direct_backlog_[i] = direct_backlog_.back();
      direct_backlog_.pop_back();
    } else {
      ++i;
    }
  }
}

void DataPlane::DropDirectQueue(Rank peer) {
  if (!peers_.Contains(peer)) return;  // before Start, or a rank beyond the table
  IntrusiveList<RingLink>& queue = peers_[peer].direct_queue;
  while (RingLink* link = queue.front()) {
    queue.erase(link);
    // A send stays linked to the peer: FailPeer completes it.
    if (link->control != nullptr) FinishControlSend(static_cast<ControlSend*>(link->control));
  }
  std::erase(direct_backlog_, peer);
}

}  // namespace rft::transport
