// The eager channel's setup and its peers' lives: creating it, QPs made at once or on demand,
// places in the receive queue, connecting, growing, and the ordered close (Quiet, Close and the
// close's end). The message path is in eager_channel.cc.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/log.h"
#include "transport/verbs/eager_channel.h"

namespace rft::verbs {

EagerChannel::EagerChannel(Rank self, const EagerConfig& config, uint32_t repost_batch)
    : self_(self), config_(config), repost_batch_(std::clamp(repost_batch, 1u, kRepostBatch)) {
  qpn_cache_.fill({kNoQpn, kInvalidRank});
}

StatusOr<std::unique_ptr<EagerChannel>> EagerChannel::Create(VerbsContext& context, Rank self,
                                                             uint32_t size,
                                                             const EagerConfig& config,
                                                             MessageCallback on_message,
                                                             FailureCallback on_failure) {
  // No message comes before the first Progress: the handler is set in time.
  StatusOr<std::unique_ptr<EagerChannel>> created =
      Create(context, self, size, config, nullptr, nullptr, std::move(on_failure));
  if (!created.ok()) return created.status();
  EagerChannel& c = **created;
  c.on_message_ = std::move(on_message);
  c.set_message_handler(
      [](void* channel, Rank source, std::span<const std::byte> payload) {
        static_cast<EagerChannel*>(channel)->on_message_(source, payload);
      },
      &c);
  return created;
}

StatusOr<std::unique_ptr<EagerChannel>> EagerChannel::Create(
    VerbsContext& context, Rank self, uint32_t size, const EagerConfig& config,
    MessageHandler handler, void* handler_context, FailureCallback on_failure) {
  if (size < 2 || self >= size || size > kMaxRanks) {
    return ArgError("eager channel for rank " + std::to_string(self) + " of " +
                    std::to_string(size) + " ranks: needs a peer, self < size and size <= 2^30");
  }
  if (config.slot_size < 64 || config.slot_size > (1u << 30) || config.slot_size % 64 != 0) {
    return ArgError("eager slot size " + std::to_string(config.slot_size) +
                    ": must be a multiple of 64 between 64 and 1 GiB");
  }
  StatusOr<CreditWindow> window = CreditWindow::Create(config.credits);
  if (!window.ok()) return window.status();
  // The batch of deferred reposts is at most half a window: see deferred_.
  std::unique_ptr<EagerChannel> c(new EagerChannel(self, config, window->threshold()));
  c->set_message_handler(handler, handler_context);
  c->on_failure_ = std::move(on_failure);
  c->context_ = &context;
  const uint32_t peers = size - 1;
  const uint32_t per_peer = config.credits + CreditWindow::kCreditMessagesInFlight;
  ibv_device_attr device;
  if (int rc = ibv_query_device(context.pd()->context, &device); rc != 0) {
    return CallFailed("ibv_query_device", rc);
  }
  // A place is C + 2 receives of the shared receive queue, and they and the peer's send queue
  // need room in the CQ: the device's largest of either bounds the places.
  const uint32_t send_queue = per_peer + kReadsPerPeer + config.writes_per_peer;
  // The QP's send queue has one entry more, for a close's drain marker (Close).
  const uint32_t device_places =
      std::min(static_cast<uint32_t>(std::max(device.max_srq_wr, 0)) / per_peer,
               static_cast<uint32_t>(std::max(device.max_cqe, 0)) / (per_peer + send_queue + 1));
  const uint32_t wanted = config.max_places > 0 ? std::min(peers, config.max_places) : peers;
  c->places_ = std::min(wanted, device_places);
  // QPs made at once are all connected at once, at both ends: a place for each, or none (an
  // end refused a place would leave its peer sending into a QP that never receives). On
  // demand, a pair beyond the places is refused before either end sends.
  const uint32_t needed = config.qps_on_demand ? 1 : wanted;
  if (c->places_ < needed) {
    return ArgError("eager channel: the device's shared receive queue holds " +
                    std::to_string(device.max_srq_wr) + " receives and its CQs " +
                    std::to_string(device.max_cqe) + " entries, room for " +
                    std::to_string(device_places) + " peers of " + std::to_string(per_peer) +
                    " receives and " + std::to_string(send_queue) +
                    " send queue entries, fewer than the " + std::to_string(needed) + " needed");
  }
  c->receive_slots_ = c->places_ * per_peer;
  c->send_slots_per_peer_ = per_peer;
  c->max_cqe_ = device.max_cqe;

  // Every receive slot and every send queue entry (sends, credit messages and reads) may
  // complete before the next poll (a failed QP completes its unsignaled sends too): the CQ
  // starts with the receives and grows with the QPs (ReserveCompletions).
  c->cq_entries_ = static_cast<int>(std::min<uint64_t>(
      c->receive_slots_ + uint64_t{config.qps_on_demand ? 1 : peers} * (send_queue + 1),
      static_cast<uint64_t>(std::max(device.max_cqe, 1))));
  // The CQ reports to a completion channel, so that a caller with nothing to do can sleep on
  // its fd (WaitForCompletion) instead of polling; a caller that polls never arms it.
  c->completion_channel_ = ibv_create_comp_channel(context.pd()->context);
  if (c->completion_channel_ == nullptr) return CallFailed("ibv_create_comp_channel", errno);
  RFT_RETURN_IF_ERROR(SetNonBlocking(c->completion_channel_->fd, "the completion channel"));
  c->cq_ = ibv_create_cq(context.pd()->context, c->cq_entries_, nullptr, c->completion_channel_, 0);
  if (c->cq_ == nullptr) {
    return CallFailed("ibv_create_cq (" + std::to_string(c->cq_entries_) + " entries)", errno);
  }
  ibv_srq_init_attr srq_attr;
  std::memset(&srq_attr, 0, sizeof(srq_attr));
  srq_attr.attr.max_wr = c->receive_slots_;
  srq_attr.attr.max_sge = 1;
  c->srq_ = ibv_create_srq(context.pd(), &srq_attr);
  if (c->srq_ == nullptr) {
    return CallFailed("ibv_create_srq (" + std::to_string(c->receive_slots_) + " receives)", errno);
  }
  // The first place's slots now, so that a host that cannot register them fails here; the
  // others as peers take places.
  RFT_RETURN_IF_ERROR(c->AddSlotBlock());

  // One entry more than the sends, reads and writes take: the drain marker of a close always
  // has room, however full the queue is.
  c->qp_options_.max_send_wr = send_queue + 1;
  c->qp_options_.cq = c->cq_;
  c->qp_options_.srq = c->srq_;
  c->qp_options_.max_inline_data = config.max_inline_data;
  c->qp_options_.signal_all = false;
  c->qp_options_.reads_in_flight = kReadsPerPeer;  // as many as the send queue has entries for
  c->max_inline_ = UINT32_MAX;
  if (config.qps_on_demand) {
    // Every QP of these options gets the same grant: learnt from one made and let go (its
    // send queue fits in the CQ's first size, and leaves nothing in it).
    StatusOr<std::unique_ptr<RcQp>> probe = RcQp::Create(context, c->qp_options_);
    if (!probe.ok()) return probe.status();
    c->max_inline_ = (*probe)->max_inline_data();
  }
  c->peers_.reserve(size);
  c->active_.reserve(size);
  c->by_qpn_.reserve(peers);
  for (Rank p = 0; p < size; ++p) RFT_RETURN_IF_ERROR(c->AddPeer(*window));
  std::sort(c->by_qpn_.begin(), c->by_qpn_.end());
  return c;
}

SendQueueSignals EagerChannel::FreshSignals() const {
  // The drain marker's entry is not the sends' to take. Half the queue: a completion every few
  // SENDs is cheap, and entries come back long before a burst would find the queue full.
  return SendQueueSignals(qp_options_.max_send_wr - 1, std::max(1u, send_slots_per_peer_ / 2));
}

Status EagerChannel::AddPeer(const CreditWindow& window) {
  peers_.emplace_back(window, FreshSignals());
  const Rank rank = static_cast<Rank>(peers_.size() - 1);
  if (rank == self_ || config_.qps_on_demand) return Status::Ok();
  return MakeQp(rank, /*sorted=*/false);
}

Status EagerChannel::ReserveCompletions(uint32_t send_entries) {
  const uint64_t needed = receive_slots_ + sends_reserved_ + send_entries;
  if (needed > static_cast<uint64_t>(cq_entries_)) {
    // Doubling keeps the resizes few while peers connect one by one.
    const uint64_t entries = std::min<uint64_t>(
        std::max<uint64_t>(needed, uint64_t{2} * static_cast<uint64_t>(cq_entries_)),
        static_cast<uint64_t>(max_cqe_));
    if (entries < needed) {
      return OtherError("the completion queue would need " + std::to_string(needed) +
                        " entries, beyond the device's " + std::to_string(max_cqe_));
    }
    if (int rc = ibv_resize_cq(cq_, static_cast<int>(entries)); rc != 0) {
      return CallFailed("ibv_resize_cq (" + std::to_string(cq_entries_) + " to " +
                            std::to_string(entries) + " entries)",
                        rc);
    }
    cq_entries_ = static_cast<int>(entries);
  }
  sends_reserved_ += send_entries;
  return Status::Ok();
}

Status EagerChannel::MakeQp(Rank rank, bool sorted) {
  RFT_RETURN_IF_ERROR(ReserveCompletions(qp_options_.max_send_wr));
  Peer& peer = peers_[rank];
  if (!spare_qps_.empty()) {
    peer.qp = std::move(spare_qps_.back());
    spare_qps_.pop_back();
  } else {
    StatusOr<std::unique_ptr<RcQp>> qp = RcQp::Create(*context_, qp_options_);
    if (!qp.ok()) {
      sends_reserved_ -= qp_options_.max_send_wr;
      return qp.status();
    }
    peer.qp = std::move(*qp);
  }
  const std::pair<uint32_t, Rank> entry(peer.qp->qp()->qp_num, rank);
  if (sorted) {
    by_qpn_.insert(std::lower_bound(by_qpn_.begin(), by_qpn_.end(), entry), entry);
  } else {
    by_qpn_.push_back(entry);
  }
  max_inline_ = std::min(max_inline_, peer.qp->max_inline_data());
  return Status::Ok();
}

Status EagerChannel::Open(Rank peer) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager channel: no QP for " + PeerName(peer));
  }
  Peer& p = peers_[peer];
  if (p.failed != nullptr) return ProcFailedError("eager channel: " + PeerName(peer) + " failed");
  if (p.closing) {
    return ArgError("eager channel: the QP of " + PeerName(peer) +
                    " is closing; open it again once the close ended");
  }
  if (p.qp != nullptr) return Status::Ok();
  const bool had_place = p.holds_place;
  RFT_RETURN_IF_ERROR(TakePlace(peer));
  if (Status made = MakeQp(peer, /*sorted=*/true); !made.ok()) {
    ReleasePlaceUnlessHeld(peer, had_place);
    return OtherError("a QP for " + PeerName(peer) + ": " + made.message());
  }
  return Status::Ok();
}

Status EagerChannel::Grow(uint32_t new_size) {
  const uint32_t size = this->size();
  if (new_size <= size || new_size > kMaxRanks) {
    return ArgError("eager channel: cannot grow from " + std::to_string(size) + " to " +
                    std::to_string(new_size) + " ranks: expected a larger size, at most 2^30");
  }
  // The new QPs' send queues (made now, or on demand) grow the CQ as they are made (MakeQp).
  StatusOr<CreditWindow> window = CreditWindow::Create(config_.credits);
  if (!window.ok()) return window.status();
  peers_.reserve(new_size);
  for (Rank p = size; p < new_size; ++p) RFT_RETURN_IF_ERROR(AddPeer(*window));
  std::sort(by_qpn_.begin(), by_qpn_.end());
  return Status::Ok();
}

EagerChannel::~EagerChannel() {
  // The QPs go first: an SRQ or CQ still in use cannot be destroyed.
  for (Peer& peer : peers_) peer.qp.reset();
  spare_qps_.clear();
  if (srq_ != nullptr) ibv_destroy_srq(srq_);
  for (const SlotBlock& block : blocks_) ibv_dereg_mr(block.mr);
  if (cq_ != nullptr) {
    // A CQ cannot be destroyed while events it raised are unacknowledged.
    if (unacked_events_ > 0) ibv_ack_cq_events(cq_, unacked_events_);
    ibv_destroy_cq(cq_);
  }
  if (completion_channel_ != nullptr) ibv_destroy_comp_channel(completion_channel_);
  for (const SlotBlock& block : blocks_) std::free(block.region);
}

QpAddress EagerChannel::address(Rank peer) const {
  RFT_CHECK(opened(peer), "an eager channel QP's address is read only once it is made");
  QpAddress address = peers_[peer].qp->address();
  address.eager_credits = config_.credits;
  address.eager_slot_size = static_cast<uint32_t>(config_.slot_size);
  return address;
}

Status EagerChannel::TakePlace(Rank peer) {
  Peer& p = peers_[peer];
  if (p.holds_place) return Status::Ok();
  if (holders_ >= places_) {
    return ArgError("eager channel: no place left in the receive queue for " + PeerName(peer) +
                    ": all " + std::to_string(places_) + " are held by live peers");
  }
  if (holders_ == blocks_.size()) RFT_RETURN_IF_ERROR(AddSlotBlock());
  ++holders_;
  p.holds_place = true;
  return Status::Ok();
}

Status EagerChannel::Withdraw(Rank peer) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager channel: no QP for " + PeerName(peer));
  }
  Peer& p = peers_[peer];
  if (p.connected || p.count > 0) {
    return ArgError("eager channel: the QP of " + PeerName(peer) +
                    " cannot be withdrawn: it is connected or holds messages");
  }
  if (p.qp != nullptr) {
    ForgetQp(peer);
    p.qp.reset();  // never connected: nothing of it is in the CQ
  }
  ReleasePlaceUnlessHeld(peer, /*held_before=*/false);
  return Status::Ok();
}

void EagerChannel::ForgetQp(Rank peer) {
  const std::pair<uint32_t, Rank> entry(peers_[peer].qp->qp()->qp_num, peer);
  if (std::pair<uint32_t, Rank>& cached = QpnCacheEntry(entry.first); cached.first == entry.first) {
    cached.first = kNoQpn;
  }
  const auto found = std::lower_bound(by_qpn_.begin(), by_qpn_.end(), entry);
  if (found != by_qpn_.end() && *found == entry) by_qpn_.erase(found);
  sends_reserved_ -= qp_options_.max_send_wr;
}

void EagerChannel::ReleasePlaceUnlessHeld(Rank peer, bool held_before) {
  Peer& p = peers_[peer];
  if (held_before || !p.holds_place) return;
  p.holds_place = false;
  --holders_;
}

Status EagerChannel::CheckPeerConfig(uint32_t credits, uint32_t slot_size,
                                     const std::string& peer_name) const {
  if (credits == config_.credits && slot_size == config_.slot_size) return Status::Ok();
  // A larger window than ours would overrun the SRQ's reservation for it, a larger slot our
  // receive slots (a local length error that would fail a live peer): refused before any
  // message.
  return ArgError(peer_name + " uses " + std::to_string(credits) + " credits of " +
                  std::to_string(slot_size) + "-byte slots, " + PeerName(self_) + " " +
                  std::to_string(config_.credits) + " of " + std::to_string(config_.slot_size) +
                  ": every rank of a job must use the same eager configuration");
}

Status EagerChannel::Expect(Rank peer) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager channel: no QP for " + PeerName(peer));
  }
  if (peers_[peer].failed != nullptr) {
    return ProcFailedError("eager channel: " + PeerName(peer) + " failed");
  }
  // Messages queued meanwhile go out on the QP once it is connected.
  return TakePlace(peer);
}

Status EagerChannel::Connect(Rank peer, const QpAddress& remote, Handshake handshake) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager channel: no QP for " + PeerName(peer));
  }
  Peer& p = peers_[peer];
  if (p.connected) return ArgError("eager channel: " + PeerName(peer) + " is connected already");
  if (p.failed != nullptr) return ProcFailedError("eager channel: " + PeerName(peer) + " failed");
  RFT_RETURN_IF_ERROR(CheckPeerConfig(remote.eager_credits, remote.eager_slot_size,
                                      "eager channel: " + PeerName(peer)));
  const bool had_place = p.holds_place;  // from Expect or Open
  RFT_RETURN_IF_ERROR(p.qp == nullptr ? Open(peer) : TakePlace(peer));
  if (Status s = p.qp->Connect(remote, config_.timing); !s.ok()) {
    ReleasePlaceUnlessHeld(peer, had_place);  // nothing will use it
    return OtherError("connecting to " + PeerName(peer) + ": " + s.message());
  }
  p.connected = true;
  p.ready = handshake != Handshake::kAwaitGreeting;
  if (handshake == Handshake::kGreet) {
    // The first SEND on the QP: the peer sends nothing before it arrives, and RC delivers it
    // before anything posted after it.
    RFT_RETURN_IF_ERROR(Post(peer, nullptr, 0, kNoSlot, EagerKind::kGreeting));
  }
  if (p.ready && p.count > 0) MarkActive(peer);  // queued while it was expected
  return Status::Ok();
}

Rank EagerChannel::PeerOfQpSearch(uint32_t qpn) const {
  const auto found = std::lower_bound(by_qpn_.begin(), by_qpn_.end(), std::pair(qpn, Rank{0}));
  if (found == by_qpn_.end() || found->first != qpn) return kInvalidRank;
  QpnCacheEntry(qpn) = *found;
  return found->second;
}

Status EagerChannel::CheckClosable(Rank peer, const char* what) const {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError(std::string(what) + " of " + PeerName(peer) + ": not a peer of rank " +
                    std::to_string(self_) + " in a job of " + std::to_string(peers_.size()));
  }
  const Peer& p = peers_[peer];
  if (p.failed != nullptr) {
    return ProcFailedError(std::string(what) + " of " + PeerName(peer) + ": its QP failed (" +
                           p.failed + ")");
  }
  if (!p.connected || p.closing || p.count > 0) {
    return ArgError("eager channel: " + std::string(what) + " of " + PeerName(peer) +
                    " is not possible: " +
                    (!p.connected ? std::string("it is not connected")
                     : p.closing  ? std::string("it is closing")
                                  : std::to_string(p.count) + " messages are queued for it"));
  }
  return Status::Ok();
}

Status EagerChannel::Quiet(Rank peer) {
  RFT_RETURN_IF_ERROR(CheckClosable(peer, "quieting the QP"));
  Peer& p = peers_[peer];
  p.quiet = true;
  p.ready = false;
  return Status::Ok();
}

Status EagerChannel::Close(Rank peer) {
  RFT_RETURN_IF_ERROR(CheckClosable(peer, "closing the QP"));
  Peer& p = peers_[peer];
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(p.qp->qp(), &attr, IBV_QP_STATE); rc != 0) {
    return CallFailed("moving the QP of " + PeerName(peer) + " to the error state to close it", rc);
  }
  p.closing = true;
  p.quiet = true;
  p.ready = false;
  // Requests posted to a QP in the error state complete at once, flushed, and a send queue
  // completes in order: the marker's completion comes after every other request's (signaled or
  // not: a flushed one always completes). It has the entry no other request takes.
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = kSendFreeId | (static_cast<uint64_t>(peer) << 32) | kDrainMarker;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp->qp(), &wr, &bad); rc != 0) {
    // Without its marker the close would never end: the QP is lost to this pair, as a failed
    // one is, and the layer above hears of it as a failure.
    p.closing = false;
    p.quiet = false;
    Fail(peer, "the close's drain marker could not be posted");
    return CallFailed("posting the drain marker that closes the QP of " + PeerName(peer), rc);
  }
  return Status::Ok();
}

void EagerChannel::FinishClose(Rank peer) {
  RFT_DCHECK(deferred_count_ == 0, "a close must post the deferred receives first");
  Peer& p = peers_[peer];
  ForgetQp(peer);
  if (Status reset = p.qp->Reset(); reset.ok()) {
    spare_qps_.push_back(std::move(p.qp));
  } else {
    // Destroying it waits until the device's events on it were read: read them first.
    RFT_LOG_WARN("verbs: the closed QP of %s is destroyed, not kept: %s", PeerName(peer).c_str(),
                 reset.ToString().c_str());
    PollAsyncEvents();
    p.qp.reset();
  }
  // As a peer never opened: a new QP, a full window and an empty send queue if it opens again.
  p.window = *CreditWindow::Create(config_.credits);  // the window Create checked
  p.signals = FreshSignals();
  p.connected = false;
  p.ready = false;
  p.closing = false;
  p.quiet = false;
  ReleasePlaceUnlessHeld(peer, /*held_before=*/false);
  ++p.stats.closes;
  if (on_closed_) on_closed_(peer);
}

}  // namespace rft::verbs
