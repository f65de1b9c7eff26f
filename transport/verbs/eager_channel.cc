#include "transport/verbs/eager_channel.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/byte_order.h"

namespace rft::verbs {
namespace {

// Header: source rank 4 | payload length 4 | credits returned 2 | kind 1 | magic 1. The magic
// byte makes a slot holding something else (a bug, a stale QP's packet) fail loudly.
constexpr uint8_t kData = 1;
constexpr uint8_t kCredit = 2;  // header only; it takes no credit and is owed none
constexpr uint8_t kMagic = 0xe7;

// A work request id: its kind in the top two bits (an error completion carries only the id and
// the QP, not the opcode), the slot in the low 32.
constexpr uint64_t kRecvId = 1ull << 62;
constexpr uint64_t kSendSlotId = 2ull << 62;
constexpr uint64_t kSendInlineId = 3ull << 62;
constexpr uint64_t kKindMask = 3ull << 62;

std::string PeerName(Rank peer) { return "rank " + std::to_string(peer); }

Status CallFailed(const std::string& call, int error) {
  return OtherError(call + ": " + std::strerror(error));
}

}  // namespace

EagerChannel::EagerChannel(Rank self, const EagerConfig& config) : self_(self), config_(config) {}

StatusOr<std::unique_ptr<EagerChannel>> EagerChannel::Create(VerbsContext& context, Rank self,
                                                             uint32_t size,
                                                             const EagerConfig& config,
                                                             MessageCallback on_message,
                                                             FailureCallback on_failure) {
  if (size < 2 || self >= size) {
    return ArgError("eager channel for rank " + std::to_string(self) + " of " +
                    std::to_string(size) + " ranks: needs a peer and self < size");
  }
  if (config.slot_size < kHeaderSize + 1 || config.slot_size > (1u << 30) ||
      config.slot_size % 64 != 0) {
    return ArgError("eager slot size " + std::to_string(config.slot_size) +
                    ": must be a multiple of 64 between 64 and 1 GiB");
  }
  StatusOr<CreditWindow> window = CreditWindow::Create(config.credits);
  if (!window.ok()) return window.status();
  std::unique_ptr<EagerChannel> c(new EagerChannel(self, config));
  c->on_message_ = std::move(on_message);
  c->on_failure_ = std::move(on_failure);
  const uint32_t peers = size - 1;
  const uint32_t per_peer = config.credits + CreditWindow::kCreditMessagesInFlight;
  c->receive_slots_ = peers * per_peer;
  c->send_slots_per_peer_ = per_peer;
  const uint32_t send_slots = peers * per_peer;
  const uint32_t slots = c->receive_slots_ + send_slots;

  // Every receive slot and every send queue entry may complete before the next poll.
  const int cq_entries = static_cast<int>(c->receive_slots_ + peers * per_peer);
  c->cq_ = ibv_create_cq(context.pd()->context, cq_entries, nullptr, nullptr, 0);
  if (c->cq_ == nullptr) {
    return CallFailed("ibv_create_cq (" + std::to_string(cq_entries) + " entries)", errno);
  }
  ibv_srq_init_attr srq_attr;
  std::memset(&srq_attr, 0, sizeof(srq_attr));
  srq_attr.attr.max_wr = c->receive_slots_;
  srq_attr.attr.max_sge = 1;
  c->srq_ = ibv_create_srq(context.pd(), &srq_attr);
  if (c->srq_ == nullptr) {
    return CallFailed("ibv_create_srq (" + std::to_string(c->receive_slots_) + " receives)", errno);
  }
  const size_t bytes = static_cast<size_t>(slots) * config.slot_size;
  const size_t page = 4096;
  c->region_ = static_cast<std::byte*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
  if (c->region_ == nullptr) {
    return OtherError("cannot allocate " + std::to_string(bytes) + " bytes of eager slots");
  }
  std::memset(c->region_, 0, bytes);
  c->mr_ = ibv_reg_mr(context.pd(), c->region_, bytes, IBV_ACCESS_LOCAL_WRITE);
  if (c->mr_ == nullptr) {
    return CallFailed("ibv_reg_mr (" + std::to_string(bytes) + " bytes)", errno);
  }
  c->free_send_.reserve(send_slots);
  for (uint32_t i = 0; i < send_slots; ++i) c->free_send_.push_back(slots - 1 - i);
  for (uint32_t i = 0; i < c->receive_slots_; ++i) RFT_RETURN_IF_ERROR(c->PostReceive(i));

  RcQpOptions options;
  options.max_send_wr = per_peer;
  options.cq = c->cq_;
  options.srq = c->srq_;
  options.max_inline_data = config.max_inline_data;
  c->max_inline_ = UINT32_MAX;
  c->peers_.reserve(size);
  for (Rank p = 0; p < size; ++p) {
    c->peers_.emplace_back(*window);
    if (p == self) continue;
    StatusOr<std::unique_ptr<RcQp>> qp = RcQp::Create(context, options);
    if (!qp.ok()) return qp.status();
    Peer& peer = c->peers_.back();
    peer.qp = std::move(*qp);
    peer.waiting.resize(send_slots);
    c->by_qpn_[peer.qp->qp()->qp_num] = p;
    c->max_inline_ = std::min(c->max_inline_, peer.qp->max_inline_data());
  }
  return c;
}

EagerChannel::~EagerChannel() {
  // The QPs go first: an SRQ or CQ still in use cannot be destroyed.
  for (Peer& peer : peers_) peer.qp.reset();
  if (srq_ != nullptr) ibv_destroy_srq(srq_);
  if (mr_ != nullptr) ibv_dereg_mr(mr_);
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
  std::free(region_);
}

QpAddress EagerChannel::address(Rank peer) const { return peers_[peer].qp->address(); }

Status EagerChannel::Connect(Rank peer, const QpAddress& remote) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager channel: no QP for " + PeerName(peer));
  }
  if (Status s = peers_[peer].qp->Connect(remote, config_.timing); !s.ok()) {
    return OtherError("connecting to " + PeerName(peer) + ": " + s.message());
  }
  peers_[peer].connected = true;
  return Status::Ok();
}

Status EagerChannel::PostReceive(uint32_t index) {
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(slot(index));
  sge.length = static_cast<uint32_t>(config_.slot_size);
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = kRecvId | index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_, &wr, &bad); rc != 0) {
    return CallFailed("ibv_post_srq_recv (slot " + std::to_string(index) + ")", rc);
  }
  return Status::Ok();
}

StatusOr<SendResult> EagerChannel::Send(Rank peer, std::span<const std::byte> payload) {
  if (peer >= peers_.size() || peer == self_) {
    return ArgError("eager send to " + PeerName(peer) + ": not a peer of rank " +
                    std::to_string(self_) + " in a job of " + std::to_string(peers_.size()));
  }
  Peer& p = peers_[peer];
  if (p.failed != nullptr) {
    return ProcFailedError("eager send to " + PeerName(peer) + ": its QP failed (" + p.failed +
                           ")");
  }
  if (!p.connected) return ArgError("eager send to " + PeerName(peer) + ": not connected");
  if (payload.size() > max_payload()) {
    return ArgError("eager send to " + PeerName(peer) + ": " + std::to_string(payload.size()) +
                    " bytes, at most " + std::to_string(max_payload()) + " fit a slot");
  }
  if (free_send_.empty()) return SendResult::kFull;
  const uint32_t index = free_send_.back();
  free_send_.pop_back();
  if (!payload.empty()) std::memcpy(slot(index) + kHeaderSize, payload.data(), payload.size());
  // The length travels in the header; the rest of it is written when the slot is posted.
  StoreLittleEndian<uint32_t>(std::span<std::byte>(slot(index), kHeaderSize), 4,
                              static_cast<uint32_t>(payload.size()));
  p.waiting[(p.head + p.count) % p.waiting.size()] = index;
  ++p.count;
  p.window.Enqueue();
  RFT_RETURN_IF_ERROR(Flush(peer));
  if (p.count == 0) return SendResult::kPosted;
  ++p.stats.queued;
  return SendResult::kQueued;
}

Status EagerChannel::Post(Rank peer, uint32_t index, uint8_t kind, size_t length) {
  Peer& p = peers_[peer];
  const std::span<std::byte> header(slot(index), kHeaderSize);
  StoreLittleEndian<uint32_t>(header, 0, self_);
  StoreLittleEndian<uint32_t>(header, 4, static_cast<uint32_t>(length));
  StoreLittleEndian<uint16_t>(header, 8, static_cast<uint16_t>(p.window.TakeOwed()));
  header[10] = std::byte{kind};
  header[11] = std::byte{kMagic};
  const size_t total = kHeaderSize + length;
  const bool inline_send = total <= max_inline_;
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(slot(index));
  sge.length = static_cast<uint32_t>(total);
  sge.lkey = mr_->lkey;
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = (inline_send ? kSendInlineId : kSendSlotId) | index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp->qp(), &wr, &bad); rc != 0) {
    return CallFailed("ibv_post_send to " + PeerName(peer) + " (" + std::to_string(total) +
                          " bytes" + (inline_send ? ", inline)" : ")"),
                      rc);
  }
  ++p.sq_outstanding;
  // An inline SEND's bytes were copied into the work request: the slot is free already.
  if (inline_send) free_send_.push_back(index);
  if (kind == kData) {
    ++p.stats.sent;
    if (inline_send) ++p.stats.sent_inline;
    p.stats.max_in_flight = std::max(p.stats.max_in_flight, p.window.in_flight());
  } else {
    ++p.stats.credit_messages;
  }
  return Status::Ok();
}

Status EagerChannel::Flush(Rank peer) {
  Peer& p = peers_[peer];
  while (p.sq_outstanding < send_slots_per_peer_ && p.window.TryDispatch()) {
    const uint32_t index = p.waiting[p.head];
    p.head = (p.head + 1) % p.waiting.size();
    --p.count;
    const std::span<const std::byte> header(slot(index), kHeaderSize);
    RFT_RETURN_IF_ERROR(Post(peer, index, kData, LoadLittleEndian<uint32_t>(header, 4)));
  }
  return Status::Ok();
}

Status EagerChannel::SendCreditIfDue(Rank peer) {
  Peer& p = peers_[peer];
  // A message that was just posted carried the credits; otherwise they must go on their own or
  // a peer that only sends would wait for them forever.
  if (!p.window.CreditMessageDue() || p.sq_outstanding >= send_slots_per_peer_ ||
      free_send_.empty()) {
    return Status::Ok();  // tried again on the next Progress
  }
  const uint32_t index = free_send_.back();
  free_send_.pop_back();
  return Post(peer, index, kCredit, 0);
}

StatusOr<int> EagerChannel::Progress() {
  ibv_wc wcs[32];
  const int n = ibv_poll_cq(cq_, 32, wcs);
  if (n < 0) return OtherError("ibv_poll_cq returned " + std::to_string(n));
  for (int i = 0; i < n; ++i) RFT_RETURN_IF_ERROR(Handle(wcs[i]));
  for (Rank peer = 0; peer < peers_.size(); ++peer) {
    const Peer& p = peers_[peer];
    if (peer == self_ || !p.connected || p.failed != nullptr) continue;
    RFT_RETURN_IF_ERROR(Flush(peer));
    RFT_RETURN_IF_ERROR(SendCreditIfDue(peer));
  }
  return n;
}

Status EagerChannel::Handle(const ibv_wc& wc) {
  const auto found = by_qpn_.find(wc.qp_num);
  if (found == by_qpn_.end()) {
    return OtherError("eager channel: completion on QP " + std::to_string(wc.qp_num) +
                      ", which is none of this channel's");
  }
  const Rank peer = found->second;
  Peer& p = peers_[peer];
  const uint64_t kind = wc.wr_id & kKindMask;
  const uint32_t index = static_cast<uint32_t>(wc.wr_id);
  if (kind == kRecvId) {
    if (wc.status != IBV_WC_SUCCESS) {
      Fail(peer, wc.status);
      return PostReceive(index);
    }
    return Receive(peer, index, wc.byte_len);
  }
  --p.sq_outstanding;
  if (kind == kSendSlotId) free_send_.push_back(index);
  if (wc.status != IBV_WC_SUCCESS) Fail(peer, wc.status);
  return Status::Ok();
}

Status EagerChannel::Receive(Rank peer, uint32_t index, uint32_t byte_len) {
  Peer& p = peers_[peer];
  const std::span<const std::byte> header(slot(index), kHeaderSize);
  // Built only on an error path: the receive path allocates nothing.
  const auto from = [peer] { return "eager message from " + PeerName(peer); };
  if (byte_len < kHeaderSize) {
    return OtherError(from() + ": " + std::to_string(byte_len) + " bytes, shorter than a header");
  }
  const uint8_t magic = static_cast<uint8_t>(header[11]);
  const uint8_t kind = static_cast<uint8_t>(header[10]);
  const uint32_t source = LoadLittleEndian<uint32_t>(header, 0);
  const uint32_t length = LoadLittleEndian<uint32_t>(header, 4);
  if (magic != kMagic || (kind != kData && kind != kCredit)) {
    return OtherError(from() + ": header magic " + std::to_string(magic) + " kind " +
                      std::to_string(kind) + ", not an eager header");
  }
  if (source != peer) {
    return OtherError(from() + "'s QP: header names rank " + std::to_string(source));
  }
  if (length != byte_len - kHeaderSize || (kind == kCredit && length != 0)) {
    return OtherError(from() + ": header says " + std::to_string(length) + " bytes, " +
                      std::to_string(byte_len - kHeaderSize) + " arrived");
  }
  if (Status s = p.window.Return(LoadLittleEndian<uint16_t>(header, 8)); !s.ok()) {
    return OtherError(from() + ": " + s.message());
  }
  if (kind == kData) {
    ++p.stats.received;
    on_message_(peer, std::span<const std::byte>(slot(index) + kHeaderSize, length));
  }
  // The credit goes back only once the slot is posted again: until then the sender's next
  // message could find the SRQ short of its reservation.
  RFT_RETURN_IF_ERROR(PostReceive(index));
  if (kind == kData) {
    if (Status s = p.window.Reposted(); !s.ok()) return OtherError(from() + ": " + s.message());
  }
  return Status::Ok();
}

void EagerChannel::Fail(Rank peer, ibv_wc_status status) {
  Peer& p = peers_[peer];
  if (p.failed != nullptr) return;  // the flushes that follow the first error say nothing new
  p.failed = ibv_wc_status_str(status);
  // Messages that never left cannot reach a dead peer: their slots go back to the pool.
  for (; p.count > 0; --p.count) {
    free_send_.push_back(p.waiting[p.head]);
    p.head = (p.head + 1) % p.waiting.size();
  }
  if (on_failure_) on_failure_(peer, p.failed);
}

bool EagerChannel::Idle() const {
  for (Rank peer = 0; peer < peers_.size(); ++peer) {
    const Peer& p = peers_[peer];
    if (peer == self_ || p.failed != nullptr) continue;
    if (p.count > 0 || p.sq_outstanding > 0 || p.window.CreditMessageDue()) return false;
  }
  return true;
}

}  // namespace rft::verbs
