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
#include "detector/control_subtype.h"
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

// The message channel's QP address for `self` in the channel part `rest` of a record (after
// the heartbeats' part), made for a job of `size` ranks.
StatusOr<verbs::QpAddress> ChannelAddressIn(std::span<const std::byte> rest, uint32_t size,
                                            Rank self) {
  if (rest.size() != kChannelHeader + verbs::QpAddressTableSize(size) ||
      LoadLittleEndian<uint32_t>(rest, 0) != size) {
    return OtherError(std::to_string(rest.size()) + " bytes of message QP addresses, not " +
                      "those of a job of " + std::to_string(size) + " ranks");
  }
  return verbs::DecodeQpAddressTable(rest.subspan(kChannelHeader), size, self);
}

}  // namespace

void ControlPlane::OpenVerbs() {
  if (!options_.verbs_heartbeats || size_ < 2) return;
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
        late_verbs_peers_.Erase(peer);
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
  // A replacement's parents made their QPs before it existed: each that grows sends it their
  // addresses (GrowVerbs). Its siblings connect here, as a job does at start-up.
  const Rank first = job_->own_block().first;
  uint32_t writing = 0;
  for (Rank r = first; r < parts.size(); ++r) {
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
    StatusOr<verbs::QpAddress> address =
        ChannelAddressIn(part.subspan(heartbeat_bytes), size_, self_);
    const Status linked = address.ok() ? verbs_messages_->Connect(r, *address) : address.status();
    if (!linked.ok()) {
      RFT_LOG_WARN("control messages to rank %u through UCX: %s", r, linked.ToString().c_str());
      continue;
    }
    verbs_message_peers_.Insert(r);
  }
  RFT_LOG_INFO("heartbeats by RDMA WRITE to %u of %u peers, control messages by SEND to %zu%s",
               writing, size() - 1, verbs_message_peers_.size(),
               first > 0 ? " (a replacement: its parents' QPs come as they grow)" : "");
}

void ControlPlane::GrowVerbs(uint32_t old_size,
                             const std::vector<std::optional<PeerRecord>>& records,
                             const RankSet& unpublished) {
  // Both or neither: the greeting on the channel is what tells that the peer's heartbeat QP is
  // ready too.
  if (verbs_heartbeats_ == nullptr || verbs_messages_ == nullptr) return;
  const uint32_t new_size = size();
  RankSet joining;
  for (Rank r = old_size; r < new_size; ++r) {
    const std::optional<PeerRecord>& record = records[r - old_size];
    if (!unpublished.Contains(r) && record.has_value() && !record->verbs_qps.empty()) {
      joining.Insert(r);
    }
  }
  if (joining.empty()) return;
  // The replacements take the places of failed ranks in the message channel's receive queue:
  // those the registry knows are let go here, whether or not their news was handled yet.
  const RankSet connected = verbs_message_peers_;  // the failure callback erases from it
  for (Rank r : connected) {
    if (registry_->IsFailed(r)) verbs_messages_->Disconnect(r);
  }
  Status grown = verbs_heartbeats_->Grow(new_size);
  if (grown.ok()) grown = verbs_messages_->Grow(new_size);
  if (!grown.ok()) {
    RFT_LOG_WARN("heartbeats and control messages to ranks %s through UCX: %s",
                 joining.ToString().c_str(), grown.ToString().c_str());
    return;
  }
  const size_t heartbeat_bytes = VerbsHeartbeats::PartBytes(new_size);
  for (Rank r : joining) {
    const std::span<const std::byte> part(records[r - old_size]->verbs_qps);
    Status linked = Status::Ok();
    if (part.size() <= heartbeat_bytes) {
      linked = OtherError("its record has no message QP addresses");
    } else {
      StatusOr<verbs::QpAddress> address =
          ChannelAddressIn(part.subspan(heartbeat_bytes), new_size, self_);
      linked = address.ok() ? verbs_heartbeats_->Connect(r, part.first(heartbeat_bytes),
                                                         /*writable=*/false)
                            : address.status();
      if (linked.ok()) {
        linked =
            verbs_messages_->Connect(r, *address, verbs::EagerChannel::Handshake::kAwaitGreeting);
      }
    }
    if (!linked.ok()) {
      RFT_LOG_WARN("heartbeats and control messages to rank %u, which joined, through UCX: %s", r,
                   linked.ToString().c_str());
      continue;
    }
    late_verbs_peers_.Insert(r);
    std::vector<std::byte> addresses = verbs_heartbeats_->PartFor(r);
    const std::vector<std::byte> table = verbs::EncodeSingleQpAddress(verbs_messages_->address(r));
    addresses.insert(addresses.end(), table.begin(), table.end());
    Send(r, detector::internal::kDetectorService, detector::internal::kVerbsAddress,
         addresses);  // through UCX
  }
}

void ControlPlane::OnVerbsAddress(Rank source, std::span<const std::byte> payload) {
  // Only at a replacement with verbs, once per parent; a parent sends it only when this
  // record offered verbs.
  if (verbs_heartbeats_ == nullptr || verbs_messages_ == nullptr || !job_->joined() ||
      source >= size() || source == self_ || verbs_message_peers_.Contains(source) ||
      payload.size() != VerbsHeartbeats::kPartForBytes + verbs::kSingleQpAddressSize) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  StatusOr<verbs::QpAddress> address =
      verbs::DecodeSingleQpAddress(payload.subspan(VerbsHeartbeats::kPartForBytes));
  // The parent connected both of its QPs before it sent this: both are ready.
  Status linked = address.ok() ? verbs_heartbeats_->ConnectJoined(
                                     source, payload.first(VerbsHeartbeats::kPartForBytes),
                                     /*writable=*/true)
                               : address.status();
  if (linked.ok()) {
    linked = verbs_messages_->Connect(source, *address, verbs::EagerChannel::Handshake::kGreet);
  }
  if (!linked.ok()) {
    RFT_LOG_WARN("control messages to rank %u through UCX: %s", source, linked.ToString().c_str());
    return;
  }
  verbs_message_peers_.Insert(source);
  RFT_LOG_INFO(
      "heartbeats by RDMA WRITE and control messages by SEND to rank %u, which made "
      "QPs for this replacement",
      source);
}

void ControlPlane::PromoteGreetedPeers() {
  for (Rank r : late_verbs_peers_) {
    if (!verbs_messages_->ready(r)) continue;
    verbs_heartbeats_->MarkWritable(r);
    verbs_message_peers_.Insert(r);
  }
  late_verbs_peers_ = late_verbs_peers_.Difference(verbs_message_peers_);
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
  if (!late_verbs_peers_.empty()) [[unlikely]]
    PromoteGreetedPeers();
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
