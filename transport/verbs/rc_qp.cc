#include "transport/verbs/rc_qp.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>

namespace rft::verbs {
namespace {

Status ModifyFailed(const char* state, int error) {
  return OtherError(std::string("ibv_modify_qp to ") + state + ": " + std::strerror(error));
}

}  // namespace

Status ConnectRc(ibv_qp* qp, const RcPath& path) {
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = path.port;
  // Remote reads: the data plane's rendezvous reads the sender's registered buffer.
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
  if (int rc = ibv_modify_qp(qp, &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return ModifyFailed("INIT", rc);
  }

  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = path.path_mtu;
  attr.dest_qp_num = path.dest_qpn;
  attr.rq_psn = path.rq_psn;
  attr.max_dest_rd_atomic = path.max_dest_rd_atomic;
  attr.min_rnr_timer = path.timing.min_rnr_timer;
  attr.ah_attr.dlid = path.dlid;
  attr.ah_attr.port_num = path.port;
  if (path.global) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = path.dgid;
    attr.ah_attr.grh.sgid_index = path.sgid_index;
    attr.ah_attr.grh.hop_limit = 1;  // RoCE peers of one subnet; rxe ignores it
  }
  if (int rc = ibv_modify_qp(qp, &attr,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return ModifyFailed("RTR", rc);
  }

  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = path.sq_psn;
  attr.timeout = path.timing.timeout;
  attr.retry_cnt = path.timing.retry_cnt;
  attr.rnr_retry = path.timing.rnr_retry;
  attr.max_rd_atomic = path.max_rd_atomic;
  if (int rc = ibv_modify_qp(qp, &attr,
                             IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return ModifyFailed("RTS", rc);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<RcQp>> RcQp::Create(VerbsContext& context, uint32_t max_wr) {
  RcQpOptions options;
  options.max_send_wr = max_wr;
  options.max_recv_wr = max_wr;
  return Create(context, options);
}

StatusOr<std::unique_ptr<RcQp>> RcQp::Create(VerbsContext& context, const RcQpOptions& options) {
  ibv_cq* cq = options.cq != nullptr ? options.cq : context.cq();
  ibv_qp_init_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.srq = options.srq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = options.signal_all ? 1 : 0;
  attr.cap.max_send_wr = options.max_send_wr;
  attr.cap.max_recv_wr = options.srq != nullptr ? 0 : options.max_recv_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = options.srq != nullptr ? 0 : 1;
  attr.cap.max_inline_data = options.max_inline_data;
  ibv_qp* qp = ibv_create_qp(context.pd(), &attr);
  if (qp == nullptr) {
    return OtherError(std::string("ibv_create_qp (") + std::to_string(options.max_send_wr) +
                      " sends, " + std::to_string(options.max_inline_data) +
                      " inline bytes): " + std::strerror(errno));
  }
  // A random first PSN: a stale packet of an earlier QP that had this QPN is then unlikely to
  // fall into the new one's window. PSNs are 24 bits.
  const uint32_t psn = std::random_device()() & 0xffffff;
  // ibv_create_qp wrote the granted capabilities back into attr.cap.
  // Within the device's limits (as requester and as responder); at least 1 each.
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
  if (options.reads_in_flight > 1) {
    ibv_device_attr device;
    if (ibv_query_device(context.pd()->context, &device) == 0) {
      max_rd_atomic = static_cast<uint8_t>(
          std::clamp<int>(device.max_qp_init_rd_atom, 1, options.reads_in_flight));
      max_dest_rd_atomic =
          static_cast<uint8_t>(std::clamp<int>(device.max_qp_rd_atom, 1, options.reads_in_flight));
    }
  }
  return std::unique_ptr<RcQp>(
      new RcQp(context, qp, psn, attr.cap.max_inline_data, max_rd_atomic, max_dest_rd_atomic));
}

RcQp::~RcQp() { ibv_destroy_qp(qp_); }

Status RcQp::Reset() {
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RESET;
  if (int rc = ibv_modify_qp(qp_, &attr, IBV_QP_STATE); rc != 0) return ModifyFailed("RESET", rc);
  psn_ = std::random_device()() & 0xffffff;
  return Status::Ok();
}

QpAddress RcQp::address() const {
  QpAddress a;
  a.lid = context_.port_attr().lid;
  a.gid_index = static_cast<uint8_t>(context_.endpoint().gid_index);
  std::memcpy(a.gid.data(), context_.gid().raw, a.gid.size());
  a.qpn = qp_->qp_num;
  a.psn = psn_;
  a.addr = reinterpret_cast<uintptr_t>(context_.mr()->addr);
  a.rkey = context_.mr()->rkey;
  return a;
}

Status RcQp::Connect(const QpAddress& remote, const RcTiming& timing) {
  RcPath path;
  path.port = context_.port_num();
  path.path_mtu = context_.port_attr().active_mtu;
  path.global = context_.global();
  path.sgid_index = static_cast<uint8_t>(context_.endpoint().gid_index);
  path.dlid = remote.lid;
  std::memcpy(path.dgid.raw, remote.gid.data(), remote.gid.size());
  path.dest_qpn = remote.qpn;
  path.rq_psn = remote.psn;
  path.sq_psn = psn_;
  path.timing = timing;
  path.max_rd_atomic = max_rd_atomic_;
  path.max_dest_rd_atomic = max_dest_rd_atomic_;
  return ConnectRc(qp_, path);
}

Status RcQp::PostSend(uint64_t wr_id, size_t offset, size_t length) {
  return Post(IBV_WR_SEND, wr_id, offset, length, 0, 0);
}

Status RcQp::PostWrite(uint64_t wr_id, size_t offset, size_t length, uint64_t remote_addr,
                       uint32_t rkey) {
  return Post(IBV_WR_RDMA_WRITE, wr_id, offset, length, remote_addr, rkey);
}

Status RcQp::Post(ibv_wr_opcode opcode, uint64_t wr_id, size_t offset, size_t length,
                  uint64_t remote_addr, uint32_t rkey) {
  if (offset + length > context_.buffer().size()) {
    return ArgError("work request on bytes " + std::to_string(offset) + "+" +
                    std::to_string(length) + " is outside the " +
                    std::to_string(context_.buffer().size()) + "-byte buffer");
  }
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(context_.buffer().data() + offset);
  sge.length = static_cast<uint32_t>(length);
  sge.lkey = context_.mr()->lkey;
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  if (opcode == IBV_WR_RDMA_WRITE) {
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_, &wr, &bad); rc != 0) {
    return OtherError(std::string("ibv_post_send: ") + std::strerror(rc));
  }
  return Status::Ok();
}

Status RcQp::PostRecv(uint64_t wr_id, size_t offset, size_t length) {
  if (offset + length > context_.buffer().size()) {
    return ArgError("receive into bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                    " is outside the " + std::to_string(context_.buffer().size()) + "-byte buffer");
  }
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(context_.buffer().data() + offset);
  sge.length = static_cast<uint32_t>(length);
  sge.lkey = context_.mr()->lkey;
  ibv_recv_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_, &wr, &bad); rc != 0) {
    return OtherError(std::string("ibv_post_recv: ") + std::strerror(rc));
  }
  return Status::Ok();
}

}  // namespace rft::verbs
