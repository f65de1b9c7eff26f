// The message path: sends, reads and writes, the completions that deliver messages and return
// credits, the slots' reposts, failures, and sleeping on the completion channel. Creating the
// channel, peers taking places, connecting and closing are in eager_setup.cc.
#include "transport/verbs/eager_channel.h"

#include <endian.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/log.h"

namespace rft::verbs {

Status EagerChannel::AddSlotBlock() {
  const uint32_t per_kind = send_slots_per_peer_;  // C + 2 receive slots, as many send slots
  const size_t bytes = size_t{2} * per_kind * config_.slot_size;
  const size_t page = 4096;
  auto* region =
      static_cast<std::byte*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
  if (region == nullptr) {
    return OtherError("cannot allocate " + std::to_string(bytes) + " bytes of eager slots");
  }
  std::memset(region, 0, bytes);
  ibv_mr* mr = ibv_reg_mr(context_->pd(), region, bytes, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) {
    const int error = errno;
    std::free(region);
    return CallFailed("ibv_reg_mr (" + std::to_string(bytes) + " bytes of eager slots)", error);
  }
  blocks_.push_back(SlotBlock{.region = region, .mr = mr});
  const uint32_t first = static_cast<uint32_t>(slots_.size());
  for (uint32_t i = 0; i < 2 * per_kind; ++i) {
    slots_.push_back(Slot{.address = region + i * config_.slot_size, .lkey = mr->lkey});
  }
  for (uint32_t i = 0; i < per_kind; ++i) free_send_.push_back(first + 2 * per_kind - 1 - i);
  for (uint32_t i = 0; i < per_kind; ++i) RFT_RETURN_IF_ERROR(PostReceive(first + i));
  return Status::Ok();
}

// Inline: the deferred reposts come here, once per message or per batch.
[[gnu::always_inline]] inline Status EagerChannel::PostReceives(ibv_recv_wr* first,
                                                                uint32_t count) {
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_, first, &bad); rc != 0) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] {
      return "ibv_post_srq_recv of " + std::to_string(count) + " receives (slot " +
             std::to_string(bad != nullptr ? bad->wr_id & ~kKindMask : 0) +
             " refused): " + std::strerror(rc);
    });
  }
  return Status::Ok();
}

// Inline: a credit message's or a greeting's slot goes back from Receive, inline in
// HandlePolled.
[[gnu::always_inline]] inline Status EagerChannel::PostReceive(uint32_t index) {
  ibv_sge sge;
  ibv_recv_wr wr;
  FillReceive(index, wr, sge);
  return PostReceives(&wr, 1);
}

void EagerChannel::MarkActive(Rank peer) {
  Peer& p = peers_[peer];
  if (p.active) return;
  p.active = true;
  active_.push_back(peer);
}

Status EagerChannel::CheckPeerError(Rank peer, const char* what) const {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError(std::string(what) + " to " + PeerName(peer) + ": not a peer of rank " +
                    std::to_string(self_) + " in a job of " + std::to_string(peers_.size()));
  }
  if (peers_[peer].failed != nullptr) {
    return ProcFailedError(std::string(what) + " to " + PeerName(peer) + ": its QP failed (" +
                           peers_[peer].failed + ")");
  }
  if (peers_[peer].quiet) {
    return ArgError(std::string(what) + " to " + PeerName(peer) + ": its QP is closing (quiet)");
  }
  return Status::Ok();
}

StatusOr<SendResult> EagerChannel::Send(Rank peer, std::span<const std::byte> first,
                                        std::span<const std::byte> second, bool queue) {
  RFT_RETURN_IF_ERROR(CheckPeer(peer, "eager send"));
  Peer& p = peers_[peer];
  const size_t total = first.size() + second.size();
  if ((!p.ready && !p.holds_place) || total > max_payload()) [[unlikely]] {
    return ColdError(RFT_ERR_ARG, [&] {
      return "eager send to " + PeerName(peer) +
             (!p.ready && !p.holds_place ? std::string(": not connected")
                                         : ": " + std::to_string(total) + " bytes, at most " +
                                               std::to_string(max_payload()) + " fit a slot");
    });
  }
  const uint32_t length = static_cast<uint32_t>(total);
  // Inline, the bytes are copied into the work request as it is posted: when nothing waits
  // ahead of it, the message needs no slot and no copy of its own (a gathered one is joined on
  // the stack first: the QPs take one scatter/gather entry).
  if (length <= kMaxGatheredInline && CanPostInlineNow(p, length)) {
    alignas(8) std::byte joined[kMaxGatheredInline];
    const std::byte* data = first.data();
    if (!second.empty()) {
      if (!first.empty()) std::memcpy(joined, first.data(), first.size());
      std::memcpy(joined + first.size(), second.data(), second.size());
      data = joined;
    }
    RFT_RETURN_IF_ERROR(PostInlineNow(peer, data, length));
    return SendResult::kPosted;
  }
  // Without a queue, only a message Flush will post at once is taken.
  if (free_send_.empty() ||
      (!queue && (p.count > 0 || !p.ready || !p.signals.has_room() || p.window.credits() == 0))) {
    return SendResult::kFull;
  }
  const uint32_t index = free_send_.back();
  free_send_.pop_back();
  if (!first.empty()) std::memcpy(slot(index), first.data(), first.size());
  if (!second.empty()) std::memcpy(slot(index) + first.size(), second.data(), second.size());
  Enqueue(p, index, length);
  p.window.Enqueue();
  RFT_RETURN_IF_ERROR(Flush(peer));
  if (p.count == 0) return SendResult::kPosted;
  ++p.stats.queued;
  MarkActive(peer);
  return SendResult::kQueued;
}

StatusOr<bool> EagerChannel::Read(Rank peer, void* local, uint32_t lkey, uint64_t remote_address,
                                  uint32_t rkey, uint32_t length, uint32_t token) {
  if (peer >= peers_.size() || peer == self_ || !peers_[peer].ready) {
    return ArgError("RDMA read from " + PeerName(peer) + ": not a connected and ready peer");
  }
  Peer& p = peers_[peer];
  if (p.failed != nullptr) {
    return ProcFailedError("RDMA read from " + PeerName(peer) + ": its QP failed (" + p.failed +
                           ")");
  }
  if (!p.signals.has_room()) return false;
  p.signals.Take(/*must=*/true);  // its completion is what the caller waits for
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(local);
  sge.length = length;
  sge.lkey = lkey;
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = kReadId | (static_cast<uint64_t>(peer) << 32) | token;
  wr.sg_list = length > 0 ? &sge : nullptr;
  wr.num_sge = length > 0 ? 1 : 0;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_address;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp->qp(), &wr, &bad); rc != 0) {
    return CallFailed("ibv_post_send of an RDMA read of " + std::to_string(length) +
                          " bytes from " + PeerName(peer),
                      rc);
  }
  return true;
}

StatusOr<bool> EagerChannel::Write(Rank peer, uint64_t word, uint64_t remote_address, uint32_t rkey,
                                   bool signaled) {
  RFT_RETURN_IF_ERROR(CheckPeer(peer, "RDMA write"));
  Peer& p = peers_[peer];
  if (!p.ready || !p.signals.has_room()) return false;
  const bool inline_write = max_inline_ >= sizeof(word);
  uint32_t index = kNoSlot;
  ibv_sge sge;
  sge.length = sizeof(word);
  sge.lkey = 0;  // inline: no key is read
  if (inline_write) {
    sge.addr = reinterpret_cast<uintptr_t>(&word);  // copied as it is posted
  } else {
    if (free_send_.empty()) return false;
    index = free_send_.back();
    free_send_.pop_back();
    std::memcpy(slot(index), &word, sizeof(word));
    sge.addr = reinterpret_cast<uintptr_t>(slot(index));
    sge.lkey = slots_[index].lkey;
  }
  // From a slot, its completion frees the slot: signaled, as a SEND from a slot is.
  const bool signal = p.signals.Take(signaled || !inline_write);
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = (inline_write ? kSendFreeId : kSendSlotId) | (static_cast<uint64_t>(peer) << 32) |
             (inline_write ? 0 : index);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = (signal ? IBV_SEND_SIGNALED : 0) | (inline_write ? IBV_SEND_INLINE : 0);
  wr.wr.rdma.remote_addr = remote_address;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp->qp(), &wr, &bad); rc != 0) {
    if (!inline_write) free_send_.push_back(index);
    return CallFailed("ibv_post_send of an RDMA write to " + PeerName(peer), rc);
  }
  ++p.stats.writes;
  return true;
}

void EagerChannel::Disconnect(Rank peer) {
  if (peer >= peers_.size() || peer == self_) return;
  Peer& p = peers_[peer];
  if (p.failed != nullptr) return;
  // A QP never connected (or never made) is still in the reset state, which receives nothing
  // and cannot move to the error state.
  if (p.connected) {
    ibv_qp_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    if (int rc = ibv_modify_qp(p.qp->qp(), &attr, IBV_QP_STATE); rc != 0) {
      RFT_LOG_WARN("verbs: moving the QP of %s to the error state failed (%s)",
                   PeerName(peer).c_str(), std::strerror(rc));
    }
  }
  Fail(peer, "reported failed");
}

Status EagerChannel::PostFailed(Rank peer, uint32_t length, bool inline_send, int error) const {
  return OtherError("ibv_post_send to " + PeerName(peer) + " (" + std::to_string(length) +
                    " bytes" + (inline_send ? ", inline): " : "): ") + std::strerror(error));
}

Status EagerChannel::Flush(Rank peer) {
  Peer& p = peers_[peer];
  while (p.count > 0 && p.ready && p.signals.has_room() && p.window.TryDispatch()) {
    uint32_t length = 0;
    const uint32_t index = Dequeue(p, &length);
    RFT_RETURN_IF_ERROR(Post(peer, slot(index), length, index, EagerKind::kData));
  }
  return Status::Ok();
}

void EagerChannel::Enqueue(Peer& peer, uint32_t index, uint32_t length) {
  slots_[index].queued_length = length;
  slots_[index].queued_next = kNoSlot;
  if (peer.count == 0) {
    peer.head = index;
  } else {
    slots_[peer.tail].queued_next = index;
  }
  peer.tail = index;
  ++peer.count;
}

uint32_t EagerChannel::Dequeue(Peer& peer, uint32_t* length) {
  const uint32_t index = peer.head;
  *length = slots_[index].queued_length;
  peer.head = slots_[index].queued_next;
  if (--peer.count == 0) peer.tail = kNoSlot;
  return index;
}

Status EagerChannel::SendCreditIfDue(Rank peer) {
  Peer& p = peers_[peer];
  // A message that was just posted carried the credits; otherwise they must go on their own or
  // a peer that only sends would wait for them forever. A credit message has no payload, so it
  // needs a send queue entry but no slot.
  if (!p.window.CreditMessageDue() || !p.signals.has_room()) {
    return Status::Ok();  // tried again on the next Progress
  }
  return Post(peer, nullptr, 0, kNoSlot, EagerKind::kCredit);
}

int EagerChannel::Broke(Status error) {
  error_ = std::move(error);
  return -1;
}

// The one frame between the caller's poll and a message's delivery: a delivered message (nearly
// every completion of a latency-bound exchange) is handled here, inline, the rest by Handle.
int EagerChannel::HandlePolled(int n) {
  // polled_ is one array: a callback must not poll again while its completions are handled.
  RFT_DCHECK(!handling_polled_, "EagerChannel::Progress called from one of its callbacks");
  if (n < 0) [[unlikely]] {
    return Broke(
        ColdError(RFT_ERR_OTHER, [n] { return "ibv_poll_cq returned " + std::to_string(n); }));
  }
  handling_polled_ = true;
  struct Leave {  // on every return
    bool& flag;
    ~Leave() { flag = false; }
  } leave{handling_polled_};
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = polled_[i];
    Rank peer = kInvalidRank;
    if ((wc.wr_id & kKindMask) == kRecvId && wc.status == IBV_WC_SUCCESS) [[likely]] {
      peer = PeerOfQp(wc.qp_num);
    }
    Status handled =
        peer != kInvalidRank ? Receive(peer, static_cast<uint32_t>(wc.wr_id), wc) : Handle(wc);
    if (!handled.ok()) [[unlikely]]
      return Broke(std::move(handled));
  }
  // A pass that found nothing is the wait for the next message: the slots go back now.
  if (deferred_count_ > 0 && (n == 0 || deferred_count_ >= repost_batch_)) {
    if (Status s = RepostDeferred(); !s.ok()) [[unlikely]]
      return Broke(std::move(s));
  }
  for (size_t i = 0; i < active_.size();) {
    const Rank peer = active_[i];
    Peer& p = peers_[peer];
    // A quiet QP posts nothing more: the credits it owes are not needed any more.
    const bool posts = p.failed == nullptr && !p.quiet;
    if (posts) {
      if (Status s = Flush(peer); !s.ok()) [[unlikely]]
        return Broke(std::move(s));
      if (Status s = SendCreditIfDue(peer); !s.ok()) [[unlikely]]
        return Broke(std::move(s));
    }
    if (!posts || (p.count == 0 && !p.window.CreditMessageDue())) {
      p.active = false;
      active_[i] = active_.back();
      active_.pop_back();
    } else {
      ++i;
    }
  }
  return n;
}

Status EagerChannel::Handle(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kKindMask;
  const uint32_t index = static_cast<uint32_t>(wc.wr_id);
  if (kind == kRecvId) {
    // HandlePolled delivered the others: an error, or a QP that is none of this channel's.
    const Rank peer = PeerOfQp(wc.qp_num);
    if (wc.status != IBV_WC_SUCCESS) {
      // A receive flushed by a quiet QP (or one closed since: a spare's) is the close's.
      if (peer != kInvalidRank && !peers_[peer].quiet) Fail(peer, ibv_wc_status_str(wc.status));
      return PostReceive(index);
    }
    return ColdError(RFT_ERR_OTHER, [&] {
      return "eager channel: receive completion on QP " + std::to_string(wc.qp_num) +
             ", which is none of this channel's";
    });
  }
  const Rank peer = static_cast<Rank>((wc.wr_id >> 32) & kPeerMask);
  Peer& p = peers_[peer];
  if (kind == kReadId) {
    const bool ok = wc.status == IBV_WC_SUCCESS;
    if (!ok) {
      if (!p.quiet) Fail(peer, ibv_wc_status_str(wc.status));
    } else if (p.failed == nullptr && !p.quiet && !p.signals.Completed()) {
      return ColdError(RFT_ERR_OTHER, [peer] {
        return "eager channel: a read completion for " + PeerName(peer) +
               " that no signaled work request awaited";
      });
    }
    if (on_read_) on_read_(index, ok);
    return Status::Ok();
  }
  if (kind == kSendSlotId) free_send_.push_back(index);
  if (kind == kSendFreeId && index == kDrainMarker) {
    // Everything posted before it completed. A peer failed meanwhile keeps its QP, as others do.
    if (p.closing && p.failed == nullptr) {
      // Its slots waiting to be posted owe credits to the window the close replaces.
      RFT_RETURN_IF_ERROR(RepostDeferred());
      FinishClose(peer);
    }
    return Status::Ok();
  }
  if (wc.status != IBV_WC_SUCCESS) {
    // A failed QP completes unsignaled sends too, so the count is not kept past the first
    // error: nothing is posted to the peer again. A quiet one's errors are its flushes.
    if (p.quiet) {
      ++p.stats.flushed;
    } else {
      Fail(peer, ibv_wc_status_str(wc.status));
    }
    return Status::Ok();
  }
  if (p.failed != nullptr || p.quiet) return Status::Ok();
  if (!p.signals.Completed()) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] {
      return "eager channel: a send completion for " + PeerName(peer) +
             " that no signaled send awaited (work request id " + std::to_string(wc.wr_id) + ")";
    });
  }
  return Status::Ok();
}

[[gnu::always_inline]] inline Status EagerChannel::Receive(Rank peer, uint32_t index,
                                                           const ibv_wc& wc) {
  Peer& p = peers_[peer];
  // Built only on an error path, in a cold function (ColdError): the receive path allocates
  // nothing and its frame holds no string.
  const auto from = [peer] { return "eager message from " + PeerName(peer); };
  if (wc.opcode != IBV_WC_RECV || (wc.wc_flags & IBV_WC_WITH_IMM) == 0) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] {
      return from() + ": " + std::to_string(wc.byte_len) + " bytes " +
             (wc.opcode != IBV_WC_RECV ? "by an RDMA WRITE with immediate data"
                                       : "without immediate data") +
             ", not an eager SEND";
    });
  }
  const uint32_t imm = be32toh(wc.imm_data);
  EagerImm header;
  if (!DecodeEagerImm(imm, &header)) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] { return from() + ": " + DescribeBadEagerImm(imm); });
  }
  if (header.kind != EagerKind::kData && wc.byte_len != 0) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] {
      return from() + ": a " + (header.kind == EagerKind::kCredit ? "credit message" : "greeting") +
             " with " + std::to_string(wc.byte_len) + " bytes of payload";
    });
  }
  if (header.kind == EagerKind::kGreeting) {
    // Only a peer this end connected to first, and waits for, greets it; once.
    if (p.ready) {
      return ColdError(RFT_ERR_OTHER,
                       [&] { return from() + ": a greeting, which it was not to send"; });
    }
    p.ready = true;
    if (p.count > 0) MarkActive(peer);  // what waited for it goes out at this Progress
    ++p.stats.greetings;
    return PostReceive(index);
  }
  if (Status s = p.window.Return(header.credits); !s.ok()) [[unlikely]] {
    return ColdError(RFT_ERR_OTHER, [&] { return from() + ": " + s.message(); });
  }
  if (header.kind != EagerKind::kData) return PostReceive(index);  // a credit message
  ++p.stats.received;
  message_handler_(message_context_, peer, std::span<const std::byte>(slot(index), wc.byte_len));
  // The slot is posted again later (deferred_), and only then is its credit owed: until then
  // the sender's next message could find the SRQ short of its reservation.
  if (deferred_count_ == std::size(deferred_)) [[unlikely]]
    RFT_RETURN_IF_ERROR(RepostDeferred());
  deferred_[deferred_count_++] = DeferredRepost{.index = index, .peer = peer};
  return Status::Ok();
}

Status EagerChannel::RepostDeferred() {
  const uint32_t count = deferred_count_;
  if (count == 0) return Status::Ok();
  deferred_count_ = 0;
  ibv_sge sges[std::size(deferred_)];
  ibv_recv_wr wrs[std::size(deferred_)];
  for (uint32_t i = 0; i < count; ++i) {
    FillReceive(deferred_[i].index, wrs[i], sges[i]);
    if (i > 0) wrs[i - 1].next = &wrs[i];
  }
  RFT_RETURN_IF_ERROR(PostReceives(wrs, count));
  for (uint32_t i = 0; i < count; ++i) {
    const Rank peer = deferred_[i].peer;
    Peer& p = peers_[peer];
    if (Status s = p.window.Reposted(); !s.ok()) [[unlikely]] {
      return ColdError(RFT_ERR_OTHER,
                       [&] { return "eager message from " + PeerName(peer) + ": " + s.message(); });
    }
    if (p.window.CreditMessageDue()) MarkActive(peer);
  }
  return Status::Ok();
}

StatusOr<bool> EagerChannel::ArmForSleep() {
  if (!armed_) {
    if (int rc = ibv_req_notify_cq(cq_, 0); rc != 0) return CallFailed("ibv_req_notify_cq", rc);
    armed_ = true;
  }
  // A completion that came before the CQ was armed raises no event: look once more.
  StatusOr<int> polled = Progress();
  if (!polled.ok()) return polled.status();
  return *polled == 0;
}

bool EagerChannel::TakeEvents(bool async_readable) {
  bool woken = false;
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  // Non-blocking: -1 with EAGAIN once none is left. Each event disarms the CQ.
  while (ibv_get_cq_event(completion_channel_, &cq, &cq_context) == 0) {
    ++unacked_events_;
    armed_ = false;
    woken = true;
  }
  // Acknowledging takes a lock in libibverbs: done in batches, and all at destruction.
  if (unacked_events_ >= kAckBatch) {
    ibv_ack_cq_events(cq_, unacked_events_);
    unacked_events_ = 0;
  }
  if (async_readable && PollAsyncEvents() > 0) woken = true;
  if (woken) ++wakeups_;
  return woken;
}

StatusOr<bool> EagerChannel::WaitForCompletion(int timeout_ms) {
  StatusOr<bool> idle = ArmForSleep();
  if (!idle.ok()) return idle.status();
  if (!*idle) return true;
  pollfd fds[2] = {{.fd = completion_channel_->fd, .events = POLLIN, .revents = 0},
                   {.fd = context_->async_fd(), .events = POLLIN, .revents = 0}};
  if (poll(fds, 2, timeout_ms) < 0) {
    if (errno == EINTR) return false;
    return CallFailed("poll on the completion channel", errno);
  }
  return TakeEvents((fds[1].revents & POLLIN) != 0);
}

int EagerChannel::PollAsyncEvents() {
  return context_->ReadAsyncEvents([this](const AsyncEvent& event) {
    const char* name = AsyncEventName(event.type);
    switch (ClassifyAsyncEvent(event.type)) {
      case AsyncEffect::kQpFailed: {
        const Rank peer = PeerOfQp(event.qp_num);
        // Another owner's QP otherwise; a quiet one's end is this process's choice.
        if (peer != kInvalidRank && !peers_[peer].quiet) Fail(peer, name);
        break;
      }
      case AsyncEffect::kDeviceFatal:
        for (Rank peer = 0; peer < peers_.size(); ++peer) {
          if (peer != self_) Fail(peer, name);
        }
        break;
      case AsyncEffect::kPortDown:
        ++device_stats_.port_down;
        RFT_LOG_WARN(
            "verbs: %s on port %u; peers still unreachable when the QPs' retries run "
            "out will be reported failed",
            name, event.port_num);
        break;
      case AsyncEffect::kPortUp:
        ++device_stats_.port_up;
        RFT_LOG_INFO("verbs: %s on port %u", name, event.port_num);
        break;
      case AsyncEffect::kNone:
        ++device_stats_.other;
        break;
    }
  });
}

void EagerChannel::Fail(Rank peer, const char* why) {
  Peer& p = peers_[peer];
  if (p.failed != nullptr) return;  // the flushes that follow the first error say nothing new
  p.failed = why;
  // Its QP receives nothing more: its place in the receive queue goes to a peer that joins.
  ReleasePlaceUnlessHeld(peer, /*held_before=*/false);
  // Messages that never left cannot reach a dead peer: their slots go back to the pool.
  while (p.count > 0) {
    uint32_t length = 0;
    free_send_.push_back(Dequeue(p, &length));
  }
  if (on_failure_) on_failure_(peer, p.failed);
}

bool EagerChannel::Idle() const {
  if (deferred_count_ > 0) return false;  // credits to owe once their slots are posted
  for (Rank peer = 0; peer < peers_.size(); ++peer) {
    const Peer& p = peers_[peer];
    if (peer == self_ || p.failed != nullptr) continue;
    if (p.count > 0 || p.signals.awaited() > 0 || p.window.CreditMessageDue()) return false;
  }
  return true;
}

}  // namespace rft::verbs
