// The data plane's side of ULFM revocation: a revoked context completes what was pending in it
// with RFT_ERR_REVOKED and keeps nothing that arrived for it (docs/transport.md, "Revocation").
#include <string>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"

namespace rft::transport {

void DataPlane::ReportContextRevoked(uint32_t context_id, uint32_t epoch) {
  reports_.Push({.kind = Notice::Kind::kContextRevoked, .id = context_id, .epoch = epoch});
}

void DataPlane::RevokeContext(uint32_t context_id, uint32_t epoch) {
  auto found = GetContext(context_id);
  if (!found.ok()) {
    RFT_LOG_WARN("revocation ignored: %s", found.status().ToString().c_str());
    return;
  }
  Context* context = *found;
  // An older life of the context (its id was reused since): not this one's news.
  if (epoch < context->epoch || (epoch == context->epoch && context->revoked)) return;
  // A revocation of a life this process has not reached yet revokes it in advance.
  context->epoch = epoch;
  context->revoked = true;
  // Sends first: a purge below may release a rendezvous this process sent to itself, and UCX's
  // completion of it must find the send marked.
  for (Rank rank = 0; rank < size_; ++rank) {
    for (PeerLink* link = peer_pending_[rank].front(); link != nullptr;
         link = peer_pending_[rank].next(link)) {
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
