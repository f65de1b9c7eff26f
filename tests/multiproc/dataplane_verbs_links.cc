// The verbs backend's pair connections on demand (docs/verbs.md, "Connecting on demand"), for
// the data plane's multi-process worker (dataplane_worker.cc): run in the soft-RoCE guest.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/clock.h"
#include "tests/multiproc/dataplane_checks.h"

namespace rft::testing {
namespace {

using transport::Bootstrap;
using transport::DataPlane;
using transport::MessageStatus;
using transport::Request;

constexpr uint32_t kContext = 3;
constexpr int32_t kTag = 41;

// Rank `from` sends `to` a small message, then a large one (the verbs rendezvous when the pair
// is connected), with the same tag: they must arrive in that order.
std::vector<char> SmallFor(Rank from, Rank to) { return TestBytes(24, from * 16 + to); }
std::vector<char> LargeFor(const DataPlane& plane, Rank from, Rank to) {
  return TestBytes(plane.options().eager_limit * 4 + 3, 1000 + from * 16 + to);
}

// Sends the small and large messages to every rank of `to` and receives them from every rank of
// `from`, checking their content and order.
int Exchange(DataPlane& plane, const std::vector<Rank>& to, const std::vector<Rank>& from) {
  const Rank me = plane.rank();
  std::vector<std::vector<char>> out, in;
  std::vector<Request*> requests;
  for (Rank peer : to) {
    out.push_back(SmallFor(me, peer));
    out.push_back(LargeFor(plane, me, peer));
  }
  for (Rank peer : from) {
    in.push_back(std::vector<char>(SmallFor(peer, me).size() + 1));
    in.push_back(std::vector<char>(LargeFor(plane, peer, me).size() + 1));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    Request* receive = nullptr;
    CHECK_OK(plane.Irecv(in[i].data(), in[i].size(), from[i / 2], kTag, kContext, &receive));
    requests.push_back(receive);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Request* send = nullptr;
    CHECK_OK(plane.Isend(out[i].data(), out[i].size(), to[i / 2], kTag, kContext, &send));
    requests.push_back(send);
  }
  std::vector<MessageStatus> statuses(requests.size());
  CHECK_OK(plane.Waitall(requests, statuses, Deadline::After(std::chrono::seconds(60))));
  for (size_t i = 0; i < in.size(); ++i) {
    const Rank peer = from[i / 2];
    const std::vector<char> expected = i % 2 == 0 ? SmallFor(peer, me) : LargeFor(plane, peer, me);
    CHECK(statuses[i].count == expected.size(),
          "message " << i % 2 << " from rank " << peer << ": " << statuses[i].count
                     << " bytes, expected " << expected.size() << " (out of order?)");
    CHECK(std::equal(expected.begin(), expected.end(), in[i].begin()),
          "message " << i % 2 << " from rank " << peer << " is corrupt");
  }
  return 0;
}

// A receive that fails with a message rather than hang when nothing comes.
Status RecvWithin(DataPlane& plane, void* buffer, size_t capacity, Rank source, Deadline bound) {
  Request* receive = nullptr;
  RFT_RETURN_IF_ERROR(plane.Irecv(buffer, capacity, source, kTag, kContext, &receive));
  return plane.Wait(&receive, nullptr, bound);
}

// One round trip between ranks 0 and 1: rank 0 sends `out` first, rank 1 answers with its own;
// `in` gets the peer's.
Status RoundTrip(DataPlane& plane, uint64_t out, uint64_t* in, Deadline bound) {
  const Rank me = plane.rank();
  const Rank peer = 1 - me;
  if (me == 0) RFT_RETURN_IF_ERROR(plane.Send(&out, sizeof(out), peer, kTag, kContext));
  RFT_RETURN_IF_ERROR(RecvWithin(plane, in, sizeof(*in), peer, bound));
  if (me == 1) RFT_RETURN_IF_ERROR(plane.Send(&out, sizeof(out), peer, kTag, kContext));
  return Status::Ok();
}

// `count` round trips of distinct values, each checked.
Status RoundTrips(DataPlane& plane, int count, Deadline bound) {
  const Rank me = plane.rank();
  for (int i = 0; i < count; ++i) {
    uint64_t in = 0;
    RFT_RETURN_IF_ERROR(RoundTrip(plane, static_cast<uint64_t>(i) * 2 + me, &in, bound));
    if (in != static_cast<uint64_t>(i) * 2 + (1 - me)) {
      return Status(RFT_ERR_OTHER, "round trip " + std::to_string(i) + ": received " +
                                       std::to_string(in) + ", expected " +
                                       std::to_string(i * 2 + (1 - me)));
    }
  }
  return Status::Ok();
}

}  // namespace

// Pairs connect when they first talk (docs/verbs.md, "Connecting on demand"). Ranks 0 and 1
// send to each other at once (rank 1's request for an address may cross rank 0's address);
// rank 3 sends to rank 2, which only receives (the higher rank asks); then rank 0 sends to rank
// 2 (the lower rank sends its address unasked). Each rank holds QPs for exactly its partners.
int OnDemand(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 4, "on-demand needs n = 4, not " << job.size());
  const Rank me = job.rank();
  for (Rank peer = 0; peer < 4; ++peer) {
    CHECK(peer == me || plane.UsesVerbsTo(peer), "rank " << peer << " is not reached by verbs");
  }
  CHECK(plane.verbs_qp_count() == 0, plane.verbs_qp_count() << " QPs before any message");
  const uint64_t out = 100 + me;
  uint64_t in = 0;
  const Rank partner = me ^ 1;
  if (me < 2) {
    Request* send = nullptr;
    CHECK_OK(plane.Isend(&out, sizeof(out), partner, kTag, kContext, &send));
    CHECK_OK(plane.Recv(&in, sizeof(in), partner, kTag, kContext, nullptr));
    CHECK_OK(plane.Wait(&send, nullptr));
  } else if (me == 3) {
    CHECK_OK(plane.Send(&out, sizeof(out), partner, kTag, kContext));
    CHECK_OK(plane.Recv(&in, sizeof(in), partner, kTag, kContext, nullptr));
  } else {
    CHECK_OK(plane.Recv(&in, sizeof(in), partner, kTag, kContext, nullptr));
    CHECK_OK(plane.Send(&out, sizeof(out), partner, kTag, kContext));
  }
  CHECK(in == 100 + partner, "from rank " << partner << ": " << in);
  CHECK(plane.verbs_qp_count() == 1, plane.verbs_qp_count() << " QPs after talking to one peer");
  // Every send of the first pairs is on the wire: rank 0's address for rank 2 comes after this.
  CHECK_OK(job.Fence(false));
  if (me == 0) CHECK_OK(plane.Send(&out, sizeof(out), 2, kTag, kContext));
  if (me == 2) {
    CHECK_OK(plane.Recv(&in, sizeof(in), 0, kTag, kContext, nullptr));
    CHECK(in == 100, "from rank 0: " << in);
  }
  const uint32_t expected = me % 2 == 0 ? 2 : 1;
  CHECK(plane.verbs_qp_count() == expected, plane.verbs_qp_count()
                                                << " QPs, expected " << expected);
  std::printf("on-demand ok rank=%u qps=%u\n", me, plane.verbs_qp_count());
  return 0;
}

// UCX's worker resting while verbs carries the messages (docs/performance.md, "UCX's worker
// while verbs carries the messages"; poll mode, n = 2):
// 1. Each rank progresses until its UCX worker rests (nothing comes: no pair is connected).
// 2. After a fence (which progresses nothing), rank 0 sends rank 1 a message. The pair
//    connects on demand: rank 0's address reaches rank 1 through UCX while rank 1's worker
//    rests, so rank 1 must still find it, within the wait's bound.
// 3. A ping-pong over verbs: UCX has nothing to do, and rests again at both ends.
int UcxRest(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 2, "ucx-rest needs n = 2, not " << job.size());
  CHECK(plane.options().progress == transport::ProgressMode::kPoll,
        "ucx-rest needs RFT_PROGRESS=poll: in block mode UCX sleeps on its event fd instead");
  const Rank me = job.rank();
  const Rank peer = 1 - me;
  CHECK(plane.UsesVerbsTo(peer), "rank " << peer << " is not reached by verbs");
  const Deadline rest_bound = Deadline::After(std::chrono::seconds(30));
  while (plane.ucx_passes_skipped() == 0) {
    plane.Progress();
    CHECK(!rest_bound.expired(), "UCX's worker never rested in 30 s with nothing to do");
  }
  CHECK_OK(job.Fence(false));
  CHECK(plane.verbs_qp_count() == 0, plane.verbs_qp_count() << " QPs before any message");
  uint64_t in = 0;
  const auto bound = Deadline::After(std::chrono::seconds(60));
  CHECK_OK(RoundTrip(plane, 200 + me, &in, bound));
  CHECK(in == 200 + peer, "from rank " << peer << ": " << in);
  CHECK(plane.UsesVerbsTo(peer) && plane.verbs_qp_count() == 1,
        "the pair did not connect through verbs (" << plane.verbs_qp_count() << " QPs)");
  const uint64_t skipped_before = plane.ucx_passes_skipped();
  constexpr int kRoundTrips = 1000;  // each waits at least one pass: more than UCX's quiet count
  CHECK_OK(RoundTrips(plane, kRoundTrips, bound));
  const uint64_t skipped = plane.ucx_passes_skipped() - skipped_before;
  CHECK(skipped > 0,
        "UCX's worker was polled at every pass of " << kRoundTrips << " round trips over verbs");
  std::printf("ucx-rest ok rank=%u skipped=%llu\n", me, static_cast<unsigned long long>(skipped));
  return 0;
}

// The same with a pair on UCX (poll mode, n = 2, RFT_TRANSPORT=auto, and rank 1 without verbs:
// RFT_TRANSPORT=ucx there). Rank 0 has the verbs path up, but its peer's messages come through
// UCX: its worker must never rest, or each of them could wait up to kUcxQuietEvery passes.
int UcxRestMixed(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 2, "ucx-rest-mixed needs n = 2, not " << job.size());
  CHECK(plane.options().progress == transport::ProgressMode::kPoll,
        "ucx-rest-mixed needs RFT_PROGRESS=poll");
  const Rank me = job.rank();
  const Rank peer = 1 - me;
  CHECK(plane.has_verbs() == (me == 0),
        "rank " << me << (plane.has_verbs() ? " has" : " has no") << " verbs path: expected "
                << "rank 0 with one and rank 1 without (RFT_TRANSPORT=ucx there)");
  CHECK(!plane.UsesVerbsTo(peer), "rank " << peer << " is reached by verbs");
  const auto bound = Deadline::After(std::chrono::seconds(60));
  constexpr int kRoundTrips = 1000;
  CHECK_OK(RoundTrips(plane, kRoundTrips, bound));
  CHECK(plane.ucx_passes_skipped() == 0, "UCX's worker rested for "
                                             << plane.ucx_passes_skipped() << " passes though rank "
                                             << peer << "'s messages come through it");
  std::printf("ucx-rest-mixed ok rank=%u verbs=%d skipped=0\n", me, plane.has_verbs() ? 1 : 0);
  return 0;
}

// RFT_VERBS_PEERS=1: each process connects at most one peer through verbs, and a pair one of
// whose ends has no place left talks through UCX (docs/verbs.md, "A working set of peers").
// 1. Ranks 1 and 2 connect (their one place each).
// 2. Rank 0 sends rank 1 a small and a large message: rank 0 offers its address, rank 1 has no
//    place and refuses; rank 0 withdraws its QP and both messages, queued meanwhile (the large
//    one as a verbs rendezvous), go through UCX, in order.
// 3. Ranks 3 and 0 connect: rank 0's place came back with the withdrawn QP.
// 4. Every rank sends every other one a small and a large message: the new pairs (0-2, 1-3,
//    2-3) find both ends full, and refusals cross.
// Each rank ends with one QP, for its partner; the refusals that crossed are not drops.
int WorkingSet(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 4, "working-set needs n = 4, not " << job.size());
  CHECK(plane.options().verbs_peers == 1,
        "working-set needs RFT_VERBS_PEERS=1, not " << plane.options().verbs_peers);
  const Rank me = job.rank();
  const Rank partner = 3 - me;  // 0-3 and 1-2
  for (Rank peer = 0; peer < 4; ++peer) {
    CHECK(peer == me || plane.UsesVerbsTo(peer), "rank " << peer << " is not reached by verbs");
  }
  if (me == 1 || me == 2) {
    if (int rc = Exchange(plane, {partner}, {partner}); rc != 0) return rc;
  }
  CHECK_OK(job.Fence(false));
  if (me == 0) {
    if (int rc = Exchange(plane, {1}, {}); rc != 0) return rc;
    CHECK(!plane.UsesVerbsTo(1), "rank 1 refused a QP, yet is still reached by verbs");
    CHECK(plane.verbs_qp_count() == 0, plane.verbs_qp_count() << " QPs after the refusal");
  }
  if (me == 1) {
    if (int rc = Exchange(plane, {}, {0}); rc != 0) return rc;
  }
  CHECK_OK(job.Fence(false));
  if (me == 0 || me == 3) {
    if (int rc = Exchange(plane, {partner}, {partner}); rc != 0) return rc;
  }
  CHECK_OK(job.Fence(false));
  std::vector<Rank> others;
  for (Rank peer = 0; peer < 4; ++peer) {
    if (peer != me) others.push_back(peer);
  }
  if (int rc = Exchange(plane, others, others); rc != 0) return rc;
  for (Rank peer : others) {
    CHECK(plane.UsesVerbsTo(peer) == (peer == partner),
          "rank " << peer << (peer == partner ? " is not" : " is") << " reached by verbs");
  }
  CHECK(plane.verbs_qp_count() == 1, plane.verbs_qp_count() << " QPs, expected 1");
  std::printf("working-set ok rank=%u qps=%u partner=%u\n", me, plane.verbs_qp_count(), partner);
  return 0;
}

// RFT_VERBS_PEERS=1 with idle pairs giving their place back (docs/verbs.md, "Giving a place
// back"):
// 1. Pairs 0-3 and 1-2 connect (the one place of each rank).
// 2. Ranks 0 and 1 exchange a small and a large message each way. Each needs a place: rank 0
//    asks rank 3 to close their idle pair, rank 1 asks rank 2, and both agree (they only wait
//    to receive). Then 0 and 1 connect in the places that came back. Each of them also sends its
//    old partner a small and a large message right after asking: queued during the close, they
//    go through UCX after it, in order.
// 3. The closed pairs talk through UCX, the new ones through verbs; each rank closed one pair.
// 4. Rank 1 announces a large message to rank 0, which does not receive it yet; rank 0 then
//    needs a place for rank 2 and asks rank 1 to close: busy (rank 0 may still read that
//    message), rank 1 refuses (kVerbsStay), rank 2 is refused a QP, and the large message
//    arrives through the QPs that stayed.
// 5. Every rank sends every other one a small and a large message at once: closes asked for,
//    refused (kVerbsStay), crossing, and pairs left on UCX, whichever happens, lose nothing and
//    keep every pair's order; no rank holds more than its one QP.
int GiveBack(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 4, "give-back needs n = 4, not " << job.size());
  CHECK(plane.options().verbs_peers == 1 && plane.options().verbs_close_idle,
        "give-back needs RFT_VERBS_PEERS=1 and RFT_VERBS_CLOSE_IDLE on");
  const Rank me = job.rank();
  const Rank first = 3 - me;                           // 0-3 and 1-2
  const Rank second = me < 2 ? 1 - me : kInvalidRank;  // 0-1
  if (int rc = Exchange(plane, {first}, {first}); rc != 0) return rc;
  CHECK(plane.verbs_qp_count() == 1, plane.verbs_qp_count() << " QPs after step 1");
  CHECK_OK(job.Fence(false));
  if (second != kInvalidRank) {
    if (int rc = Exchange(plane, {second, first}, {second}); rc != 0) return rc;
  } else {
    if (int rc = Exchange(plane, {}, {first}); rc != 0) return rc;
  }
  // The end that agreed closes its QP once kVerbsClosed comes: it may still be draining.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (plane.verbs_pairs_closed() == 0 || plane.UsesVerbsTo(first)) {
    CHECK(std::chrono::steady_clock::now() < limit,
          "the pair with rank " << first << " did not close within 30 s");
    plane.Progress();
  }
  CHECK(plane.verbs_pairs_closed() == 1, plane.verbs_pairs_closed() << " pairs closed");
  if (second != kInvalidRank) {
    CHECK(plane.UsesVerbsTo(second), "rank " << second << " is not reached by verbs");
  }
  const uint32_t expected_qps = second != kInvalidRank ? 1 : 0;
  CHECK(plane.verbs_qp_count() == expected_qps,
        plane.verbs_qp_count() << " QPs after step 2, expected " << expected_qps);
  std::printf("give-back step 2 ok rank=%u closed with %u qps=%u\n", me, first,
              plane.verbs_qp_count());
  CHECK_OK(job.Fence(false));
  // Step 4: rank 1 announces a large message to rank 0 (its descriptor goes on the QP, and rank
  // 0 does not receive it yet), so when rank 0 asks it to close, to make a place for rank 2,
  // rank 1 is busy and says so. Rank 2 is then refused, and the pair 0-1 keeps its QPs: the
  // large message arrives through them.
  const std::vector<char> held = LargeFor(plane, 1, 0);
  if (me == 1) {
    Request* send = nullptr;
    CHECK_OK(plane.Isend(held.data(), held.size(), 0, kTag + 1, kContext, &send));
    CHECK_OK(job.Fence(false));
    MessageStatus status;
    CHECK_OK(plane.Wait(&send, &status, Deadline::After(std::chrono::seconds(60))));
  } else {
    CHECK_OK(job.Fence(false));
  }
  if (me == 0 || me == 2) {
    if (int rc = Exchange(plane, {2 - me}, {2 - me}); rc != 0) return rc;
  }
  if (me == 0) {
    CHECK(plane.verbs_closes_refused() == 1,
          plane.verbs_closes_refused() << " requests to close refused, expected 1 (rank 1's)");
    CHECK(plane.UsesVerbsTo(1) && !plane.UsesVerbsTo(2),
          "rank 1 " << (plane.UsesVerbsTo(1) ? "is" : "is not") << " and rank 2 "
                    << (plane.UsesVerbsTo(2) ? "is" : "is not") << " reached by verbs");
    std::vector<char> in(held.size() + 1);
    MessageStatus status;
    CHECK_OK(plane.Recv(in.data(), in.size(), 1, kTag + 1, kContext, &status));
    CHECK(status.count == held.size() && std::equal(held.begin(), held.end(), in.begin()),
          "rank 1's held message: " << status.count << " bytes, or corrupt");
    std::printf("give-back step 4 ok rank=0 refused=%llu\n",
                static_cast<unsigned long long>(plane.verbs_closes_refused()));
  }
  CHECK_OK(job.Fence(false));
  // Step 5.
  std::vector<Rank> others;
  for (Rank peer = 0; peer < 4; ++peer) {
    if (peer != me) others.push_back(peer);
  }
  if (int rc = Exchange(plane, others, others); rc != 0) return rc;
  CHECK(plane.verbs_qp_count() <= 1, plane.verbs_qp_count() << " QPs, expected at most 1");
  std::printf("give-back ok rank=%u closed=%llu qps=%u\n", me,
              static_cast<unsigned long long>(plane.verbs_pairs_closed()), plane.verbs_qp_count());
  return 0;
}

// RFT_VERBS_PEERS=1, both ends of a pair needing its place at once (docs/verbs.md, "Giving a
// place back"): pairs 0-1 and 2-3 connect; then, all at once after a fence, pairs 0-2 and 1-3
// exchange a small and a large message each way. Every rank asks its partner to close, and
// requests cross or are answered first, whichever the timing makes: a rank that agreed to a
// close waits for the place that close frees instead of refusing its new pair. Each rank ends
// with one pair closed and one QP, for its new partner, and every message arrives in order.
int GiveBackCrossing(Bootstrap& job, DataPlane& plane) {
  CHECK(job.size() == 4, "give-back-crossing needs n = 4, not " << job.size());
  CHECK(plane.options().verbs_peers == 1 && plane.options().verbs_close_idle,
        "give-back-crossing needs RFT_VERBS_PEERS=1 and RFT_VERBS_CLOSE_IDLE on");
  const Rank me = job.rank();
  const Rank first = me ^ 1u;   // 0-1 and 2-3
  const Rank second = me ^ 2u;  // 0-2 and 1-3
  if (int rc = Exchange(plane, {first}, {first}); rc != 0) return rc;
  CHECK_OK(job.Fence(false));
  if (int rc = Exchange(plane, {second}, {second}); rc != 0) return rc;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (plane.UsesVerbsTo(first)) {
    CHECK(std::chrono::steady_clock::now() < limit,
          "the pair with rank " << first << " did not close within 30 s");
    plane.Progress();
  }
  CHECK(plane.verbs_pairs_closed() == 1 && plane.UsesVerbsTo(second) && plane.verbs_qp_count() == 1,
        plane.verbs_pairs_closed()
            << " pairs closed, " << plane.verbs_qp_count() << " QPs, rank " << second
            << (plane.UsesVerbsTo(second) ? " is" : " is not") << " reached by verbs");
  std::printf("give-back-crossing ok rank=%u closed with %u qps=%u verbs to %u\n", me, first,
              plane.verbs_qp_count(), second);
  return 0;
}

// A death during a pair's close (docs/verbs.md, "Giving a place back"), under rftrun --ft with
// the runtime's failure registry, RFT_VERBS_PEERS=1 and RFT_FAULT_INJECT naming the victim:
//   victim 2 at verbs.close.requested: rank 0, which needs a place for rank 1, asks rank 2 to
//     close their pair; rank 2 dies as the request arrives. Rank 0 waits until the registry
//     reports rank 2, whose place the failure frees, then connects rank 1.
//   victim 0 at verbs.close.closing: rank 2 agrees to close and waits, its QP quiet; rank 0
//     dies as the agreement arrives. Rank 2 goes on once the registry reports rank 0, and then
//     connects rank 1 in the freed place.
// Either way what the survivors posted towards the victim completes with RFT_ERR_PROC_FAILED,
// and the two survivors then talk through verbs.
int GiveBackDeath(Bootstrap& job, DataPlane& plane, Rank victim) {
  CHECK(job.size() == 3, "give-back-death needs n = 3, not " << job.size());
  CHECK(victim == 0 || victim == 2, "give-back-death: the victim is 0 or 2, not " << victim);
  const Rank me = job.rank();
  // Step 1: pair 0-2 connects; rank 1 waits.
  if (me != 1) {
    if (int rc = Exchange(plane, {2 - me}, {2 - me}); rc != 0) return rc;
  }
  CHECK_OK(job.Fence(false));
  const int32_t tag = kTag + 2;
  const Rank survivor = 2 - victim;  // the victim's partner in the pair that closes
  // Nobody sends it: only a failure ends it. The victim waits on its partner, progressing,
  // until it dies at its point; the others on the victim.
  const Rank waited = me == victim ? survivor : victim;
  std::vector<char> never(8);
  Request* from_waited = nullptr;
  CHECK_OK(plane.Irecv(never.data(), never.size(), waited, tag, kContext, &from_waited));
  // Step 2: rank 0 needs a place for rank 1 and asks rank 2; the victim dies in the close.
  if (me == 0) {
    if (victim == 2) {
      if (int rc = Exchange(plane, {1}, {1}); rc != 0) return rc;
    } else {
      // Its messages wait for the place; it dies before any leaves.
      std::vector<char> out = SmallFor(0, 1);
      Request* send = nullptr;
      CHECK_OK(plane.Isend(out.data(), out.size(), 1, kTag, kContext, &send));
      MessageStatus status;
      (void)plane.Wait(&send, &status, Deadline::After(std::chrono::seconds(60)));
      return Fail("rank 0 was to die at verbs.close.closing");
    }
  }
  if (me == 1 && victim == 2) {
    if (int rc = Exchange(plane, {0}, {0}); rc != 0) return rc;
  }
  MessageStatus status;
  const Status ended = plane.Wait(&from_waited, &status, Deadline::After(std::chrono::seconds(60)));
  CHECK(me != victim, "rank " << me << " was to die in the close");
  CHECK(ended.code() == RFT_ERR_PROC_FAILED || status.error == RFT_ERR_PROC_FAILED,
        "a receive from the dead rank " << victim << ": " << ended.ToString() << ", "
                                        << rft_error_name(status.error));
  // Step 3: the survivors talk through verbs (victim 2: connected in step 2 already).
  const Rank other = me == 1 ? survivor : 1;
  RankSet survivors{me, other};
  CHECK_OK(job.Fence(false, survivors));
  if (victim == 0) {
    if (int rc = Exchange(plane, {other}, {other}); rc != 0) return rc;
  }
  CHECK(plane.UsesVerbsTo(other), "rank " << other << " is not reached by verbs");
  // The new pair's QP, and at the victim's partner the victim's, kept in the error state as
  // every failed peer's is.
  const uint32_t qps = me == survivor ? 2 : 1;
  CHECK(plane.verbs_qp_count() == qps, plane.verbs_qp_count() << " QPs, expected " << qps);
  std::printf("give-back-death ok rank=%u victim=%u verbs to %u\n", me, victim, other);
  CHECK_OK(job.Fence(false, survivors));
  return 0;
}

}  // namespace rft::testing
