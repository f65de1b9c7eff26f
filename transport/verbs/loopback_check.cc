// verbs loopback: proves on a real device (a soft-RoCE guest, docs/verbs.md) the verbs calls the
// backend will build on. Two RC QPs on one port, connected to each other:
//   (a) a SEND from A lands in a RECV posted on B,
//   (b) an RDMA WRITE from A lands in B's region,
//   (c) with B destroyed, a SEND from A completes with an error status: a dead peer shows up as
//       a work-completion error, which is what the backend's failure handling will rely on.
// Prints one line per step; exits 0 when all pass, 1 when one fails, 77 without an RDMA device.
//
//   loopback_check [RFT_NET_DEVICE value, e.g. rxe0:1]
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "transport/verbs/device.h"
#include "transport/verbs/rc_qp.h"

namespace rft::verbs {
namespace {

constexpr size_t kBufferSize = 4096;
// Regions of the one registered buffer.
constexpr size_t kSendFrom = 0;      // A's outgoing 8 bytes
constexpr size_t kRecvInto = 1024;   // B's posted receive
constexpr size_t kWriteInto = 2048;  // the target of A's RDMA WRITE
constexpr size_t kMessage = 8;

// Retransmission: 4.096 us * 2^14 = 67 ms per attempt, 1 + 3 attempts. Long enough that an
// emulated guest's scheduling hiccups do not fail the live steps, short enough that the dead
// peer is reported within about a quarter of a second (rxe also rounds to its timer tick).
constexpr uint8_t kTimeout = 14;
constexpr uint8_t kRetryCount = 3;

void Say(const std::string& line) {
  std::printf("verbs loopback: %s\n", line.c_str());
  std::fflush(stdout);
}

int Fail(const std::string& line) {
  Say(line);
  return 1;
}

std::string Errno(const char* call, int error) {
  return std::string(call) + ": " + std::strerror(error);
}

// Everything the check opens, released in reverse order however it ends.
struct Resources {
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  ibv_qp* a = nullptr;
  ibv_qp* b = nullptr;
  alignas(64) unsigned char buffer[kBufferSize] = {};

  ~Resources() {
    if (b != nullptr) ibv_destroy_qp(b);
    if (a != nullptr) ibv_destroy_qp(a);
    if (mr != nullptr) ibv_dereg_mr(mr);
    if (cq != nullptr) ibv_destroy_cq(cq);
    if (pd != nullptr) ibv_dealloc_pd(pd);
    if (context != nullptr) ibv_close_device(context);
  }
};

ibv_context* OpenByName(const std::string& name) {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return nullptr;
  ibv_context* context = nullptr;
  for (int i = 0; i < count && context == nullptr; ++i) {
    if (name == ibv_get_device_name(list[i])) context = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  return context;
}

ibv_qp* CreateQp(Resources* r) {
  ibv_qp_init_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.send_cq = r->cq;
  attr.recv_cq = r->cq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 1;
  attr.cap.max_send_wr = 4;
  attr.cap.max_recv_wr = 4;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  return ibv_create_qp(r->pd, &attr);
}

// Connected to `remote_qpn` on the same port (ConnectRc does the state transitions). On RoCE
// the address is global (a GRH with the selected GID as both source and destination); on
// InfiniBand the port's LID is enough.
Status Connect(ibv_qp* qp, uint32_t remote_qpn, const Endpoint& endpoint, const ibv_port_attr& port,
               const ibv_gid& gid) {
  RcPath path;
  path.port = static_cast<uint8_t>(endpoint.port);
  path.path_mtu = port.active_mtu;
  path.global = endpoint.link_layer == kEthernet;
  path.sgid_index = static_cast<uint8_t>(endpoint.gid_index);
  path.dlid = port.lid;
  path.dgid = gid;
  path.dest_qpn = remote_qpn;
  path.timing.timeout = kTimeout;
  path.timing.retry_cnt = kRetryCount;
  path.timing.rnr_retry = kRetryCount;
  return ConnectRc(qp, path);
}

// Waits for the completion of work request `wr_id` (others are consumed: flushes, the receive
// side of a step already checked). False with `error` set when none comes in time.
bool WaitFor(ibv_cq* cq, uint64_t wr_id, std::chrono::seconds limit, ibv_wc* out,
             std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc;
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) {
      *error = "ibv_poll_cq failed";
      return false;
    }
    if (n == 1 && wc.wr_id == wr_id) {
      *out = wc;
      return true;
    }
    // rxe does its work in kernel threads on the same (emulated) CPUs: leave them room.
    if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  *error = "no completion for work request " + std::to_string(wr_id) + " within " +
           std::to_string(limit.count()) + " s";
  return false;
}

int PostSend(Resources* r, uint64_t wr_id, ibv_wr_opcode opcode, uint64_t remote_addr) {
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(r->buffer + kSendFrom);
  sge.length = kMessage;
  sge.lkey = r->mr->lkey;
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  if (opcode == IBV_WR_RDMA_WRITE) {
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = r->mr->rkey;
  }
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(r->a, &wr, &bad);
}

int Run(int argc, char** argv) {
  StatusOr<std::vector<VerbsDevice>> devices = ListDevices();
  if (!devices.ok()) return Fail(devices.status().message());
  if (devices->empty()) {
    Say("no RDMA device on this host");
    return 77;
  }
  StatusOr<Endpoint> endpoint = SelectPort(*devices, argc > 1 ? argv[1] : "");
  if (!endpoint.ok()) return Fail(endpoint.status().message());
  Say("using " + endpoint->device + " port " + std::to_string(endpoint->port) + " (" +
      endpoint->link_layer + ", GID " + std::to_string(endpoint->gid_index) + " " +
      endpoint->gid_type + " " + endpoint->gid_address + ")");

  Resources r;
  r.context = OpenByName(endpoint->device);
  if (r.context == nullptr) return Fail("cannot open " + endpoint->device);
  ibv_port_attr port;
  if (int rc = ibv_query_port(r.context, static_cast<uint8_t>(endpoint->port), &port); rc != 0) {
    return Fail(Errno("ibv_query_port", rc));
  }
  ibv_gid gid;
  std::memset(&gid, 0, sizeof(gid));
  if (endpoint->link_layer == kEthernet &&
      ibv_query_gid(r.context, static_cast<uint8_t>(endpoint->port), endpoint->gid_index, &gid) !=
          0) {
    return Fail(Errno("ibv_query_gid", errno));
  }
  r.pd = ibv_alloc_pd(r.context);
  if (r.pd == nullptr) return Fail(Errno("ibv_alloc_pd", errno));
  r.cq = ibv_create_cq(r.context, 16, nullptr, nullptr, 0);
  if (r.cq == nullptr) return Fail(Errno("ibv_create_cq", errno));
  r.mr = ibv_reg_mr(r.pd, r.buffer, kBufferSize, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (r.mr == nullptr) return Fail(Errno("ibv_reg_mr", errno));
  r.a = CreateQp(&r);
  if (r.a == nullptr) return Fail(Errno("ibv_create_qp", errno));
  r.b = CreateQp(&r);
  if (r.b == nullptr) return Fail(Errno("ibv_create_qp", errno));
  if (Status s = Connect(r.a, r.b->qp_num, *endpoint, port, gid); !s.ok()) {
    return Fail("connecting QP A: " + s.message());
  }
  if (Status s = Connect(r.b, r.a->qp_num, *endpoint, port, gid); !s.ok()) {
    return Fail("connecting QP B: " + s.message());
  }
  std::string error;
  ibv_wc wc;

  // (a) SEND into a posted RECV.
  std::memcpy(r.buffer + kSendFrom, "rft-send", kMessage);
  ibv_sge recv_sge;
  recv_sge.addr = reinterpret_cast<uintptr_t>(r.buffer + kRecvInto);
  recv_sge.length = kMessage;
  recv_sge.lkey = r.mr->lkey;
  ibv_recv_wr recv;
  std::memset(&recv, 0, sizeof(recv));
  recv.wr_id = 2;
  recv.sg_list = &recv_sge;
  recv.num_sge = 1;
  ibv_recv_wr* bad_recv = nullptr;
  if (int rc = ibv_post_recv(r.b, &recv, &bad_recv); rc != 0) {
    return Fail(Errno("ibv_post_recv", rc));
  }
  if (int rc = PostSend(&r, 1, IBV_WR_SEND, 0); rc != 0) return Fail(Errno("ibv_post_send", rc));
  if (!WaitFor(r.cq, 2, std::chrono::seconds(10), &wc, &error)) return Fail("send: " + error);
  if (wc.status != IBV_WC_SUCCESS) {
    return Fail(std::string("send: receive completed with ") + ibv_wc_status_str(wc.status));
  }
  if (wc.byte_len != kMessage || std::memcmp(r.buffer + kRecvInto, "rft-send", kMessage) != 0) {
    return Fail("send: the received bytes differ from the sent ones");
  }
  // The sender's completion too, so that it does not linger into the next step.
  if (!WaitFor(r.cq, 1, std::chrono::seconds(10), &wc, &error)) return Fail("send: " + error);
  if (wc.status != IBV_WC_SUCCESS) {
    return Fail(std::string("send: send completed with ") + ibv_wc_status_str(wc.status));
  }
  Say("send ok");

  // (b) RDMA WRITE into B's region: no receive is consumed; A's completion means the responder
  // acknowledged the data, so it is in place.
  std::memcpy(r.buffer + kSendFrom, "rft-writ", kMessage);
  if (int rc =
          PostSend(&r, 3, IBV_WR_RDMA_WRITE, reinterpret_cast<uintptr_t>(r.buffer + kWriteInto));
      rc != 0) {
    return Fail(Errno("ibv_post_send", rc));
  }
  if (!WaitFor(r.cq, 3, std::chrono::seconds(10), &wc, &error)) return Fail("write: " + error);
  if (wc.status != IBV_WC_SUCCESS) {
    return Fail(std::string("write: completed with ") + ibv_wc_status_str(wc.status));
  }
  if (std::memcmp(r.buffer + kWriteInto, "rft-writ", kMessage) != 0) {
    return Fail("write: the bytes did not arrive");
  }
  Say("write ok");

  // (c) The peer dies: its QP is gone, nothing answers A's packets, and A's send fails after
  // its retries instead of hanging.
  if (int rc = ibv_destroy_qp(r.b); rc != 0) return Fail(Errno("ibv_destroy_qp", rc));
  r.b = nullptr;
  auto start = std::chrono::steady_clock::now();
  if (int rc = PostSend(&r, 4, IBV_WR_SEND, 0); rc != 0) return Fail(Errno("ibv_post_send", rc));
  if (!WaitFor(r.cq, 4, std::chrono::seconds(30), &wc, &error)) return Fail("dead peer: " + error);
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (wc.status == IBV_WC_SUCCESS) return Fail("dead peer: the send to a destroyed QP succeeded");
  Say(std::string("dead peer -> ") + ibv_wc_status_str(wc.status) + " (after " +
      std::to_string(elapsed.count()) + " ms)");
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
