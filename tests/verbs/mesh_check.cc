// verbs mesh: RC queue pairs between the processes of a job, on a real device (a soft-RoCE
// guest, docs/verbs.md). Run under a PMIx launcher:
//
//   rftrun [--ft] -n N mesh_check [--kill-last] [RFT_NET_DEVICE value, e.g. rxe0:1]
//
// Each rank opens the selected port (VerbsContext), creates one RC QP per peer, publishes the
// QPs' address records through the bootstrap (one blob: rank p's record for rank r at slot r),
// connects each QP to its peer's, and then
//   (a) ring: sends its rank (8 bytes) to the next rank and checks what the previous one sent,
//   (b) write: RDMA-writes 8 bytes into the next rank's buffer, checked there after a fence,
//   (c) --kill-last (needs rftrun --ft, so the job outlives the victim): after a fence the last
//       rank raises SIGKILL; once the launcher reports it dead, rank 0 sends to it and must get
//       an error completion (the QP's short timeout makes that take well under a second).
// Exits 0 when every step passed, 1 when one failed, 77 without an RDMA device.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/byte_order.h"
#include "tests/verbs/device_check.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/address_exchange.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/rc_qp.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

using transport::Bootstrap;

constexpr char kKey[] = "rft.verbs.qp";
constexpr size_t kBufferSize = 4096;
// Regions of the registered buffer; 8-byte messages.
constexpr size_t kSendFrom = 0;
constexpr size_t kWriteFrom = 64;
constexpr size_t kRecvInto = 1024;
constexpr size_t kWriteInto = 2048;
constexpr size_t kMessage = 8;
// Work request ids.
constexpr uint64_t kRingRecv = 1;
constexpr uint64_t kRingSend = 2;
constexpr uint64_t kWrite = 3;
constexpr uint64_t kDeadSend = 4;
constexpr auto kLive = std::chrono::seconds(10);  // generous: an emulated guest stalls

Rank self = 0;

CheckVoice voice("mesh");

uint64_t Load(VerbsContext& c, size_t at) { return LoadLittleEndian<uint64_t>(c.buffer(), at); }
void Store(VerbsContext& c, size_t at, uint64_t value) {
  StoreLittleEndian<uint64_t>(c.buffer(), at, value);
}

// A completion of `wr_id` with status success, or the reason there is none.
Status Expect(VerbsContext& c, uint64_t wr_id, const char* what) {
  StatusOr<ibv_wc> wc = c.WaitFor(wr_id, kLive);
  if (!wc.ok()) return OtherError(std::string(what) + ": " + wc.status().message());
  if (wc->status != IBV_WC_SUCCESS) {
    return OtherError(std::string(what) + " completed with " + ibv_wc_status_str(wc->status));
  }
  return Status::Ok();
}

int Run(int argc, char** argv) {
  bool kill_last = false;
  std::string requested;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--kill-last") == 0) {
      kill_last = true;
    } else {
      requested = argv[i];
    }
  }
  std::variant<JobCheckStart, int> check_start = StartJobCheck(voice, requested, 2, UINT32_MAX);
  if (const int* status = std::get_if<int>(&check_start)) return *status;
  const Endpoint* endpoint = &std::get<JobCheckStart>(check_start).endpoint;
  Bootstrap& boot = *std::get<JobCheckStart>(check_start).job;
  self = boot.rank();
  const uint32_t n = boot.size();

  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, kBufferSize);
  if (!opened.ok()) return voice.Fail(opened.status().message());
  VerbsContext& context = **opened;
  if (self == 0) {
    voice.Say(std::to_string(n) + " ranks on " + endpoint->device + " port " +
              std::to_string(endpoint->port) + " (GID " + std::to_string(endpoint->gid_index) +
              " " + endpoint->gid_address + ")");
  }

  // One QP per peer, declared after the context so that they are destroyed before it.
  std::vector<std::unique_ptr<RcQp>> qps(n);
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    StatusOr<std::unique_ptr<RcQp>> qp = RcQp::Create(context);
    if (!qp.ok()) return voice.Fail(qp.status().message());
    qps[p] = std::move(*qp);
  }
  StatusOr<std::vector<QpAddress>> remote =
      ExchangeQpAddresses(boot, kKey, [&](Rank p) { return qps[p]->address(); });
  if (!remote.ok()) return voice.Fail(remote.status().message());
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    if (Status s = qps[p]->Connect((*remote)[p]); !s.ok()) {
      return voice.Fail("connecting to rank " + std::to_string(p) + ": " + s.message());
    }
  }

  // (a) Ring. Every receive is posted before anyone sends (the fence), so no SEND meets an
  // empty receive queue.
  const Rank next = (self + 1) % n;
  const Rank prev = (self + n - 1) % n;
  if (Status s = qps[prev]->PostRecv(kRingRecv, kRecvInto, kMessage); !s.ok()) {
    return voice.Fail(s.message());
  }
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
  Store(context, kSendFrom, self);
  if (Status s = qps[next]->PostSend(kRingSend, kSendFrom, kMessage); !s.ok()) {
    return voice.Fail(s.message());
  }
  if (Status s = Expect(context, kRingRecv, "ring receive"); !s.ok())
    return voice.Fail(s.message());
  if (Status s = Expect(context, kRingSend, "ring send"); !s.ok()) return voice.Fail(s.message());
  if (Load(context, kRecvInto) != prev) {
    return voice.Fail("ring: received " + std::to_string(Load(context, kRecvInto)) + " from rank " +
                      std::to_string(prev));
  }
  voice.Say("ring ok (rank " + std::to_string(prev) + " sent its rank)");

  // (b) RDMA WRITE into the next rank's buffer. The writer's completion means the responder
  // acknowledged the data; the fence tells the target it has landed.
  const uint64_t written = 0x5246540000000000ull + self;  // "RFT" and the writer
  Store(context, kWriteFrom, written);
  if (Status s = qps[next]->PostWrite(kWrite, kWriteFrom, kMessage,
                                      (*remote)[next].addr + kWriteInto, (*remote)[next].rkey);
      !s.ok()) {
    return voice.Fail(s.message());
  }
  if (Status s = Expect(context, kWrite, "write"); !s.ok()) return voice.Fail(s.message());
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
  if (Load(context, kWriteInto) != 0x5246540000000000ull + prev) {
    return voice.Fail("write: rank " + std::to_string(prev) + "'s bytes did not arrive");
  }
  voice.Say("write ok (rank " + std::to_string(prev) + "'s 8 bytes arrived)");
  if (!kill_last) return 0;

  // (c) The last rank dies the hard way: no goodbye, the kernel tears its QPs down.
  const Rank victim = n - 1;
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
  if (self == victim) {
    voice.Say("raising SIGKILL");
    raise(SIGKILL);
  }
  if (self != 0) return 0;
  // Wait for the launcher's word first: a send posted while the victim still lives would
  // succeed and prove nothing.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!boot.DeadRanks().Contains(victim)) {
    if (std::chrono::steady_clock::now() > give_up) {
      return voice.Fail("no termination event for rank " + std::to_string(victim) + " in 20 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Store(context, kSendFrom, self);
  const auto start = std::chrono::steady_clock::now();
  if (Status s = qps[victim]->PostSend(kDeadSend, kSendFrom, kMessage); !s.ok()) {
    return voice.Fail(s.message());
  }
  StatusOr<ibv_wc> wc = context.WaitFor(kDeadSend, std::chrono::seconds(30));
  if (!wc.ok()) return voice.Fail("dead peer: " + wc.status().message());
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (wc->status == IBV_WC_SUCCESS) {
    return voice.Fail("dead peer: the send to dead rank " + std::to_string(victim) + " succeeded");
  }
  voice.Say("dead peer " + std::to_string(victim) + " -> " + ibv_wc_status_str(wc->status) +
            " after " + std::to_string(ms) + " ms");
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
