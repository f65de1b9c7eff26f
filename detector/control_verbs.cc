// ControlPlane over verbs (docs/verbs.md, "Heartbeats by RDMA WRITE", "Control messages by SEND").
// Where the host has a verbs port, the control plane opens a message channel on it beside its UCX
// worker (transport/verbs/eager_channel.h), with one RC QP per peer for two uses:
// - the control messages for the peers the same-node sockets do not reach (observe requests, the
//   reliable broadcast's copies of failure news and revocations, the services' messages,
//   departures) are SENDs with immediate data into slots the receiver posted. Each completes on
//   the channel's CQ, whose completion channel is among the descriptors the control thread
//   sleeps on: a revocation wakes the peer's control thread as it lands, and a dead peer shows
//   as an error completion of a SEND to it;
// - each heartbeat is an RDMA WRITE on the same QP into the observer's slot (verbs_heartbeats.h).
// The control record carries the slots' address and key and the channel's QP addresses, for the
// peers a process talks to while none has failed: the ring's and the broadcast's neighbours
// (ReliableBroadcast::StaticNeighbors), O(log N) of them, not every rank. A message to another
// peer, one larger than a slot, or one that finds every send slot taken, goes through UCX.
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/byte_order.h"
#include "base/fault_injection.h"
#include "base/log.h"
#include "detector/control_plane.h"
#include "detector/control_subtype.h"
#include "detector/reliable_broadcast.h"
#include "transport/verbs/qp_address.h"

namespace rft::detector {
namespace {

// Control messages are few and small (failure news, ring repairs, revocations, agreement
// rounds): 2 KiB slots and 4 credits make (4 + 2) receive and as many send slots per peer,
// 24 KiB per peer. The largest agreement messages of big jobs may not fit: they take UCX. Two
// more send queue entries per peer are the heartbeats' writes: a period's word and a hand-over
// word (heartbeat_ring.h).
verbs::EagerConfig MessageChannelConfig() {
  verbs::EagerConfig config;
  config.slot_size = 2048;
  config.credits = 4;
  config.writes_per_peer = 2;
  // QPs only for the peers of the record (RecordPeers), not for every rank.
  config.qps_on_demand = true;
  return config;
}

// The message channel's part of the record, after the heartbeat slots' part: u32 rank count,
// u32 layout, then a QP address table. kNeighbors: an entry for each of the publisher's static
// neighbours, in their order (a job's first ranks); kEveryRank: an entry for every rank, zeros
// for itself (a replacement, which every survivor connects to).
constexpr size_t kChannelHeader = 8;
enum ChannelLayout : uint32_t { kNeighbors = 1, kEveryRank = 2 };

// The message channel's QP address for `reader` in the channel part `rest` of `writer`'s record
// (after the heartbeat slots' part), made for a job of `size` ranks.
StatusOr<verbs::QpAddress> ChannelAddressIn(std::span<const std::byte> rest, uint32_t size,
                                            Rank writer, Rank reader) {
  if (rest.size() < kChannelHeader || LoadLittleEndian<uint32_t>(rest, 0) != size) {
    return OtherError(std::to_string(rest.size()) + " bytes of message QP addresses, not " +
                      "those of a job of " + std::to_string(size) + " ranks");
  }
  const uint32_t layout = LoadLittleEndian<uint32_t>(rest, 4);
  const std::span<const std::byte> table = rest.subspan(kChannelHeader);
  if (layout == kEveryRank) return verbs::DecodeQpAddressTable(table, size, reader);
  if (layout != kNeighbors) {
    return OtherError("message QP addresses of layout " + std::to_string(layout) +
                      ", expected 1 (neighbours) or 2 (every rank)");
  }
  const std::vector<Rank> neighbors = ReliableBroadcast::StaticNeighbors(writer, size);
  const auto found = std::find(neighbors.begin(), neighbors.end(), reader);
  if (found == neighbors.end()) {
    return OtherError("rank " + std::to_string(reader) + " is not among its neighbours");
  }
  return verbs::DecodeQpAddressTable(table, static_cast<uint32_t>(neighbors.size()),
                                     static_cast<uint32_t>(found - neighbors.begin()));
}

}  // namespace

std::vector<Rank> ControlPlane::RecordPeers() const {
  // A replacement is connected to by every survivor (GrowVerbs) and by its siblings.
  if (job_->joined()) {
    std::vector<Rank> every;
    for (Rank r = 0; r < size_; ++r) {
      if (r != self_) every.push_back(r);
    }
    return every;
  }
  return ReliableBroadcast::StaticNeighbors(self_, size_);
}

void ControlPlane::OpenVerbs() {
  if (!options_.verbs_heartbeats || size_ < 2) return;
  std::string why_not;
  auto opened = VerbsHeartbeats::Open(std::span(slots_->data(), slots_->size()), &why_not);
  if (!opened.ok()) {
    RFT_LOG_WARN("heartbeats and control messages through UCX only: %s",
                 opened.status().ToString().c_str());
    return;
  }
  if (*opened == nullptr) {
    RFT_LOG_DEBUG("heartbeats and control messages through UCX only: %s", why_not.c_str());
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
        ReportVerbsError(peer, "control message or heartbeat write", status);
      });
  if (!channel.ok()) {
    // The heartbeats write on the channel's QPs: neither goes by verbs.
    RFT_LOG_WARN("heartbeats and control messages through UCX only: %s",
                 channel.status().ToString().c_str());
    verbs_heartbeats_.reset();
    return;
  }
  for (Rank r : RecordPeers()) {
    if (Status opened = (*channel)->Open(r); !opened.ok()) {
      RFT_LOG_WARN("heartbeats and control messages through UCX only: %s",
                   opened.ToString().c_str());
      verbs_heartbeats_.reset();
      return;
    }
  }
  verbs_messages_ = std::move(*channel);
}

bool ControlPlane::WritesHeartbeatsTo(Rank observer) const {
  return verbs_messages_ != nullptr && verbs_heartbeats_->knows(observer) &&
         verbs_messages_->ready(observer);
}

std::vector<std::byte> ControlPlane::VerbsRecordPart() const {
  if (verbs_messages_ == nullptr) return {};
  const auto slots = verbs_heartbeats_->Part();
  std::vector<std::byte> part(slots.begin(), slots.end());
  const size_t at = part.size();
  part.resize(at + kChannelHeader);
  StoreLittleEndian<uint32_t>(part, at, size_);
  std::vector<std::byte> table;
  if (job_->joined()) {
    StoreLittleEndian<uint32_t>(part, at + 4, kEveryRank);
    table = verbs::EncodeQpAddressTable(size_, self_,
                                        [this](uint32_t r) { return verbs_messages_->address(r); });
  } else {
    StoreLittleEndian<uint32_t>(part, at + 4, kNeighbors);
    const std::vector<Rank> neighbors = RecordPeers();
    table = verbs::EncodeQpAddressTable(
        static_cast<uint32_t>(neighbors.size()), verbs::kNoHole,
        [&](uint32_t i) { return verbs_messages_->address(neighbors[i]); });
  }
  part.insert(part.end(), table.begin(), table.end());
  return part;
}

Status ControlPlane::ConnectVerbsPeer(Rank peer, std::span<const std::byte> slots,
                                      const StatusOr<verbs::QpAddress>& address,
                                      verbs::EagerChannel::Handshake handshake) {
  RFT_RETURN_IF_ERROR(address.status());
  RFT_RETURN_IF_ERROR(verbs_heartbeats_->Learn(peer, slots));
  return verbs_messages_->Connect(peer, *address, handshake);
}

Status ControlPlane::ConnectRecordPart(Rank peer, std::span<const std::byte> part, uint32_t size,
                                       verbs::EagerChannel::Handshake handshake) {
  constexpr size_t kSlotBytes = VerbsHeartbeats::kPartBytes;
  if (part.size() < kSlotBytes) {
    return OtherError("its record has " + std::to_string(part.size()) +
                      " bytes of verbs addresses, fewer than the " + std::to_string(kSlotBytes) +
                      " of its heartbeat slots");
  }
  return ConnectVerbsPeer(peer, part.first(kSlotBytes),
                          ChannelAddressIn(part.subspan(kSlotBytes), size, peer, self_), handshake);
}

void ControlPlane::ConnectVerbs(const std::vector<std::vector<std::byte>>& parts) {
  if (verbs_messages_ == nullptr) return;
  // A replacement's parents made their QPs before it existed: each that grows sends it its
  // addresses (GrowVerbs). Its siblings connect here, as a job does at start-up. Only the peers
  // this process made QPs for (RecordPeers), which made one for it: a symmetric relation.
  const Rank first = job_->own_block().first;
  for (Rank r = first; r < parts.size(); ++r) {
    // A first-job peer that is not a neighbour may be connected later, on demand (OfferVerbs).
    if (first == 0 && r != self_ && !parts[r].empty()) verbs_capable_peers_.Insert(r);
    if (r == self_ || !verbs_messages_->opened(r)) continue;
    if (parts[r].empty()) {                // it puts and takes through UCX
      (void)verbs_messages_->Withdraw(r);  // never connected: its QP and place go
      continue;
    }
    const Status linked =
        ConnectRecordPart(r, parts[r], size_, verbs::EagerChannel::Handshake::kNone);
    if (!linked.ok()) {
      RFT_LOG_WARN("heartbeats and control messages to rank %u through UCX: %s", r,
                   linked.ToString().c_str());
      (void)verbs_messages_->Withdraw(r);
      continue;
    }
    verbs_message_peers_.Insert(r);
  }
  // Both counts are kept in the log line, which the soft-RoCE checks read.
  RFT_LOG_INFO("heartbeats by RDMA WRITE to %zu of %u peers, control messages by SEND to %zu%s",
               verbs_message_peers_.size(), size() - 1, verbs_message_peers_.size(),
               first > 0 ? " (a replacement: its parents' QPs come as they grow)" : "");
}

void ControlPlane::GrowVerbs(uint32_t old_size,
                             const std::vector<std::optional<PeerRecord>>& records,
                             const RankSet& unpublished) {
  if (verbs_messages_ == nullptr) return;
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
  const Status grown = verbs_messages_->Grow(new_size);
  if (!grown.ok()) {
    RFT_LOG_WARN("heartbeats and control messages to ranks %s through UCX: %s",
                 joining.ToString().c_str(), grown.ToString().c_str());
    return;
  }
  for (Rank r : joining) {
    const Status linked = ConnectRecordPart(r, records[r - old_size]->verbs_qps, new_size,
                                            verbs::EagerChannel::Handshake::kAwaitGreeting);
    if (!linked.ok()) {
      RFT_LOG_WARN("heartbeats and control messages to rank %u, which joined, through UCX: %s", r,
                   linked.ToString().c_str());
      (void)verbs_messages_->Withdraw(r);  // never connected: its QP and place go
      continue;
    }
    late_verbs_peers_.Insert(r);
    Send(r, detector::internal::kDetectorService, detector::internal::kVerbsAddress,
         VerbsAddressPayload(r));  // through UCX
  }
}

std::vector<std::byte> ControlPlane::VerbsAddressPayload(Rank peer) const {
  const auto slots = verbs_heartbeats_->Part();
  std::vector<std::byte> payload(slots.begin(), slots.end());
  const std::vector<std::byte> table = verbs::EncodeSingleQpAddress(verbs_messages_->address(peer));
  payload.insert(payload.end(), table.begin(), table.end());
  return payload;
}

void ControlPlane::OnVerbsAddress(Rank source, std::span<const std::byte> payload) {
  // At a replacement with verbs, once per parent (a parent sends it only when this record
  // offered verbs); or the answer to this process's offer.
  constexpr size_t kSlotBytes = VerbsHeartbeats::kPartBytes;
  const bool answer = offered_verbs_peers_.Contains(source);
  if (verbs_messages_ == nullptr || (!job_->joined() && !answer) || source >= size() ||
      source == self_ || verbs_message_peers_.Contains(source) ||
      payload.size() != kSlotBytes + verbs::kSingleQpAddressSize) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  offered_verbs_peers_.Erase(source);
  // The sender connected its QP before it sent this: it is ready. Should this end fail to
  // connect, the sender waits for a greeting that does not come and reaches this process
  // through UCX meanwhile (a device error at one end only).
  if (!ConnectAddressPayload(source, payload, verbs::EagerChannel::Handshake::kGreet)) return;
  verbs_message_peers_.Insert(source);
  if (answer) {
    RFT_LOG_INFO(
        "heartbeats by RDMA WRITE and control messages by SEND to rank %u on demand: "
        "it answered this process's offer",
        source);
    return;
  }
  RFT_LOG_INFO(
      "heartbeats by RDMA WRITE and control messages by SEND to rank %u, which made "
      "QPs for this replacement",
      source);
}

bool ControlPlane::ConnectAddressPayload(Rank source, std::span<const std::byte> payload,
                                         verbs::EagerChannel::Handshake handshake) {
  constexpr size_t kSlotBytes = VerbsHeartbeats::kPartBytes;
  Status linked = Status::Ok();
  if (handshake == verbs::EagerChannel::Handshake::kAwaitGreeting &&
      fault::Armed("verbs.offer.fails", self_)) [[unlikely]] {
    // An answer to an offer, failed as by a device that made the QP and could not connect it.
    linked = verbs_messages_->Open(source);
    if (linked.ok()) linked = fault::Failure("verbs.offer.fails");
  } else {
    linked = ConnectVerbsPeer(source, payload.first(kSlotBytes),
                              verbs::DecodeSingleQpAddress(payload.subspan(kSlotBytes)), handshake);
  }
  if (linked.ok()) return true;
  RFT_LOG_WARN("control messages to rank %u through UCX: %s", source, linked.ToString().c_str());
  (void)verbs_messages_->Withdraw(source);  // never connected here: its QP and place go
  return false;
}

void ControlPlane::OfferVerbs(Rank peer) {
  if (verbs_messages_ == nullptr || !verbs_capable_peers_.Contains(peer) ||
      on_demand_tried_.Contains(peer) || verbs_messages_->opened(peer)) {
    return;
  }
  // Not for a departure or its acknowledgement: a QP for a pair that is ending would only hold
  // a place.
  if (registry_->IsFailed(peer) || registry_->IsDeparted(peer) || Leaving()) return;
  on_demand_tried_.Insert(peer);
  if (Status opened = verbs_messages_->Open(peer); !opened.ok()) {
    RFT_LOG_INFO("control messages to rank %u through UCX: %s", peer, opened.ToString().c_str());
    return;
  }
  offered_verbs_peers_.Insert(peer);
  // Through UCX, ahead of the message that called for it.
  Send(peer, detector::internal::kDetectorService, detector::internal::kVerbsOffer,
       VerbsAddressPayload(peer));
}

void ControlPlane::OnVerbsOffer(Rank source, std::span<const std::byte> payload) {
  constexpr size_t kSlotBytes = VerbsHeartbeats::kPartBytes;
  if (verbs_messages_ == nullptr || source >= size() || source == self_ ||
      payload.size() != kSlotBytes + verbs::kSingleQpAddressSize) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Connected already, failed or ending (at either end): nothing to answer. The offering end
  // keeps using UCX.
  if (verbs_message_peers_.Contains(source) || late_verbs_peers_.Contains(source) ||
      registry_->IsFailed(source) || registry_->IsDeparted(source) || Leaving()) {
    return;
  }
  // Both ends offered at once: the lower rank's offer is the one answered, and this end (the
  // lower) waits for the answer to its own.
  if (offered_verbs_peers_.Contains(source) && self_ < source) return;
  offered_verbs_peers_.Erase(source);
  on_demand_tried_.Insert(source);
  // The offering end's QP waits for this end's address: this end sends nothing before its
  // greeting (kAwaitGreeting), which comes once it connected.
  if (!ConnectAddressPayload(source, payload, verbs::EagerChannel::Handshake::kAwaitGreeting)) {
    // So that the offered QP goes too, rather than hold its place for nothing.
    Send(source, detector::internal::kDetectorService, detector::internal::kVerbsDecline, {});
    return;
  }
  late_verbs_peers_.Insert(source);
  Send(source, detector::internal::kDetectorService, detector::internal::kVerbsAddress,
       VerbsAddressPayload(source));  // through UCX: source is not ready before its greeting
  RFT_LOG_INFO(
      "heartbeats by RDMA WRITE and control messages by SEND to rank %u on demand: "
      "this process answered its offer",
      source);
}

void ControlPlane::OnVerbsDecline(Rank source, std::span<const std::byte> payload) {
  if (verbs_messages_ == nullptr || !payload.empty() || !offered_verbs_peers_.Contains(source)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  offered_verbs_peers_.Erase(source);
  (void)verbs_messages_->Withdraw(source);  // never connected: its QP and place go
  RFT_LOG_INFO("control messages to rank %u through UCX: it could not connect a QP", source);
}

void ControlPlane::PromoteGreetedPeers() {
  for (Rank r : late_verbs_peers_) {
    if (verbs_messages_->ready(r)) verbs_message_peers_.Insert(r);
  }
  late_verbs_peers_ = late_verbs_peers_.Difference(verbs_message_peers_);
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
