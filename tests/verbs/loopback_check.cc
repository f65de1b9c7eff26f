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
#include <memory>
#include <string>
#include <vector>

#include "tests/verbs/device_check.h"
#include "transport/verbs/rc_qp.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

constexpr size_t kBufferSize = 4096;
// Regions of the one registered buffer.
constexpr size_t kSendFrom = 0;      // A's outgoing 8 bytes
constexpr size_t kRecvInto = 1024;   // B's posted receive
constexpr size_t kWriteInto = 2048;  // the target of A's RDMA WRITE
constexpr size_t kMessage = 8;
constexpr auto kLive = std::chrono::seconds(10);

CheckVoice voice("loopback");

// The successful completion of `wr_id`, or why there is none.
Status Expect(VerbsContext& context, uint64_t wr_id, const std::string& what) {
  StatusOr<ibv_wc> wc = context.WaitFor(wr_id, kLive);
  if (!wc.ok()) return OtherError(what + ": " + wc.status().message());
  if (wc->status != IBV_WC_SUCCESS) {
    return OtherError(what + " completed with " + ibv_wc_status_str(wc->status));
  }
  return Status::Ok();
}

int Run(int argc, char** argv) {
  const std::variant<Endpoint, int> port = ChoosePort(voice, argc > 1 ? argv[1] : "");
  if (const int* status = std::get_if<int>(&port)) return *status;
  const Endpoint* endpoint = &std::get<Endpoint>(port);
  voice.Say("using " + endpoint->device + " port " + std::to_string(endpoint->port) + " (" +
            endpoint->link_layer + ", GID " + std::to_string(endpoint->gid_index) + " " +
            endpoint->gid_type + " " + endpoint->gid_address + ")");

  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, kBufferSize, 16);
  if (!opened.ok()) return voice.Fail(opened.status().message());
  VerbsContext& context = **opened;
  std::byte* buffer = context.buffer().data();
  // Declared after the context, so destroyed before it.
  StatusOr<std::unique_ptr<RcQp>> a = RcQp::Create(context, 4);
  if (!a.ok()) return voice.Fail(a.status().message());
  StatusOr<std::unique_ptr<RcQp>> b = RcQp::Create(context, 4);
  if (!b.ok()) return voice.Fail(b.status().message());
  // Each QP connected to the other's address record, as a peer process's would be: the port's
  // LID, and on RoCE a global route with the selected GID as both source and destination.
  if (Status s = (*a)->Connect((*b)->address()); !s.ok()) {
    return voice.Fail("connecting QP A: " + s.message());
  }
  if (Status s = (*b)->Connect((*a)->address()); !s.ok()) {
    return voice.Fail("connecting QP B: " + s.message());
  }

  // (a) SEND into a posted RECV.
  std::memcpy(buffer + kSendFrom, "rft-send", kMessage);
  if (Status s = (*b)->PostRecv(2, kRecvInto, kMessage); !s.ok()) return voice.Fail(s.message());
  if (Status s = (*a)->PostSend(1, kSendFrom, kMessage); !s.ok()) return voice.Fail(s.message());
  StatusOr<ibv_wc> received = context.WaitFor(2, kLive);
  if (!received.ok()) return voice.Fail("send: " + received.status().message());
  if (received->status != IBV_WC_SUCCESS) {
    return voice.Fail(std::string("send: receive completed with ") +
                      ibv_wc_status_str(received->status));
  }
  if (received->byte_len != kMessage ||
      std::memcmp(buffer + kRecvInto, "rft-send", kMessage) != 0) {
    return voice.Fail("send: the received bytes differ from the sent ones");
  }
  // The sender's completion too, so that it does not linger into the next step.
  if (Status s = Expect(context, 1, "send: send"); !s.ok()) return voice.Fail(s.message());
  voice.Say("send ok");

  // (b) RDMA WRITE into B's region: no receive is consumed; A's completion means the responder
  // acknowledged the data, so it is in place.
  std::memcpy(buffer + kSendFrom, "rft-writ", kMessage);
  const QpAddress target = (*b)->address();
  if (Status s = (*a)->PostWrite(3, kSendFrom, kMessage, target.addr + kWriteInto, target.rkey);
      !s.ok()) {
    return voice.Fail(s.message());
  }
  if (Status s = Expect(context, 3, "write"); !s.ok()) return voice.Fail(s.message());
  if (std::memcmp(buffer + kWriteInto, "rft-writ", kMessage) != 0) {
    return voice.Fail("write: the bytes did not arrive");
  }
  voice.Say("write ok");

  // (c) The peer dies: its QP is gone, nothing answers A's packets, and A's send fails after
  // its retries (RcTiming's defaults: 67 ms, 3 retries) instead of hanging.
  b->reset();
  auto start = std::chrono::steady_clock::now();
  if (Status s = (*a)->PostSend(4, kSendFrom, kMessage); !s.ok()) return voice.Fail(s.message());
  StatusOr<ibv_wc> wc = context.WaitFor(4, std::chrono::seconds(30));
  if (!wc.ok()) return voice.Fail("dead peer: " + wc.status().message());
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (wc->status == IBV_WC_SUCCESS)
    return voice.Fail("dead peer: the send to a destroyed QP succeeded");
  voice.Say(std::string("dead peer -> ") + ibv_wc_status_str(wc->status) + " (after " +
            std::to_string(elapsed.count()) + " ms)");
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
