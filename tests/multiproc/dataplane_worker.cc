// Multi-process checks of the data plane (transport/dataplane), run under rftrun by
// dataplane_test.cc. Every check prints "FAILED: ..." and exits 3 on a violation.
//
//   rules        (n = 1 or 2) matching order, wildcards, truncation, probe, cancel, every
//                completion call, eager/rendezvous boundary sizes, bad arguments, and
//                malformed messages fed to the receive path
//   mesh         (n >= 2) every rank sends every other rank a stream of eager and
//                rendezvous messages; receivers check content and per-sender order, half of
//                them through ANY_SOURCE receives
//   cma-done     (n = 2) a same-node or verbs receive whose done message cannot leave (the
//                path is full and the sender is in a fence) stays pending, and completes once
//                the sender progresses again
//   reg-cache    (n = 2, verbs) the same buffers sent from and received into again, then unmapped
//                and mapped again at the same address: found registered, then not
//   on-demand    (n = 4, verbs) QPs made only for the pairs that talk, whichever end sends
//                first: both at once, the higher rank, the lower rank
//   ucx-rest     (n = 2, verbs, RFT_PROGRESS=poll) UCX's worker rests while nothing comes
//                through it, and a link message reaching a resting worker is still found
//                (dataplane_verbs_links.cc)
//   ucx-rest-mixed (n = 2, RFT_PROGRESS=poll, verbs at rank 0 only) a pair on UCX keeps UCX's
//                worker polled at every pass
//   working-set  (n = 4, verbs, RFT_VERBS_PEERS=1) a pair one of whose ends has no place left
//                is refused and talks through UCX: queued small and large messages arrive, in
//                order (dataplane_verbs_links.cc, as on-demand)
//   give-back    (n = 4, verbs, RFT_VERBS_PEERS=1) idle pairs close by agreement to give their
//                place to pairs that need one; nothing is lost or reordered (the same file)
//   give-back-crossing (n = 4, as give-back) both ends of a pair asking each other to close
//   give-back-death --victim V  (n = 3; rftrun --ft, RFT_FAULT_INJECT) a death during a close
//   return | return-refused | return-churn  (n = 3, verbs, RFT_VERBS_PEERS=1, a small
//                RFT_VERBS_RETURN_AFTER) pairs that moved to UCX coming back to verbs
//   return-stalled (as return, a short RFT_VERBS_PLACE_WAIT) a process asked to close is away
//                from rft: the pair that waits for its place goes through UCX, then comes back
//   return-death (as return; rftrun --ft, RFT_FAULT_INJECT=verbs.return.taken@1) a death as a
//                pair comes back
//   teardown     (n = 2) rank 0 destroys its data plane with operations in flight to a
//                stopped rank 1: it returns within its bound, without aborting
//   read-death   (n = 2; rftrun --ft) a receive that matches the rendezvous request of a
//                sender that died since fails with RFT_ERR_PROC_FAILED (the read finds it gone)
//   failure --victim V  (n >= 3; rftrun --ft) operations pending on V when it is
//                killed (V has the launcher kill it once every survivor posted them)
//                complete with RFT_ERR_PROC_FAILED, what V sent before is still
//                received, ANY_SOURCE receives stay pending, and the survivors go on
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "detector/thread_state.h"
#include "tests/multiproc/dataplane_checks.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/runtime.h"

namespace rft::testing {
namespace {

using transport::Bootstrap;
using transport::DataPlane;
using transport::kAnySource;
using transport::kAnyTag;
using transport::MessageStatus;
using transport::Request;

constexpr uint32_t kContext = 3;
constexpr int32_t kPostedTag = 14;  // a survivor tells the victim its operations are posted

// Content that differs per sender and sequence number.
std::vector<char> Pattern(size_t size, Rank source, uint32_t seq) {
  return TestBytes(size, source * 1000 + seq);
}

// Rank 0 sends rank 1 a message large enough for rft's own rendezvous (same-node or RDMA
// READ), then sits in a fence, where it does not progress the data plane. Rank 1 fills its path
// to rank 0 (the shared-memory FIFO, or the verbs channel's credits) with small messages until
// one has to wait, then receives the large one: its done message queues behind them, so the
// receive must stay pending, or a receiver that then blocked outside rft would hold the
// sender's send forever. After the fence both complete.
int CmaDone(Bootstrap& job, DataPlane& plane) {
  constexpr int32_t kLarge = 20, kFlood = 21, kFloodEnd = 22;
  constexpr uint32_t kMaxFlood = 1 << 20;
  CHECK(job.size() == 2, "cma-done needs n = 2, not " << job.size());
  const Rank me = job.rank();
  if (!plane.UsesCmaWith(1 - me) && !plane.UsesVerbsTo(1 - me)) {
    std::printf("cma-done skipped: neither the same-node rendezvous nor verbs between the ranks\n");
    return 0;
  }
  const size_t large = plane.options().eager_limit * 4 + 3;
  uint64_t word = 0;
  // One message each way first: the first message between two processes may need both to
  // progress (verbs connects a pair on demand, docs/verbs.md), and what is tested here is a
  // connected path that is full, not its connection.
  constexpr int32_t kWarmUp = 19;
  if (me == 0) {
    CHECK_OK(plane.Send(&word, sizeof(word), 1, kWarmUp, kContext));
    CHECK_OK(plane.Recv(&word, sizeof(word), 1, kWarmUp, kContext, nullptr));
  } else {
    CHECK_OK(plane.Recv(&word, sizeof(word), 0, kWarmUp, kContext, nullptr));
    CHECK_OK(plane.Send(&word, sizeof(word), 0, kWarmUp, kContext));
  }
  if (me == 0) {
    const std::vector<char> out = Pattern(large, 0, 1);
    Request* send = nullptr;
    CHECK_OK(plane.Isend(out.data(), large, 1, kLarge, kContext, &send));
    CHECK_OK(job.Fence(false));  // rank 1 floods this process and receives meanwhile
    uint32_t flooded = 0;
    CHECK_OK(plane.Recv(&flooded, sizeof(flooded), 1, kFloodEnd, kContext, nullptr));
    for (uint32_t i = 0; i < flooded; ++i) {
      CHECK_OK(plane.Recv(&word, sizeof(word), 1, kFlood, kContext, nullptr));
      CHECK(word == i, "flood message " << i << " carries " << word);
    }
    const Status sent = plane.Wait(&send, nullptr, Deadline::After(std::chrono::seconds(20)));
    CHECK(sent.ok(), "the large send: " << sent.ToString());
    std::printf("cma-done ok rank=0 flooded=%u path=%s\n", flooded,
                plane.UsesVerbsTo(1) ? "verbs" : (plane.UsesRingTo(1) ? "ring" : "ucx"));
    return 0;
  }
  MessageStatus status;
  CHECK_OK(plane.Probe(0, kLarge, kContext, &status));  // the request-to-send is here
  std::vector<uint64_t> words;
  words.reserve(kMaxFlood);  // the buffers of pending sends must not move
  std::vector<Request*> flood;
  bool full = false;
  while (!full && flood.size() < kMaxFlood) {
    words.push_back(flood.size());
    Request* request = nullptr;
    CHECK_OK(plane.Isend(&words.back(), sizeof(uint64_t), 0, kFlood, kContext, &request));
    flood.push_back(request);
    // A send the FIFO had room for is done after a little progress; one that waits is queued.
    bool done = false;
    for (int i = 0; i < 3 && !done; ++i) CHECK_OK(plane.Test(&flood.back(), &done, nullptr));
    full = !done;
  }
  CHECK(full, "rank 0's path took " << flood.size() << " messages without filling");
  std::vector<char> in(large);
  Request* receive = nullptr;
  CHECK_OK(plane.Irecv(in.data(), large, 0, kLarge, kContext, &receive));
  for (int i = 0; i < 100; ++i) {
    bool done = false;
    CHECK_OK(plane.Test(&receive, &done, nullptr));
    CHECK(!done, "the receive completed while its done message could not leave");
    usleep(1000);
  }
  const uint32_t flooded = static_cast<uint32_t>(flood.size());
  Request* end = nullptr;
  CHECK_OK(plane.Isend(&flooded, sizeof(flooded), 0, kFloodEnd, kContext, &end));
  CHECK_OK(job.Fence(false));
  const Status received = plane.Wait(&receive, &status, Deadline::After(std::chrono::seconds(20)));
  CHECK(received.ok() && in == Pattern(large, 0, 1), "the large receive: " << received.ToString());
  flood.push_back(end);
  CHECK_OK(plane.Waitall(flood, {}, Deadline::After(std::chrono::seconds(20))));
  std::printf("cma-done ok rank=1 flooded=%u\n", flooded);
  return 0;
}

int Mesh(Bootstrap& job, DataPlane& plane) {
  const Rank n = job.size();
  const Rank me = job.rank();
  // Each sender sends kPerPeer messages to each peer, sizes cycling through both paths: more than
  // a path holds at once (the verbs channel's 16 credits and 18 send slots per peer, a ring's
  // room), so that some wait in the direct queue, in order, until the receiver drains.
  const std::vector<size_t> sizes = {
      0, 8, 1000, plane.options().eager_limit, plane.options().eager_limit + 1, 200000};
  constexpr uint32_t kPerPeer = 48;
  std::vector<std::vector<char>> outgoing;
  std::vector<Request*> sends;
  for (Rank peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    for (uint32_t seq = 0; seq < kPerPeer; ++seq) {
      outgoing.push_back(Pattern(sizes[seq % sizes.size()], me, seq));
    }
  }
  size_t k = 0;
  for (Rank peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    for (uint32_t seq = 0; seq < kPerPeer; ++seq, ++k) {
      Request* request = nullptr;
      CHECK_OK(plane.Isend(outgoing[k].data(), outgoing[k].size(), peer, /*tag=*/seq % 3, kContext,
                           &request));
      sends.push_back(request);
    }
  }
  // Receives: from even ranks by name, from odd ranks through ANY_SOURCE with the sequence
  // checked per sender (non-overtaking).
  std::vector<uint32_t> next_seq(n, 0);
  std::vector<char> buffer(200000);
  const size_t expected = static_cast<size_t>(n - 1) * kPerPeer;
  for (size_t received = 0; received < expected; ++received) {
    MessageStatus status;
    // ANY_TAG: tags cycle, so only order per sender tells the sequence number.
    // Alternately ANY_SOURCE and a named sender that still has messages due.
    Rank from = kAnySource;
    if (received % 2 == 1) {
      for (Rank r = 0; r < n; ++r) {
        if (r != me && next_seq[r] < kPerPeer) from = r;
      }
    }
    CHECK_OK(plane.Recv(buffer.data(), buffer.size(), from, kAnyTag, kContext, &status));
    const Rank source = status.source;
    CHECK(source < n && source != me, "message from rank " << source);
    const uint32_t seq = next_seq[source]++;
    CHECK(status.tag == static_cast<int32_t>(seq % 3),
          "from " << source << " seq " << seq << ": tag " << status.tag << " (overtaken?)");
    const std::vector<char> want = Pattern(sizes[seq % sizes.size()], source, seq);
    CHECK(status.count == want.size(), "from " << source << " seq " << seq << ": " << status.count
                                               << " bytes, expected " << want.size());
    CHECK(std::equal(want.begin(), want.end(), buffer.begin()),
          "from " << source << " seq " << seq << ": corrupted content");
  }
  CHECK_OK(plane.Waitall(sends, {}));
  // Which path carried them: a ring to every same-node peer of the same-node rendezvous, unless
  // RFT_SHM_RINGS=n.
  uint32_t rings = 0, cma = 0;
  for (Rank peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    CHECK(!plane.UsesRingTo(peer) || plane.UsesCmaWith(peer),
          "a ring to rank " << peer << ", which does not use the same-node rendezvous");
    rings += plane.UsesRingTo(peer) ? 1 : 0;
    cma += plane.UsesCmaWith(peer) ? 1 : 0;
  }
  std::printf("mesh ok n=%u blocking=%d rings=%u cma=%u\n", n,
              plane.options().progress == transport::ProgressMode::kBlock ? 1 : 0, rings, cma);
  return 0;
}

int Failure(Bootstrap& job, DataPlane& plane, Rank victim) {
  const Rank me = job.rank();
  const Rank witness = victim == 0 ? 1 : 0;  // receives what the victim sent before dying
  const size_t large = plane.options().eager_limit * 8 + 100;
  std::vector<char> eager_data = Pattern(64, victim, 1);
  std::vector<char> large_data = Pattern(large, victim, 2);
  if (me == victim) {
    for (int i = 0; i < 3; ++i) CHECK_OK(plane.Send(eager_data.data(), 64, witness, 7, kContext));
    Request* rendezvous = nullptr;  // never fetched: the witness receives it after our death
    CHECK_OK(plane.Isend(large_data.data(), large, witness, 8, kContext, &rendezvous));
    CHECK_OK(plane.Send("sync", 4, witness, 6, kContext));
    CHECK_OK(job.Fence(false));
    // The agreed point: every survivor has posted what depends on us (not a timer, which a
    // loaded machine's start-up can outlast). Then the launcher kills us on our request.
    for (Rank peer = 0; peer < job.size(); ++peer) {
      if (peer == me) continue;
      char posted[6];
      CHECK_OK(plane.Recv(posted, sizeof(posted), peer, kPostedTag, kContext, nullptr));
    }
    (void)job.Abort(0, "test victim ends itself", RankSet{me});
    for (;;) pause();
  }
  if (me == witness) {
    char sync[4];
    MessageStatus status;
    CHECK_OK(plane.Recv(sync, sizeof(sync), victim, 6, kContext, &status));
    CHECK(plane.unexpected_count() >= 4, "the victim's earlier messages are not queued");
  }
  CHECK_OK(job.Fence(false));

  // Operations that can only finish with the victim's help, of both sizes and directions.
  std::vector<char> small_in(64), large_in(large), small_out = Pattern(64, me, 3);
  std::vector<char> large_out = Pattern(large, me, 4);
  std::vector<Request*> pending(4, nullptr);
  CHECK_OK(plane.Irecv(small_in.data(), small_in.size(), victim, 9, kContext, &pending[0]));
  CHECK_OK(plane.Irecv(large_in.data(), large_in.size(), victim, 10, kContext, &pending[1]));
  CHECK_OK(plane.Isend(large_out.data(), large, victim, 11, kContext, &pending[2]));
  CHECK_OK(plane.Isend(small_out.data(), 64, victim, 12, kContext, &pending[3]));
  Request* wildcard = nullptr;
  std::vector<char> wildcard_in(64);
  CHECK_OK(
      plane.Irecv(wildcard_in.data(), wildcard_in.size(), kAnySource, 13, kContext, &wildcard));
  // Read before the victim may go: with the runtime's death watch its end is known within
  // microseconds, possibly before the send below returns.
  const uint64_t epoch_before = plane.failure_epoch();
  const int64_t start = MonotonicNanos();
  // The victim may go now; once it has this message it may be dead before the send returns.
  const Status posted = plane.Send("posted", 6, victim, kPostedTag, kContext);
  CHECK(posted.ok() || posted.code() == RFT_ERR_PROC_FAILED, "posted: " << posted.ToString());

  std::vector<MessageStatus> statuses(pending.size());
  const Status all = plane.Waitall(pending, statuses, Deadline::After(std::chrono::seconds(20)));
  CHECK(all.code() == RFT_ERR_IN_STATUS,
        "waitall with the victim's operations: " << all.ToString());
  const double ms = static_cast<double>(MonotonicNanos() - start) / 1e6;
  // The receives and the rendezvous send need the victim; the eager send may have left
  // before it died (UCS_OK is not delivery, but it is not an error either).
  for (int i = 0; i < 3; ++i) {
    CHECK(statuses[i].error == RFT_ERR_PROC_FAILED,
          "operation " << i << " on the victim: " << rft_error_name(statuses[i].error));
  }
  CHECK(statuses[3].error == RFT_ERR_PROC_FAILED || statuses[3].error == RFT_SUCCESS,
        "eager send to the victim: " << rft_error_name(statuses[3].error));
  CHECK(plane.failure_epoch() > epoch_before, "failure epoch did not move");
  CHECK(plane.failed_ranks().Contains(victim), "victim not among the failed ranks");

  // The ANY_SOURCE receive is the API layer's to fail (PROC_FAILED_PENDING): still pending.
  bool done = true;
  CHECK_OK(plane.Test(&wildcard, &done, nullptr));
  CHECK(!done, "an ANY_SOURCE receive was completed by a peer's failure");
  CHECK(plane.HasAnySourceReceive(kContext), "HasAnySourceReceive is false");
  CHECK_OK(plane.Cancel(wildcard));
  MessageStatus cancelled;
  CHECK_OK(plane.Wait(&wildcard, &cancelled));
  CHECK(cancelled.cancelled, "cancelled wildcard receive not marked cancelled");

  if (me == witness) {
    // Data that arrived before the failure is not lost, and keeps its order.
    for (int i = 0; i < 3; ++i) {
      std::vector<char> in(64);
      MessageStatus status;
      CHECK_OK(plane.Recv(in.data(), in.size(), victim, kAnyTag, kContext, &status));
      CHECK(status.tag == 7 && in == eager_data, "eager message " << i << " from the victim");
    }
    // The announced rendezvous' data stayed with the victim.
    MessageStatus status;
    const Status lost = plane.Recv(large_in.data(), large, victim, 8, kContext, &status);
    CHECK(lost.code() == RFT_ERR_PROC_FAILED,
          "rendezvous from the dead victim: " << lost.ToString());
  }
  // New operations on the victim fail at once.
  const Status late_recv = plane.Recv(small_in.data(), 64, victim, 9, kContext, nullptr);
  CHECK(late_recv.code() == RFT_ERR_PROC_FAILED,
        "receive after the failure: " << late_recv.ToString());
  const Status late_send = plane.Send(small_out.data(), 64, victim, 9, kContext);
  CHECK(late_send.code() == RFT_ERR_PROC_FAILED,
        "send after the failure: " << late_send.ToString());

  // The survivors talk on, both sizes, without an error.
  std::vector<Request*> round;
  std::vector<std::vector<char>> in;
  for (Rank peer = 0; peer < job.size(); ++peer) {
    if (peer == victim || peer == me) continue;
    for (size_t size : {size_t{64}, large}) {
      in.emplace_back(size);
      round.emplace_back();
      CHECK_OK(plane.Irecv(in.back().data(), size, peer, 20, kContext, &round.back()));
    }
  }
  for (Rank peer = 0; peer < job.size(); ++peer) {
    if (peer == victim || peer == me) continue;
    CHECK_OK(plane.Send(small_out.data(), 64, peer, 20, kContext));
    CHECK_OK(plane.Send(large_out.data(), large, peer, 20, kContext));
  }
  CHECK_OK(plane.Waitall(round, {}, Deadline::After(std::chrono::seconds(20))));
  std::printf("failure completed in %.1f ms; survivors ok without rank %u\n", ms, victim);
  RankSet survivors = RankSet::Range(0, job.size());
  survivors.Erase(victim);
  CHECK_OK(job.Fence(false, survivors));  // not over the dead victim: PMIx leaves that undefined
  return 0;
}

// Rank 1 stops itself (SIGSTOP) once rank 0 knows its pid; rank 0 then posts operations that
// need rank 1 (a rendezvous and eager sends to it, a receive from it) and destroys its data
// plane with them in flight: that must neither abort nor hang (bounded by the endpoints' close).
// Rank 0 then has the launcher kill rank 1.
int Teardown(Bootstrap& job, std::unique_ptr<DataPlane>& plane) {
  const Rank me = job.rank();
  const uint32_t pid = static_cast<uint32_t>(getpid());
  auto pids = job.Exchange("test.teardown.pid", std::as_bytes(std::span(&pid, 1)));
  CHECK_OK(pids.status());
  if (me == 1) {
    raise(SIGSTOP);
    for (;;) pause();
  }
  if (me != 0) return 0;
  uint32_t stopped_pid;
  std::memcpy(&stopped_pid, (*pids)[1].data(), 4);
  const pid_t stopped = static_cast<pid_t>(stopped_pid);
  const Deadline stopped_by = Deadline::After(std::chrono::seconds(20));
  while (detector::internal::ThreadState(stopped, stopped) != 'T') {  // main thread: tid = pid
    CHECK(!stopped_by.expired(), "rank 1 did not stop within 20 s");
    usleep(1000);
  }
  const size_t large = plane->options().eager_limit * 64;
  std::vector<char> out(large, 'o'), in(64);
  std::vector<Request*> pending(6, nullptr);
  CHECK_OK(plane->Isend(out.data(), large, 1, 30, kContext, &pending[0]));
  for (int i = 1; i < 5; ++i) CHECK_OK(plane->Isend(out.data(), 64, 1, 31, kContext, &pending[i]));
  CHECK_OK(plane->Irecv(in.data(), in.size(), 1, 32, kContext, &pending[5]));
  const int64_t start = MonotonicNanos();
  plane.reset();
  const double seconds = static_cast<double>(MonotonicNanos() - start) / 1e9;
  CHECK(seconds < 10, "destroying the data plane took " << seconds << " s");
  std::printf("teardown ok in %.3f s\n", seconds);
  std::fflush(stdout);
  CHECK_OK(job.Abort(0, "test: the stopped rank is done", RankSet{1}));
  return 0;
}

// Rank 1 announces a large message to rank 0 (only the rendezvous request travels) and, once
// rank 0 has it, kills itself. Rank 0 waits until the launcher reports rank 1 ended, without
// progressing the data plane, so that nothing has told the plane yet; then it receives the
// message: the plane matches the request and reads the data from a process that is gone (an
// RDMA READ on a dead QP, a process_vm_readv of a missing pid, a UCX fetch), and the receive
// must end with RFT_ERR_PROC_FAILED, not hang or succeed. The data plane alone, with no failure
// registry: the read is the only witness.
int ReadFromTheDead(Bootstrap& job, DataPlane& plane) {
  constexpr int32_t kLargeTag = 40, kDieTag = 41;
  const size_t large = plane.options().eager_limit * 8 + 100;
  std::vector<char> data = Pattern(large, 1, 40);
  if (job.rank() == 1) {
    Request* send = nullptr;
    CHECK_OK(plane.Isend(data.data(), large, 0, kLargeTag, kContext, &send));
    char go = 0;
    CHECK_OK(plane.Recv(&go, 1, 0, kDieTag, kContext, nullptr));
    raise(SIGKILL);
  }
  const Deadline within = Deadline::After(std::chrono::seconds(20));
  bool found = false;
  while (!found) {
    CHECK(!within.expired(), "rank 1's rendezvous request did not come within 20 s");
    CHECK_OK(plane.Iprobe(1, kLargeTag, kContext, &found, nullptr));
  }
  const char go = 1;
  CHECK_OK(plane.Send(&go, 1, 1, kDieTag, kContext));
  while (!job.DeadRanks().Contains(1)) {
    CHECK(!within.expired(), "the launcher did not report rank 1 ended within 20 s");
    usleep(1000);
  }
  std::vector<char> in(large);
  Request* receive = nullptr;
  const int64_t start = MonotonicNanos();
  CHECK_OK(plane.Irecv(in.data(), in.size(), 1, kLargeTag, kContext, &receive));
  MessageStatus status;
  const rft::Status waited = plane.Wait(&receive, &status, within);
  const double ms = static_cast<double>(MonotonicNanos() - start) / 1e6;
  CHECK(waited.code() == RFT_ERR_PROC_FAILED,
        "the read from the dead rank 1 ended with " << waited.ToString());
  std::printf("read-death ok: PROC_FAILED after %.1f ms\n", ms);
  return 0;
}

// The verbs rendezvous's registration cache against memory that is unmapped and mapped again
// at the same address (other pages): rank 0 sends from one mapping, rank 1 receives into one,
// kSends times each (found registered after the first), then each end remaps its buffer with
// new contents and the transfer runs again. A registration of the old pages used after the
// remap would send the old bytes, or read into pages the receiver no longer sees: the contents
// are checked every time.
int RegistrationCacheCheck(Bootstrap& job, DataPlane& plane) {
  constexpr int32_t kTag = 30;
  constexpr int kSends = 5;
  CHECK(job.size() == 2, "reg-cache needs n = 2, not " << job.size());
  const Rank me = job.rank();
  if (!plane.UsesVerbsTo(1 - me)) {
    std::printf("reg-cache skipped: no verbs between the ranks\n");
    return 0;
  }
  const size_t length = plane.options().eager_limit * 8 + 5;
  const size_t mapped = (length + 4095) / 4096 * 4096;
  // Anonymous pages of its own, at `at` when not null (failing rather than elsewhere).
  auto map = [&](void* at) -> char* {
    const int fixed = at == nullptr ? 0 : MAP_FIXED_NOREPLACE;
    void* got =
        mmap(at, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
    return got == MAP_FAILED || (at != nullptr && got != at) ? nullptr : static_cast<char*>(got);
  };
  char* buffer = map(nullptr);
  CHECK(buffer != nullptr, "mmap of " << mapped << " bytes: " << std::strerror(errno));
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      // The same address, new pages: the cached registration must not be used.
      CHECK(munmap(buffer, mapped) == 0, "munmap: " << std::strerror(errno));
      CHECK(map(buffer) == buffer,
            "mmap again at " << static_cast<void*>(buffer) << ": " << std::strerror(errno));
    }
    const std::vector<char> expected = Pattern(length, 0, 40 + round);
    for (int i = 0; i < kSends; ++i) {
      if (me == 0) {
        std::memcpy(buffer, expected.data(), length);
        CHECK_OK(plane.Send(buffer, length, 1, kTag, kContext));
      } else {
        std::memset(buffer, 0, length);
        CHECK_OK(plane.Recv(buffer, length, 0, kTag, kContext, nullptr));
        CHECK(std::memcmp(buffer, expected.data(), length) == 0,
              "round " << round << " transfer " << i << ": the receive buffer holds other bytes");
      }
    }
  }
  const DataPlane::RegistrationCounts counts = plane.registration_counts();
  munmap(buffer, mapped);
  CHECK(counts.invalidations >= 1 && counts.hits >= 2 * (kSends - 1),
        "registration cache: hits=" << counts.hits << " misses=" << counts.misses
                                    << " invalidations=" << counts.invalidations);
  std::printf("reg-cache ok rank=%u hits=%llu misses=%llu invalidations=%llu\n", me,
              static_cast<unsigned long long>(counts.hits),
              static_cast<unsigned long long>(counts.misses),
              static_cast<unsigned long long>(counts.invalidations));
  return 0;
}

}  // namespace
}  // namespace rft::testing

constexpr const char* kUsage =
    "usage: rules | mesh | cma-done | reg-cache | on-demand | ucx-rest | ucx-rest-mixed | "
    "working-set | give-back | give-back-crossing | give-back-death --victim V | return | "
    "return-refused | return-churn | return-stalled | return-death | read-death | teardown | "
    "failure --victim V";

int main(int argc, char** argv) {
  using namespace rft::testing;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) return Fail(kUsage);
  const std::string mode = argv[1];
  auto joined = rft::transport::Bootstrap::Init();
  if (!joined.ok()) return Fail(joined.status().ToString());
  rft::transport::Bootstrap& job = **joined;
  // A failure reaches the data plane as in every real job: through the runtime's registry.
  // The other modes test the data plane alone.
  std::unique_ptr<rft::api::Runtime> runtime;
  std::unique_ptr<rft::transport::DataPlane> bare_plane;
  if (mode == "failure" || mode == "give-back-death" || mode == "return-death") {
    auto options = rft::api::Runtime::OptionsFromConfig(job);
    if (!options.ok()) return Fail(options.status().ToString());
    auto created = rft::api::Runtime::Create(std::move(*joined), *options);
    if (!created.ok()) return Fail(created.status().ToString());
    runtime = std::move(*created);
  } else {
    auto options = rft::transport::DataPlane::OptionsFromConfig(job);
    if (!options.ok()) return Fail(options.status().ToString());
    auto created = rft::transport::DataPlane::Create(&job, *options);
    if (!created.ok()) return Fail(created.status().ToString());
    bare_plane = std::move(*created);
  }
  rft::transport::DataPlane& plane = runtime != nullptr ? runtime->plane() : *bare_plane;
  {
    // Which path each peer's messages take: the soft-RoCE checks look for verbs here.
    uint32_t rings = 0, verbs = 0;
    for (rft::Rank peer = 0; peer < plane.size(); ++peer) {
      rings += plane.UsesRingTo(peer) ? 1 : 0;
      verbs += plane.UsesVerbsTo(peer) ? 1 : 0;
    }
    std::printf("rank %u: paths to %u peers: %u ring, %u verbs\n", plane.rank(), plane.size() - 1,
                rings, verbs);
  }
  int rc = 0;
  if (mode == "rules") {
    rc = Rules(job, plane);
  } else if (mode == "mesh") {
    rc = Mesh(job, plane);
  } else if (mode == "failure" && argc == 4 && std::strcmp(argv[2], "--victim") == 0) {
    rc = Failure(job, plane, static_cast<rft::Rank>(std::atoi(argv[3])));
  } else if (mode == "cma-done") {
    rc = CmaDone(job, plane);
  } else if (mode == "reg-cache") {
    rc = RegistrationCacheCheck(job, plane);
  } else if (mode == "on-demand") {
    rc = OnDemand(job, plane);
  } else if (mode == "ucx-rest") {
    rc = UcxRest(job, plane);
  } else if (mode == "ucx-rest-mixed") {
    rc = UcxRestMixed(job, plane);
  } else if (mode == "working-set") {
    rc = WorkingSet(job, plane);
  } else if (mode == "give-back") {
    rc = GiveBack(job, plane);
  } else if (mode == "give-back-crossing") {
    rc = GiveBackCrossing(job, plane);
  } else if (mode == "give-back-death" && argc == 4 && std::strcmp(argv[2], "--victim") == 0) {
    rc = GiveBackDeath(job, plane, static_cast<rft::Rank>(std::atoi(argv[3])));
  } else if (mode == "return") {
    rc = Return(job, plane);
  } else if (mode == "return-refused") {
    rc = ReturnRefused(job, plane);
  } else if (mode == "return-churn") {
    rc = ReturnChurn(job, plane);
  } else if (mode == "return-stalled") {
    rc = ReturnStalled(job, plane);
  } else if (mode == "return-death") {
    rc = ReturnDeath(job, plane);
  } else if (mode == "read-death") {
    rc = ReadFromTheDead(job, plane);
    if (rc == 0) return 0;  // rank 1 is gone: no final fence
  } else if (mode == "teardown") {
    return Teardown(job, bare_plane);
  } else {
    return Fail(kUsage);
  }
  if (rc != 0) return rc;
  if (mode != "failure" && mode != "give-back-death" && mode != "return-death") {
    // Nobody closes endpoints while others may still be sending to it.
    const rft::Status status = job.Fence(false);
    if (!status.ok()) return Fail("final fence: " + status.ToString());
  }
  const uint64_t drops = plane.drops().total();
  // Which checks dropped them, for the failure's message: read before the plane goes.
  std::string reasons;
  for (size_t e = 1; e < static_cast<size_t>(rft::transport::DecodeError::kCount); ++e) {
    const auto error = static_cast<rft::transport::DecodeError>(e);
    if (const uint64_t count = plane.drops().count(error); count > 0) {
      reasons += std::string(reasons.empty() ? "" : ", ") + rft::transport::DecodeErrorName(error) +
                 ": " + std::to_string(count);
    }
  }
  if (runtime != nullptr) runtime->Close();
  bare_plane.reset();
  if (mode != "rules" && drops != 0) {
    return Fail(std::to_string(drops) + " messages dropped (" + reasons + ")");
  }
  return 0;
}
