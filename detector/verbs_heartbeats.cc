#include "detector/verbs_heartbeats.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "base/byte_order.h"
#include "base/log.h"
#include "transport/verbs/device.h"

namespace rft::detector {

StatusOr<std::unique_ptr<VerbsHeartbeats>> VerbsHeartbeats::Open(std::span<std::byte> slots,
                                                                 std::string* why_not) {
  StatusOr<std::optional<verbs::Endpoint>> endpoint = verbs::SelectConfiguredPort(why_not);
  if (!endpoint.ok()) return endpoint.status();
  if (!endpoint->has_value()) return std::unique_ptr<VerbsHeartbeats>();
  auto heartbeats = std::unique_ptr<VerbsHeartbeats>(new VerbsHeartbeats());
  // The message channel makes its own CQ and slots: the context's are not used.
  StatusOr<std::unique_ptr<verbs::VerbsContext>> context =
      verbs::VerbsContext::Open(**endpoint, 64, 1);
  if (!context.ok()) return context.status();
  heartbeats->context_ = std::move(*context);
  heartbeats->slots_mr_ = ibv_reg_mr(heartbeats->context_->pd(), slots.data(), slots.size(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (heartbeats->slots_mr_ == nullptr) {
    return OtherError(std::string("ibv_reg_mr of the heartbeat slots failed (") +
                      std::strerror(errno) + ")");
  }
  return heartbeats;
}

VerbsHeartbeats::~VerbsHeartbeats() {
  // The control plane destroys its message channel first: no QP writes here any more.
  if (slots_mr_ != nullptr) ibv_dereg_mr(slots_mr_);
}

std::array<std::byte, VerbsHeartbeats::kPartBytes> VerbsHeartbeats::Part() const {
  std::array<std::byte, kPartBytes> part;
  StoreLittleEndian<uint64_t>(part, 0, reinterpret_cast<uintptr_t>(slots_mr_->addr));
  StoreLittleEndian<uint32_t>(part, 8, slots_mr_->rkey);
  return part;
}

Status VerbsHeartbeats::Learn(Rank peer, std::span<const std::byte> part) {
  if (part.size() != kPartBytes) {
    return OtherError("rank " + std::to_string(peer) +
                      "'s heartbeat slots: " + std::to_string(part.size()) + " bytes, expected " +
                      std::to_string(kPartBytes));
  }
  if (peer >= peers_.size()) peers_.resize(peer + 1);
  peers_[peer] = RemoteSlots{.address = LoadLittleEndian<uint64_t>(part, 0),
                             .rkey = LoadLittleEndian<uint32_t>(part, 8),
                             .known = true};
  return Status::Ok();
}

bool VerbsHeartbeats::Put(verbs::EagerChannel& channel, Rank observer, uint64_t offset,
                          uint64_t word, bool signaled) {
  if (!knows(observer)) return false;
  const RemoteSlots& slots = peers_[observer];
  StatusOr<bool> posted =
      channel.Write(observer, word, slots.address + offset, slots.rkey, signaled);
  if (!posted.ok()) {
    // A failed QP was reported by the channel's failure callback; anything else is logged, and
    // the next period tries again.
    if (posted.status().code() != RFT_ERR_PROC_FAILED) {
      RFT_LOG_WARN("heartbeat write to rank %u: %s", observer, posted.status().ToString().c_str());
    }
    return false;
  }
  return *posted;
}

}  // namespace rft::detector
