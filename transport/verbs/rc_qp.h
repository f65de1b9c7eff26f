// RC queue pairs: the RESET -> INIT -> RTR -> RTS transitions, shared by every program that
// connects one (ConnectRc), and RcQp, a queue pair of a VerbsContext connected to a peer's
// published QpAddress.
#ifndef RFT_TRANSPORT_VERBS_RC_QP_H_
#define RFT_TRANSPORT_VERBS_RC_QP_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {

// How fast a dead peer turns into an error completion: each attempt waits 4.096 us *
// 2^timeout, and a send is tried 1 + retry_cnt times. The defaults (67 ms, 3 retries) survive
// an emulated guest's scheduling hiccups and still report a dead peer within about 0.3 s on rxe.
struct RcTiming {
  uint8_t timeout = 14;
  uint8_t retry_cnt = 3;
  uint8_t rnr_retry = 3;       // a SEND that finds no posted RECV; 7 would retry forever
  uint8_t min_rnr_timer = 12;  // 0.64 ms between those attempts
};

// Where the remote QP is and how to reach it from `port`.
struct RcPath {
  uint8_t port = 1;
  ibv_mtu path_mtu = IBV_MTU_1024;
  bool global = false;     // RoCE: a global route header, from sgid_index to dgid
  uint8_t sgid_index = 0;  // the local GID's index
  uint16_t dlid = 0;
  ibv_gid dgid = {};
  uint32_t dest_qpn = 0;
  uint32_t rq_psn = 0;  // the remote's first send PSN
  uint32_t sq_psn = 0;  // ours
  RcTiming timing;
  // RDMA READs this QP may have outstanding as requester, and its peer's as responder.
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
};

// Moves a fresh (RESET) RC QP through INIT, RTR and RTS, allowing remote writes. The error
// names the state that could not be reached.
Status ConnectRc(ibv_qp* qp, const RcPath& path);

// What an RcQp is created with beyond the context. The eager channel (eager_channel.h) gives its
// QPs its own CQ, a shared receive queue and room for inline data.
struct RcQpOptions {
  uint32_t max_send_wr = 16;
  uint32_t max_recv_wr = 16;     // ignored with an SRQ
  ibv_cq* cq = nullptr;          // nullptr: the context's
  ibv_srq* srq = nullptr;        // receives come from it instead of the QP's own queue
  uint32_t max_inline_data = 0;  // requested; the device may grant more
  // Every send completes on the CQ; false: only those posted with IBV_SEND_SIGNALED (and any that
  // fail).
  bool signal_all = true;
  // RDMA READs in flight at once, each way (RcPath; clamped to what the device allows).
  uint8_t reads_in_flight = 1;
};

class RcQp {
 public:
  // A QP on `context`'s PD and CQ with room for `max_wr` sends and as many receives; it keeps
  // a reference to `context`, which must outlive it.
  static StatusOr<std::unique_ptr<RcQp>> Create(VerbsContext& context, uint32_t max_wr = 16);
  static StatusOr<std::unique_ptr<RcQp>> Create(VerbsContext& context, const RcQpOptions& options);
  ~RcQp();
  RcQp(const RcQp&) = delete;
  RcQp& operator=(const RcQp&) = delete;

  // This QP's record for the peer: the port's LID and GID, the QPN, a random first PSN, and
  // the context's buffer.
  QpAddress address() const;
  Status Connect(const QpAddress& remote, const RcTiming& timing = {});
  // Back to the RESET state, for another peer: its send queue must be empty (drained: every
  // request completed and polled). A new random first PSN, as a new QP would have.
  Status Reset();

  // Work requests on ranges of the context's buffer. Every send is signaled.
  Status PostSend(uint64_t wr_id, size_t offset, size_t length);
  Status PostWrite(uint64_t wr_id, size_t offset, size_t length, uint64_t remote_addr,
                   uint32_t rkey);
  Status PostRecv(uint64_t wr_id, size_t offset, size_t length);

  ibv_qp* qp() const { return qp_; }
  // What the device granted: a SEND of at most this many bytes may be posted inline.
  uint32_t max_inline_data() const { return max_inline_data_; }

 private:
  RcQp(VerbsContext& context, ibv_qp* qp, uint32_t psn, uint32_t max_inline_data,
       uint8_t max_rd_atomic, uint8_t max_dest_rd_atomic)
      : context_(context),
        qp_(qp),
        psn_(psn),
        max_inline_data_(max_inline_data),
        max_rd_atomic_(max_rd_atomic),
        max_dest_rd_atomic_(max_dest_rd_atomic) {}
  Status Post(ibv_wr_opcode opcode, uint64_t wr_id, size_t offset, size_t length,
              uint64_t remote_addr, uint32_t rkey);

  VerbsContext& context_;
  ibv_qp* qp_;
  uint32_t psn_;
  uint32_t max_inline_data_;
  uint8_t max_rd_atomic_;
  uint8_t max_dest_rd_atomic_;
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_RC_QP_H_
