#include "ulfm_api/revoke_service.h"

#include <utility>

namespace rft::api {

using detector::BroadcastKind;
using detector::BroadcastMessage;

StatusOr<std::unique_ptr<RevokeService>> RevokeService::Create(detector::ControlPlane* control,
                                                               transport::DataPlane* plane) {
  std::unique_ptr<RevokeService> service(new RevokeService(control, plane));
  RFT_ASSIGN_OR_RETURN(service->hosting_,
                       control->Host(transport::ControlService::kRevoke, service.get()));
  return service;
}

RevokeService::~RevokeService() { hosting_.Reset(); }

Status RevokeService::Revoke(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  const BroadcastMessage message{.kind = BroadcastKind::kRevoke,
                                 .context = context_id,
                                 .epoch = epoch,
                                 .origin = 0,
                                 .subject = owner};
  detector::ControlPlane* control = control_;
  if (!control_->Post([control, message] { control->Broadcast(message); })) {
    return OtherError("revoke of context " + std::to_string(context_id) +
                      ": the control plane has ended");
  }
  return Status::Ok();
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
