#include "detector/verbs_heartbeats.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "base/byte_order.h"
#include "transport/verbs/device.h"
#include "transport/verbs/qp_address.h"

namespace rft::detector {
namespace {

// The record part's header: rank count, slots address, rkey.
constexpr size_t kPartHeader = 4 + 8 + 4;
// Writes per QP awaiting their completion: a period's word and a hand-over word (heartbeat_ring.h).
constexpr uint32_t kInFlightPerPeer = 2;

}  // namespace

size_t VerbsHeartbeats::PartBytes(uint32_t size) {
  return kPartHeader + verbs::QpAddressTableSize(size);
}

StatusOr<std::unique_ptr<VerbsHeartbeats>> VerbsHeartbeats::Open(Rank self, uint32_t size,
                                                                 std::span<std::byte> slots,
                                                                 std::string* why_not) {
  StatusOr<std::optional<verbs::Endpoint>> endpoint = verbs::SelectConfiguredPort(why_not);
  if (!endpoint.ok()) return endpoint.status();
  if (!endpoint->has_value()) return std::unique_ptr<VerbsHeartbeats>();
  auto heartbeats = std::unique_ptr<VerbsHeartbeats>(new VerbsHeartbeats());
  heartbeats->self_ = self;
  // The context's buffer stages words for a device that cannot send them inline.
  StatusOr<std::unique_ptr<verbs::VerbsContext>> context =
      verbs::VerbsContext::Open(**endpoint, size * kInFlightPerPeer * sizeof(uint64_t),
                                static_cast<int>(size * kInFlightPerPeer + 16));
  if (!context.ok()) return context.status();
  heartbeats->context_ = std::move(*context);
  heartbeats->slots_mr_ = ibv_reg_mr(heartbeats->context_->pd(), slots.data(), slots.size(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (heartbeats->slots_mr_ == nullptr) {
    return OtherError(std::string("ibv_reg_mr of the heartbeat slots failed (") +
                      std::strerror(errno) + ")");
  }
  heartbeats->staging_ranks_ = size;
  verbs::RcQpOptions& options = heartbeats->qp_options_;
  options.max_send_wr = kInFlightPerPeer;
  options.max_recv_wr = 1;
  options.max_inline_data = sizeof(uint64_t);
  RFT_RETURN_IF_ERROR(heartbeats->AddQps(size));
  return heartbeats;
}

Status VerbsHeartbeats::AddQps(uint32_t new_size) {
  peers_.reserve(new_size);
  for (Rank r = static_cast<Rank>(peers_.size()); r < new_size; ++r) {
    peers_.emplace_back();
    if (r == self_) continue;
    StatusOr<std::unique_ptr<verbs::RcQp>> qp = verbs::RcQp::Create(*context_, qp_options_);
    if (!qp.ok()) return qp.status();
    peers_.back().qp = std::move(*qp);
  }
  return Status::Ok();
}

Status VerbsHeartbeats::Grow(uint32_t new_size) {
  const uint32_t size = static_cast<uint32_t>(peers_.size());
  if (new_size <= size) {
    return ArgError("heartbeat QPs: cannot grow from " + std::to_string(size) + " to " +
                    std::to_string(new_size) + " ranks");
  }
  // Every QP's writes may complete before the next poll.
  const int entries = static_cast<int>(new_size * kInFlightPerPeer + 16);
  if (int rc = ibv_resize_cq(context_->cq(), entries); rc != 0) {
    return OtherError("ibv_resize_cq of the heartbeat QPs' CQ to " + std::to_string(entries) +
                      " entries: " + std::strerror(rc));
  }
  return AddQps(new_size);
}

VerbsHeartbeats::~VerbsHeartbeats() {
  peers_.clear();  // the QPs before the registration they may still write into
  if (slots_mr_ != nullptr) ibv_dereg_mr(slots_mr_);
}

std::vector<std::byte> VerbsHeartbeats::RecordPart() const {
  const uint32_t size = static_cast<uint32_t>(peers_.size());
  std::vector<std::byte> part(kPartHeader);
  StoreLittleEndian<uint32_t>(part, 0, size);
  StoreLittleEndian<uint64_t>(part, 4, reinterpret_cast<uintptr_t>(slots_mr_->addr));
  StoreLittleEndian<uint32_t>(part, 12, slots_mr_->rkey);
  const std::vector<std::byte> table = verbs::EncodeQpAddressTable(
      size, self_, [this](uint32_t r) { return peers_[r].qp->address(); });
  part.insert(part.end(), table.begin(), table.end());
  return part;
}

Status VerbsHeartbeats::Connect(Rank peer, std::span<const std::byte> part, bool writable) {
  const uint32_t size = static_cast<uint32_t>(peers_.size());
  auto bad = [&](const std::string& what) {
    return OtherError("rank " + std::to_string(peer) + "'s heartbeat QP addresses: " + what);
  };
  if (peer >= size || peer == self_) return bad("not a peer of this job");
  if (part.size() != PartBytes(size) || LoadLittleEndian<uint32_t>(part, 0) != size) {
    return bad(std::to_string(part.size()) + " bytes, not those of a job of " +
               std::to_string(size) + " ranks");
  }
  StatusOr<verbs::QpAddress> address =
      verbs::DecodeQpAddressTable(part.subspan(kPartHeader), size, self_);
  if (!address.ok()) return bad(address.status().message());
  return ConnectQp(peer, *address, LoadLittleEndian<uint64_t>(part, 4),
                   LoadLittleEndian<uint32_t>(part, 12), writable);
}

std::vector<std::byte> VerbsHeartbeats::PartFor(Rank peer) const {
  std::vector<std::byte> part(12);
  StoreLittleEndian<uint64_t>(part, 0, reinterpret_cast<uintptr_t>(slots_mr_->addr));
  StoreLittleEndian<uint32_t>(part, 8, slots_mr_->rkey);
  const std::vector<std::byte> table = verbs::EncodeSingleQpAddress(peers_[peer].qp->address());
  part.insert(part.end(), table.begin(), table.end());
  return part;
}

Status VerbsHeartbeats::ConnectJoined(Rank peer, std::span<const std::byte> part, bool writable) {
  auto bad = [&](const std::string& what) {
    return OtherError("rank " + std::to_string(peer) + "'s heartbeat QP address: " + what);
  };
  if (peer >= peers_.size() || peer == self_) return bad("not a peer of this job");
  if (part.size() != kPartForBytes) {
    return bad(std::to_string(part.size()) + " bytes, expected " + std::to_string(kPartForBytes));
  }
  StatusOr<verbs::QpAddress> address = verbs::DecodeSingleQpAddress(part.subspan(12));
  if (!address.ok()) return bad(address.status().message());
  return ConnectQp(peer, *address, LoadLittleEndian<uint64_t>(part, 0),
                   LoadLittleEndian<uint32_t>(part, 8), writable);
}

Status VerbsHeartbeats::ConnectQp(Rank peer, const verbs::QpAddress& address,
                                  uint64_t slots_address, uint32_t slots_rkey, bool writable) {
  Peer& p = peers_[peer];
  if (p.qp_connected)
    return OtherError("rank " + std::to_string(peer) + "'s heartbeat QP is connected already");
  // Without inline data a word is staged in the context's buffer, laid out for the first ranks.
  if (peer >= staging_ranks_ && p.qp->max_inline_data() < sizeof(uint64_t)) {
    return OtherError("rank " + std::to_string(peer) + ": no staging word for its heartbeats " +
                      "(the device sends no inline data)");
  }
  RFT_RETURN_IF_ERROR(p.qp->Connect(address));
  p.slots_address = slots_address;
  p.slots_rkey = slots_rkey;
  p.qp_connected = true;
  p.connected = writable;
  return Status::Ok();
}

void VerbsHeartbeats::MarkWritable(Rank peer) {
  if (peer < peers_.size() && peers_[peer].qp_connected) peers_[peer].connected = true;
}

bool VerbsHeartbeats::Put(Rank observer, uint64_t offset, uint64_t word) {
  Peer& p = peers_[observer];
  if (!p.connected || p.failed || p.in_flight == kInFlightPerPeer) return false;
  ibv_sge sge;
  sge.length = sizeof(word);
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = observer;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = p.slots_address + offset;
  wr.wr.rdma.rkey = p.slots_rkey;
  if (p.qp->max_inline_data() >= sizeof(word)) {
    sge.addr = reinterpret_cast<uintptr_t>(&word);  // copied as it is posted
    sge.lkey = 0;
    wr.send_flags |= IBV_SEND_INLINE;
  } else {
    // One staging word per write in flight to this observer, taken in turn (a QP's writes
    // complete in order, so the older one is free when a turn comes round).
    const uint32_t turn = p.staging_turn++ % kInFlightPerPeer;
    std::byte* staging =
        context_->buffer().data() + (observer * kInFlightPerPeer + turn) * sizeof(uint64_t);
    std::memcpy(staging, &word, sizeof(word));
    sge.addr = reinterpret_cast<uintptr_t>(staging);
    sge.lkey = context_->mr()->lkey;
  }
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(p.qp->qp(), &wr, &bad) != 0) return false;
  ++p.in_flight;
  ++outstanding_;
  return true;
}

void VerbsHeartbeats::Poll(const std::function<void(Rank, std::string_view)>& failed) {
  ibv_wc wcs[16];
  int n;
  while ((n = ibv_poll_cq(context_->cq(), 16, wcs)) > 0) {
    for (int i = 0; i < n; ++i) {
      const Rank peer = static_cast<Rank>(wcs[i].wr_id);
      if (peer >= peers_.size()) continue;
      Peer& p = peers_[peer];
      if (p.in_flight > 0) {
        --p.in_flight;
        --outstanding_;
      }
      if (wcs[i].status != IBV_WC_SUCCESS && !p.failed) {
        p.failed = true;
        failed(peer, ibv_wc_status_str(wcs[i].status));
      }
    }
  }
}

}  // namespace rft::detector
