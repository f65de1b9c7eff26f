// ControlPlane over verbs (docs/verbs.md, "Heartbeats by RDMA WRITE", "Control messages by SEND").
// Where the host has a verbs port, the control plane opens two things on it beside its UCX worker:
// - the heartbeat QPs (verbs_heartbeats.h): each heartbeat is an RDMA WRITE into the observer's
//   slot;
// - a message channel (transport/verbs/eager_channel.h): the control messages for the peers the
//   same-node sockets do not reach (observe requests, the reliable broadcast's copies of failure
//   news and revocations, the services' messages, departures) are SENDs with immediate data
//   into slots the receiver posted. Each completes on the channel's CQ, whose completion channel
//   is among the descriptors the control thread sleeps on: a revocation wakes the peer's control
//   thread as it lands, and a dead peer shows as an error completion of a SEND to it.
// Both exchange their QP addresses in the control record. A message larger than a slot, or one
// that finds every send slot taken, goes through UCX as before.
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "base/byte_order.h"
#include "base/log.h"
#include "detector/control_plane.h"
#include "transport/verbs/qp_address.h"

namespace rft::detector {
namespace {

// Control messages are few and small (failure news, ring repairs, revocations, agreement
// rounds): 2 KiB slots and 4 credits make (4 + 2) receive and as many send slots per peer,
// 24 KiB per peer. The largest agreement messages of big jobs may not fit: they take UCX.
verbs::EagerConfig MessageChannelConfig() {
  verbs::EagerConfig config;
  config.slot_size = 2048;
  config.credits = 4;
  return config;
}

// The message channel's part of the record, after the heartbeats' part: u32 rank count, then a
// QP address for every rank (zeros for itself).
constexpr size_t kChannelHeader = 4;

}  // namespace

void ControlPlane::OpenVerbs() {
  // A replacement joins after the QPs were made, and its job's records have none for it.
  if (!options_.verbs_heartbeats || job_->joined() || size_ < 2) return;
  std::string why_not;
  auto opened =
      VerbsHeartbeats::Open(self_, size_, std::span(slots_->data(), slots_->size()), &why_not);
  if (!opened.ok()) {
    RFT_LOG_WARN("heartbeats through UCX only: %s", opened.status().ToString().c_str());
    return;
  }
  if (*opened == nullptr) {
    RFT_LOG_DEBUG("heartbeats through UCX only: %s", why_not.c_str());
    return;
  }
  verbs_heartbeats_ = std::move(*opened);
  auto channel = verbs::EagerChannel::Create(
      verbs_heartbeats_->context(), self_, size_, MessageChannelConfig(),
      [this](Rank, std::span<const std::byte> message) {
        messages_received_by_verbs_.fetch_add(1, std::memory_order_relaxed);
        HandleControlMessage(message);
      },
      [this](Rank peer, std::string_view status) {
        verbs_message_peers_.Erase(peer);
        if (registry_->IsFailed(peer)) return;  // the news came first (HandleWork)
        ReportVerbsError(peer, "control message", status);
      });
  if (!channel.ok()) {
    RFT_LOG_WARN("control messages through UCX only: %s", channel.status().ToString().c_str());
    return;
  }
  verbs_messages_ = std::move(*channel);
}

std::vector<std::byte> ControlPlane::VerbsRecordPart() const {
  if (verbs_heartbeats_ == nullptr) return {};
  std::vector<std::byte> part = verbs_heartbeats_->RecordPart();
  if (verbs_messages_ == nullptr) return part;
  const size_t at = part.size();
  part.resize(at + kChannelHeader);
  StoreLittleEndian<uint32_t>(part, at, size_);
  const std::vector<std::byte> table = verbs::EncodeQpAddressTable(
      size_, self_, [this](uint32_t r) { return verbs_messages_->address(r); });
  part.insert(part.end(), table.begin(), table.end());
  return part;
}

void ControlPlane::ConnectVerbs(const std::vector<std::vector<std::byte>>& parts) {
  if (verbs_heartbeats_ == nullptr) return;
  const size_t heartbeat_bytes = VerbsHeartbeats::PartBytes(size_);
  const size_t channel_bytes = kChannelHeader + verbs::QpAddressTableSize(size_);
  uint32_t writing = 0;
  for (Rank r = 0; r < parts.size(); ++r) {
    if (r == self_ || parts[r].empty()) continue;  // it puts and takes through UCX
    const std::span<const std::byte> part(parts[r]);
    const Status status =
        verbs_heartbeats_->Connect(r, part.first(std::min(part.size(), heartbeat_bytes)));
    if (!status.ok()) {
      RFT_LOG_WARN("heartbeats to rank %u through UCX: %s", r, status.ToString().c_str());
      continue;
    }
    ++writing;
    // A peer without a channel (its Create failed) sends and takes its messages through UCX.
    if (verbs_messages_ == nullptr || part.size() == heartbeat_bytes) continue;
    const std::span<const std::byte> rest = part.subspan(heartbeat_bytes);
    Status linked = Status::Ok();
    if (rest.size() != channel_bytes || LoadLittleEndian<uint32_t>(rest, 0) != size_) {
      linked = OtherError(std::to_string(rest.size()) + " bytes of message QP addresses, not " +
                          "those of a job of " + std::to_string(size_) + " ranks");
    } else {
      StatusOr<verbs::QpAddress> address =
          verbs::DecodeQpAddressTable(rest.subspan(kChannelHeader), size_, self_);
      linked = address.ok() ? verbs_messages_->Connect(r, *address) : address.status();
    }
    if (!linked.ok()) {
      RFT_LOG_WARN("control messages to rank %u through UCX: %s", r, linked.ToString().c_str());
      continue;
    }
    verbs_message_peers_.Insert(r);
  }
  RFT_LOG_INFO("heartbeats by RDMA WRITE to %u of %u peers, control messages by SEND to %zu",
               writing, size() - 1, verbs_message_peers_.size());
}

void ControlPlane::PollVerbsHeartbeats() {
  verbs_heartbeats_->Poll([this](Rank peer, std::string_view status) {
    ReportVerbsError(peer, "heartbeat write", status);
  });
}

void ControlPlane::ReportVerbsError(Rank peer, const char* what, std::string_view status) {
  // What UCX's error callback says of a peer it cannot reach: the registry judges (a peer that
  // departed is not failed).
  RFT_LOG_INFO("%s to rank %u: %.*s", what, peer, static_cast<int>(status.size()), status.data());
  registry_->Report(peer, FailureSource::kTransport);
}

bool ControlPlane::SendVerbs(Rank to, std::span<const std::byte> header,
                             std::span<const std::byte> payload) {
  if (verbs_messages_ == nullptr || !verbs_message_peers_.Contains(to)) return false;
  if (header.size() + payload.size() > verbs_messages_->max_payload()) return false;
  StatusOr<verbs::SendResult> sent = verbs_messages_->Send(to, header, payload);
  // A failed QP: its peer was reported by the failure callback, and UCX would not reach it
  // either.
  if (!sent.ok()) return true;
  // Every send slot is held by messages waiting for credits (peers that stopped taking them):
  // UCX carries this one rather than drop it.
  if (*sent == verbs::SendResult::kFull) return false;
  messages_sent_by_verbs_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ControlPlane::PumpVerbs() {
  if (verbs_messages_ == nullptr) return false;
  const uint64_t before = messages_received_by_verbs_.load(std::memory_order_relaxed);
  StatusOr<int> handled = verbs_messages_->Progress();
  if (!handled.ok()) {
    // A header that breaks the channel's protocol: the message is not delivered.
    dropped_.fetch_add(1, std::memory_order_relaxed);
    RFT_LOG_WARN("control message by verbs: %s", handled.status().ToString().c_str());
  }
  return messages_received_by_verbs_.load(std::memory_order_relaxed) != before;
}

bool ControlPlane::ArmVerbs() {
  if (verbs_messages_ == nullptr) return true;
  StatusOr<bool> idle = verbs_messages_->ArmForSleep();
  if (!idle.ok()) {
    // The sleep is bounded by the next tick: messages then wait at most a period.
    RFT_LOG_WARN("control messages by verbs: %s", idle.status().ToString().c_str());
    return true;
  }
  if (!*idle) return false;
  poll_fds_.push_back({verbs_messages_->completion_fd(), POLLIN, 0});
  poll_fds_.push_back({verbs_heartbeats_->context().async_fd(), POLLIN, 0});
  return true;
}

void ControlPlane::TakeVerbsEvents(size_t first_fd) {
  if (verbs_messages_ == nullptr || poll_fds_.size() < first_fd + 2) return;
  if (poll_fds_[first_fd].revents == 0 && poll_fds_[first_fd + 1].revents == 0) return;
  if (verbs_messages_->TakeEvents((poll_fds_[first_fd + 1].revents & POLLIN) != 0)) {
    verbs_wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace rft::detector
