// The data plane's side of ULFM revocation: a revoked context completes what was pending in it
// with RFT_ERR_REVOKED and keeps nothing that arrived for it (docs/transport.md, "Revocation").
#include <algorithm>
#include <string>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"

namespace rft::transport {

void DataPlane::ReportContextRevoked(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  reports_.Push(
      {.kind = Notice::Kind::kContextRevoked, .id = context_id, .epoch = epoch, .owner = owner});
}

void DataPlane::RevokeHere(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  ApplyPendingNotices();  // what other threads handed over first, in order
  RevokeContext(context_id, epoch, owner);
}

void DataPlane::SendRevocation(Rank peer, uint32_t context_id, uint32_t epoch, uint32_t owner) {
  if (endpoints_ == nullptr || peer >= size_ || peer == rank_) return;
  // A verbs peer this process has not talked to yet gets the notice over UCX: connecting the
  // pair for it would make a QP for every member a revocation reaches. The notice needs no
  // order with the data: the control plane's flood of the same revocation has none either.
  const bool by_ucx = VerbsLinkIdle(peer);
  auto ep = by_ucx ? endpoints_->Get(peer) : EndpointFor(peer);
  if (!ep.ok()) return;  // failed: it needs no notice
  WireHeader header;
  header.type = MessageType::kRevoke;
  header.context_id = context_id;
  header.epoch = epoch;
  header.tag = static_cast<int32_t>(owner);  // the owner travels as the tag (< 2^31)
  header.length = 0;
  ControlSend* send = NewControlSend(header);
  if (!by_ucx && DirectSendControl(peer, send, kWireHeaderSize, nullptr)) return;
  SendControlByUcx(*ep, send, kWireHeaderSize);  // the header alone travels as the AM data
}

void DataPlane::RevokeContext(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  auto found = GetContext(context_id);
  if (!found.ok()) {
    RFT_LOG_WARN("revocation ignored: %s", found.status().ToString().c_str());
    return;
  }
  Context* context = *found;
  if (epoch > context->epoch) {
    // A life this process has not started (it may never: another communicator's): kept until
    // SetContextEpoch starts it or moves past it.
    const FutureRevocation future{.context_id = context_id, .epoch = epoch, .owner = owner};
    if (std::find(future_revocations_.begin(), future_revocations_.end(), future) ==
        future_revocations_.end()) {
      future_revocations_.push_back(future);
    }
    return;
  }
  // An older life (the id was reused since), or another communicator's life on this context.
  if (epoch < context->epoch || owner != context->owner || context->revoked) return;
  RevokeLife(context_id, context);
}

void DataPlane::RevokeLife(uint32_t context_id, Context* context) {
  const uint32_t epoch = context->epoch;
  context->revoked = true;
  // Sends first: a purge below may release a rendezvous this process sent to itself, and UCX's
  // completion of it must find the send marked.
  for (Rank rank = 0; rank < size_; ++rank) {
    const IntrusiveList<PeerLink>& pending = peers_[rank].pending;
    for (PeerLink* link = pending.front(); link != nullptr; link = pending.next(link)) {
      Request* request = link->request;
      if (request->kind == RequestKind::kSend && request->context_id == context_id) {
        request->revoked = true;
      }
    }
  }
  size_t receives = 0;
  size_t discarded = 0;
  context->queue.Purge(
      [&](UnexpectedMessage* node) {
        ReleaseUnexpected(static_cast<Unexpected*>(node->owner));
        ++discarded;
      },
      [&](PostedReceive* node) {
        auto* request = static_cast<Request*>(node->owner);
        CompleteReceive(request, request->peer, request->tag, RFT_ERR_REVOKED);
        ++receives;
      });
  RFT_LOG_DEBUG("context %u (epoch %u) revoked: %zu receives completed, %zu messages discarded",
                context_id, epoch, receives, discarded);
}

}  // namespace rft::transport
