// Heartbeats by RDMA WRITE (docs/verbs.md, "Heartbeats by RDMA WRITE"): where the verbs backend
// has a port, the control plane writes each heartbeat word straight into its observer's
// heartbeat slot, instead of through UCX's put. The observer's CPU takes no part (its HCA
// answers), and a dead observer shows as an error completion of the write (retry exceeded)
// within the QP's timing (RcTiming: about 0.3 s on rxe).
//
// The writes go on the QPs of the control plane's message channel (control_verbs.cc), one QP
// per peer for both: this class holds the port's context, which the channel is made on, the
// registration of this process's slots for remote writes, and where each peer's slots are. The
// slots are the control plane's own heartbeat region (the one UCX's puts reach), so an observer
// reads one set of slots whichever way a word came. Used by the control thread only.
#ifndef RFT_DETECTOR_VERBS_HEARTBEATS_H_
#define RFT_DETECTOR_VERBS_HEARTBEATS_H_

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/verbs_context.h"

namespace rft::detector {

class VerbsHeartbeats {
 public:
  // Opens RFT_NET_DEVICE's port (else the nearest usable one) and registers `slots` for remote
  // writes. nullptr, with the reason in `why_not`, when this host has no usable port; errors for
  // a port that fails to open.
  static StatusOr<std::unique_ptr<VerbsHeartbeats>> Open(std::span<std::byte> slots,
                                                         std::string* why_not);
  ~VerbsHeartbeats();
  VerbsHeartbeats(const VerbsHeartbeats&) = delete;
  VerbsHeartbeats& operator=(const VerbsHeartbeats&) = delete;

  // The port's context, on which the control plane's message channel is made.
  verbs::VerbsContext& context() { return *context_; }

  // What a peer needs to write into this process's slots, in the control record and in the
  // addresses sent to a replacement: u64 slots address, u32 rkey.
  static constexpr size_t kPartBytes = 12;
  std::array<std::byte, kPartBytes> Part() const;
  // Where `peer`'s slots are, from its Part. RFT_ERR_OTHER naming the peer for a part of
  // another size.
  Status Learn(Rank peer, std::span<const std::byte> part);
  bool knows(Rank peer) const { return peer < peers_.size() && peers_[peer].known; }

  // One RDMA WRITE of `word` at `offset` in `observer`'s slots through `channel` (Write), which
  // must reach it (ready) and whose QP failures report the observer. `signaled` for a word
  // whose arrival is waited for (the farewell: channel.awaiting). False when it was not posted:
  // the QP failed, or its send queue is full (the caller tries again at its next period).
  bool Put(verbs::EagerChannel& channel, Rank observer, uint64_t offset, uint64_t word,
           bool signaled);

 private:
  struct RemoteSlots {
    uint64_t address = 0;
    uint32_t rkey = 0;
    bool known = false;
  };
  VerbsHeartbeats() = default;

  std::unique_ptr<verbs::VerbsContext> context_;
  ibv_mr* slots_mr_ = nullptr;
  std::vector<RemoteSlots> peers_;  // [rank], grown as peers are learned
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_VERBS_HEARTBEATS_H_
