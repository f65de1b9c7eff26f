// Heartbeats by RDMA WRITE (docs/verbs.md, "Heartbeats by RDMA WRITE"): where the verbs backend
// has a port, the control plane writes each heartbeat word straight into its observer's
// heartbeat slot through an RC QP of its own, instead of through UCX's put. The observer's CPU
// takes no part (its HCA answers), and a dead observer shows as an error completion of the
// write (retry exceeded) within the QP's timing (RcTiming: about 0.3 s on rxe).
//
// The slots are the control plane's own heartbeat region (the one UCX's puts reach), registered
// here for remote writes too, so an observer reads one set of slots whichever way a word came.
// One QP per rank of the job at start-up (the observer changes as ranks fail), its address in
// the control record beside the UCX one; one more per replacement that joins (Grow), connected
// through the handshake of the control plane's message channel (control_verbs.cc). Used by the
// control thread only.
#ifndef RFT_DETECTOR_VERBS_HEARTBEATS_H_
#define RFT_DETECTOR_VERBS_HEARTBEATS_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/rc_qp.h"
#include "transport/verbs/verbs_context.h"

namespace rft::detector {

class VerbsHeartbeats {
 public:
  // Opens RFT_NET_DEVICE's port (else the nearest usable one), registers `slots` for remote
  // writes and makes a QP for every other rank of 0..size-1. nullptr, with the reason in
  // `why_not`, when this host has no usable port; errors for a port that fails to open.
  static StatusOr<std::unique_ptr<VerbsHeartbeats>> Open(Rank self, uint32_t size,
                                                         std::span<std::byte> slots,
                                                         std::string* why_not);
  ~VerbsHeartbeats();
  VerbsHeartbeats(const VerbsHeartbeats&) = delete;
  VerbsHeartbeats& operator=(const VerbsHeartbeats&) = delete;

  // This process's part of the control record: u32 rank count, u64 slots address, u32 rkey,
  // then a QP address (transport/verbs/qp_address.h) for every rank (zeros for itself).
  std::vector<std::byte> RecordPart() const;
  // Its size in a job of `size` ranks.
  static size_t PartBytes(uint32_t size);
  // The port's context, which the control plane's message channel shares (verbs_messages).
  verbs::VerbsContext& context() { return *context_; }
  // Connects the QP for `peer` to its record part's QP address for this rank. RFT_ERR_OTHER
  // naming the peer for a part that does not fit a job of this size.
  // With `writable` false, as ConnectJoined says.
  Status Connect(Rank peer, std::span<const std::byte> part, bool writable = true);
  // Whether heartbeats to `peer` go by RDMA WRITE (its QP connected and known to be ready).
  bool connected(Rank peer) const { return peer < peers_.size() && peers_[peer].connected; }

  // Ranks [size, new_size) joined the job: a QP for each, not yet connected, and the CQ grown
  // for their writes.
  Status Grow(uint32_t new_size);
  // What a peer that joined needs to write into this process's slots: u64 slots address, u32
  // rkey, then a one-entry QP address table (this process's QP for `peer`).
  std::vector<std::byte> PartFor(Rank peer) const;
  static constexpr size_t kPartForBytes = 12 + verbs::kSingleQpAddressSize;
  // Connects the QP for `peer` to what its PartFor (`part`) says. With `writable` false, Put
  // does not write to it before MarkWritable: the peer's QP may not be ready yet (the peer
  // connects second, and greets). RFT_ERR_OTHER naming the peer for a part that does not
  // decode, and for a peer beyond the staging words of a device without inline data.
  Status ConnectJoined(Rank peer, std::span<const std::byte> part, bool writable);
  void MarkWritable(Rank peer);

  // Posts one RDMA WRITE of `word` at `offset` in `observer`'s slots. False when it was not
  // posted: the QP failed, or its writes still await their completions (the caller tries again
  // at its next period).
  bool Put(Rank observer, uint64_t offset, uint64_t word);
  // Takes the completions: a failed write calls `failed(peer, status)` once for that peer.
  void Poll(const std::function<void(Rank, std::string_view)>& failed);
  // No write awaits its completion (a farewell word is on its way only until then).
  bool idle() const { return outstanding_ == 0; }

 private:
  struct Peer {
    std::unique_ptr<verbs::RcQp> qp;
    uint64_t slots_address = 0;
    uint32_t slots_rkey = 0;
    uint32_t in_flight = 0;
    uint32_t staging_turn = 0;
    bool qp_connected = false;
    bool connected = false;  // writable: Put writes to it
    bool failed = false;
  };
  VerbsHeartbeats() = default;
  // Connects `peer`'s QP to `address`, writing into its slots at `slots_address` (`rkey`).
  // Appends the entries of ranks peers_.size()..new_size-1, with their QPs.
  Status AddQps(uint32_t new_size);
  Status ConnectQp(Rank peer, const verbs::QpAddress& address, uint64_t slots_address,
                   uint32_t slots_rkey, bool writable);

  Rank self_ = 0;
  std::unique_ptr<verbs::VerbsContext> context_;
  ibv_mr* slots_mr_ = nullptr;
  std::vector<Peer> peers_;
  uint32_t outstanding_ = 0;
  uint32_t staging_ranks_ = 0;  // the ranks the context's staging words were laid out for
  verbs::RcQpOptions qp_options_;
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_VERBS_HEARTBEATS_H_
