// The verbs backend's eager message channel: small messages between the ranks of a job as RC
// SENDs into pre-posted receive buffers, with credit flow control (credit_window.h).
//
// On one VerbsContext: one shared receive queue (SRQ) holding fixed-size registered receive
// slots, C (the credit window) reserved per peer plus CreditWindow::kCreditMessagesInFlight for
// explicit credit messages; one RC QP per peer, all drawing receives from the SRQ and completing
// on the channel's own CQ; and a pool of registered send slots. Every message starts with a
// 12-byte header (source rank, payload length, credits returned, kind). A SEND that fits the
// QP's max_inline_data is posted inline.
//
// Single-threaded: Send and Progress are called from one thread (the message callback, called
// from Progress, may Send). Nothing is allocated per message: the slots, the queues of waiting
// sends and the work requests are all set up by Create.
#ifndef RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_
#define RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/verbs/credit_window.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/rc_qp.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {

struct EagerConfig {
  size_t slot_size = 8192;  // bytes per receive and send slot, header included
  // C, per peer. Every rank of a job must use the same value: it is the window a sender assumes
  // and the reservation its receiver makes.
  uint32_t credits = 16;
  uint32_t max_inline_data = 256;  // requested per QP; the device's grant is used
  RcTiming timing;
};

// What Send did with a message.
enum class SendResult {
  kPosted,  // on the wire (its bytes were copied; the caller's buffer is free)
  kQueued,  // copied, waiting for credits; it goes out in order from Progress
  kFull,    // every send slot is taken: nothing was kept; offer it again after Progress
};

class EagerChannel {
 public:
  static constexpr size_t kHeaderSize = 12;

  // A message from `source`; `payload` is valid only during the call.
  using MessageCallback = std::function<void(Rank source, std::span<const std::byte> payload)>;
  // A work completion with an error on `peer`'s QP (retry exceeded, a flush): called once per
  // peer, with ibv_wc_status_str's text.
  using FailureCallback = std::function<void(Rank peer, std::string_view status)>;

  // QPs to every rank of 0..size-1 but `self`, not yet connected, and the SRQ's slots posted.
  // `context` must outlive the channel. Errors name the call or the value that was wrong.
  static StatusOr<std::unique_ptr<EagerChannel>> Create(VerbsContext& context, Rank self,
                                                        uint32_t size, const EagerConfig& config,
                                                        MessageCallback on_message,
                                                        FailureCallback on_failure);
  ~EagerChannel();
  EagerChannel(const EagerChannel&) = delete;
  EagerChannel& operator=(const EagerChannel&) = delete;

  // This rank's record for `peer`'s QP, and connecting to `peer`'s record for this rank.
  QpAddress address(Rank peer) const;
  Status Connect(Rank peer, const QpAddress& remote);

  size_t max_payload() const { return config_.slot_size - kHeaderSize; }
  // Payloads up to this size go inline; none does when the device grants less than a header
  // (inline_capable() false).
  size_t max_inline_payload() const { return inline_capable() ? max_inline_ - kHeaderSize : 0; }
  bool inline_capable() const { return max_inline_ >= kHeaderSize; }
  uint32_t credits() const { return config_.credits; }

  // Copies `payload` into a send slot and posts it if `peer`'s window allows, else queues it
  // behind the peer's earlier messages. RFT_ERR_PROC_FAILED naming the peer once its QP failed;
  // RFT_ERR_ARG for a bad peer or a payload over max_payload().
  StatusOr<SendResult> Send(Rank peer, std::span<const std::byte> payload);

  // Polls the CQ: delivers messages, reposts their slots, takes returned credits, reports
  // failed peers, posts queued sends and due credit messages. The number of completions
  // handled; an error for a header that breaks the protocol (it names the peer and the value).
  StatusOr<int> Progress();

  // No message queued, no send awaiting its completion and no credit message due towards any
  // peer that has not failed.
  bool Idle() const;
  bool failed(Rank peer) const { return peers_[peer].failed != nullptr; }

  struct PeerStats {
    uint64_t sent = 0;             // data messages posted
    uint64_t sent_inline = 0;      // of which inline
    uint64_t received = 0;         // data messages delivered
    uint64_t queued = 0;           // sends that had to wait (SendResult::kQueued)
    uint64_t credit_messages = 0;  // explicit credit messages posted
    uint32_t max_in_flight = 0;    // the most credits ever taken at once (never above C)
  };
  const PeerStats& stats(Rank peer) const { return peers_[peer].stats; }

 private:
  struct Peer {
    explicit Peer(const CreditWindow& w) : window(w) {}
    std::unique_ptr<RcQp> qp;
    CreditWindow window;
    std::vector<uint32_t> waiting;  // a ring of send slots, oldest at `head`
    size_t head = 0;
    size_t count = 0;
    uint32_t sq_outstanding = 0;
    bool connected = false;
    const char* failed = nullptr;  // the status text once the QP failed
    PeerStats stats;
  };

  EagerChannel(Rank self, const EagerConfig& config);
  std::byte* slot(uint32_t index) const { return region_ + index * config_.slot_size; }
  Status PostReceive(uint32_t index);
  Status Post(Rank peer, uint32_t index, uint8_t kind, size_t length);
  Status Flush(Rank peer);
  Status SendCreditIfDue(Rank peer);
  Status Handle(const ibv_wc& wc);
  Status Receive(Rank peer, uint32_t index, uint32_t byte_len);
  void Fail(Rank peer, ibv_wc_status status);

  const Rank self_;
  const EagerConfig config_;
  MessageCallback on_message_;
  FailureCallback on_failure_;
  ibv_cq* cq_ = nullptr;
  ibv_srq* srq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::byte* region_ = nullptr;  // receive slots, then send slots
  uint32_t receive_slots_ = 0;
  uint32_t send_slots_per_peer_ = 0;
  uint32_t max_inline_ = 0;          // header included
  std::vector<uint32_t> free_send_;  // a stack of free send slot indices
  std::vector<Peer> peers_;          // indexed by rank; this rank's entry unused
  std::unordered_map<uint32_t, Rank> by_qpn_;
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_
