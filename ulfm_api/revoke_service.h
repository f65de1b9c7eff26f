// rft::api::RevokeService: ULFM revocation across the job, as a service of the control plane.
//
// Revoke(context, epoch) starts a flood of the revocation through the control plane's reliable
// broadcast (docs/detector.md); every live process delivers it once, the origin included, and
// hands it to its data plane (DataPlane::ReportContextRevoked), which completes what was pending
// in that context with RFT_ERR_REVOKED through the same queued hand-off as a failure. A flood
// that reached one process that stays live reaches every process that stays live, even when
// the origin dies right after starting it. Not collective; idempotent (the broadcast delivers a
// (context, epoch) once).
//
// The caller (Session::Revoke) also sends each member a notice over the data plane, the fast
// path; the flood starts soon after, not at once (ControlPlane::PostSoon). Each member that
// hears a notice relays it by a flood of its own (the same key: a no-op where the flood already
// passed), so a revocation any live member heard reaches every live member even if the origin
// died before its own flood started.
#ifndef RFT_ULFM_API_REVOKE_SERVICE_H_
#define RFT_ULFM_API_REVOKE_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "detector/control_plane.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/context_ids.h"

namespace rft::api {

class RevokeService final : private detector::ControlServiceHandler {
 public:
  // Hosts the service on `control` (ControlService::kRevoke); revocations delivered before are
  // replayed to `plane` at once. Both must outlive the service.
  static StatusOr<std::unique_ptr<RevokeService>> Create(detector::ControlPlane* control,
                                                         transport::DataPlane* plane);
  // Ends the hosting: from then on nothing reaches the data plane through this service.
  ~RevokeService();
  RevokeService(const RevokeService&) = delete;
  RevokeService& operator=(const RevokeService&) = delete;

  // Revokes the communicator whose contexts start at `context_id` (kContextsPerCommunicator of
  // them: its point-to-point and its collective context) at `epoch`, owned by `owner` (its lowest
  // job rank: disjoint communicators may share contexts and epoch), at every live process of the
  // job; each process's data plane applies it only to that communicator's life
  // (DataPlane::ReportContextRevoked). Any thread; returns once
  // the flood is handed to the control thread (this process's data plane hears it at its
  // progress soon after, like every other). RFT_ERR_OTHER once the control plane has ended.
  Status Revoke(uint32_t context_id, uint32_t epoch, uint32_t owner);

  // Revocations delivered here (once each), and control messages for the service dropped (it
  // expects none: everything it does travels by the broadcast). Any thread.
  uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Data-plane notices this process relayed by a flood of its own. Any thread.
  uint64_t relayed() const { return relayed_.load(std::memory_order_relaxed); }

 private:
  RevokeService(detector::ControlPlane* control, transport::DataPlane* plane)
      : control_(control), plane_(plane) {}
  void OnControlMessage(Rank from, uint8_t kind, std::span<const std::byte> payload) override;
  void OnBroadcastDelivered(const detector::BroadcastMessage& message) override;
  // A member's data-plane notice arrived (DataPlane::OnRevocationHeard): flood it too.
  void Relay(uint32_t context_id, uint32_t epoch, uint32_t owner);
  // Hands the flood to the control thread (PostSoon); false once the control plane has ended.
  bool Flood(uint32_t context_id, uint32_t epoch, uint32_t owner);

  detector::ControlPlane* control_;
  transport::DataPlane* plane_;
  detector::HostedService hosting_;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> relayed_{0};
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_REVOKE_SERVICE_H_
