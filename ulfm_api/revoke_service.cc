#include "ulfm_api/revoke_service.h"

#include <utility>

#include "base/timeline.h"

namespace rft::api {

using detector::BroadcastKind;
using detector::BroadcastMessage;

StatusOr<std::unique_ptr<RevokeService>> RevokeService::Create(detector::ControlPlane* control,
                                                               transport::DataPlane* plane) {
  std::unique_ptr<RevokeService> service(new RevokeService(control, plane));
  RFT_ASSIGN_OR_RETURN(service->hosting_,
                       control->Host(transport::ControlService::kRevoke, service.get()));
  RevokeService* relay = service.get();
  plane->OnRevocationHeard([relay](uint32_t context_id, uint32_t epoch, uint32_t owner) {
    relay->Relay(context_id, epoch, owner);
  });
  return service;
}

RevokeService::~RevokeService() {
  plane_->OnRevocationHeard(nullptr);
  hosting_.Reset();
}

Status RevokeService::Revoke(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  if (!Flood(context_id, epoch, owner)) {
    return OtherError("revoke of context " + std::to_string(context_id) +
                      ": the control plane has ended");
  }
  return Status::Ok();
}

void RevokeService::Relay(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  // A communicator's notices come in pairs (each of its contexts): one flood covers both.
  if (context_id % kContextsPerCommunicator != 0) return;
  timeline::Record(timeline::Event::kRevokeHeard, context_id, "from member's notice");
  relayed_.fetch_add(1, std::memory_order_relaxed);
  Flood(context_id, epoch, owner);  // false: ending, and the flood no longer matters here
}

bool RevokeService::Flood(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  const BroadcastMessage message{.kind = BroadcastKind::kRevoke,
                                 .context = context_id,
                                 .epoch = epoch,
                                 .origin = 0,
                                 .subject = owner};
  detector::ControlPlane* control = control_;
  // Soon, not now: the members hear the data plane's notices first (Session::Revoke), and
  // waking the control threads here and at every member to flood at once preempted the very
  // threads that were to act on the revocation (2 cores: revoke took 7-35 us, 3.8 without).
  // A process whose flood has already been delivered (another member's) starts none.
  return control->PostSoon([control, message] { control->Broadcast(message); });
}

void RevokeService::OnControlMessage(Rank, uint8_t, std::span<const std::byte>) {
  dropped_.fetch_add(1, std::memory_order_relaxed);
}

void RevokeService::OnBroadcastDelivered(const BroadcastMessage& message) {
  delivered_.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kContextsPerCommunicator; ++i) {
    plane_->ReportContextRevoked(message.context + i, message.epoch,
                                 static_cast<uint32_t>(message.subject));
  }
}

}  // namespace rft::api
