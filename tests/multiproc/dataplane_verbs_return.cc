// Pairs coming back from UCX to verbs (docs/verbs.md, "Coming back"), for the data plane's
// multi-process worker (dataplane_worker.cc): run in the soft-RoCE guest with RFT_VERBS_PEERS=1
// and a small RFT_VERBS_RETURN_AFTER.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "base/clock.h"
#include "tests/multiproc/dataplane_checks.h"

namespace rft::testing {
namespace {

using transport::Bootstrap;
using transport::DataPlane;
using transport::MessageStatus;
using transport::Request;

constexpr uint32_t kContext = 5;
constexpr int32_t kTag = 43;

// Message `index` of a stream from `from` to `to`: small, and every fifth one large (a verbs
// READ or UCX's rendezvous, whichever path the pair is on when it is sent).
std::vector<char> StreamMessage(const DataPlane& plane, Rank from, Rank to, uint32_t index) {
  const size_t size = index % 5 == 4 ? plane.options().eager_limit * 4 + 3 : 24 + index % 7;
  return TestBytes(size, from * 7919 + to * 104729 + index);
}

// How a rank sends its streams: `kPaced` waits for each send to complete before the next (so
// each message leaves before the next one is counted towards a return), `kFree` only
// progresses between sends.
enum class Pace { kPaced, kFree };

// Sends `count` stream messages to each rank of `to`, one message to each in turn, and
// receives `count` from each rank of `from`, all with the same tag: each source's must arrive
// in order, whatever paths the pair took meanwhile.
int Streams(DataPlane& plane, const std::vector<Rank>& to, const std::vector<Rank>& from,
            uint32_t count, Pace pace) {
  const Rank me = plane.rank();
  const size_t capacity = plane.options().eager_limit * 4 + 4;
  std::vector<std::vector<char>> in(from.size() * count, std::vector<char>(capacity));
  std::vector<Request*> receives;
  for (uint32_t i = 0; i < count; ++i) {
    for (size_t s = 0; s < from.size(); ++s) {
      Request* receive = nullptr;
      CHECK_OK(
          plane.Irecv(in[i * from.size() + s].data(), capacity, from[s], kTag, kContext, &receive));
      receives.push_back(receive);
    }
  }
  const Deadline deadline = Deadline::After(std::chrono::seconds(120));
  std::vector<std::vector<char>> out;
  out.reserve(to.size() * count);
  std::vector<Request*> sends;
  for (uint32_t i = 0; i < count; ++i) {
    for (Rank peer : to) {
      out.push_back(StreamMessage(plane, me, peer, i));
      Request* send = nullptr;
      CHECK_OK(plane.Isend(out.back().data(), out.back().size(), peer, kTag, kContext, &send));
      if (pace == Pace::kPaced) {
        MessageStatus status;
        CHECK_OK(plane.Wait(&send, &status, deadline));
      } else {
        sends.push_back(send);
      }
      plane.Progress();
    }
  }
  std::vector<MessageStatus> send_statuses(sends.size());
  CHECK_OK(plane.Waitall(sends, send_statuses, deadline));
  std::vector<MessageStatus> statuses(receives.size());
  CHECK_OK(plane.Waitall(receives, statuses, deadline));
  for (uint32_t i = 0; i < count; ++i) {
    for (size_t s = 0; s < from.size(); ++s) {
      const size_t at = i * from.size() + s;
      const std::vector<char> expected = StreamMessage(plane, from[s], me, i);
      CHECK(statuses[at].count == expected.size() &&
                std::equal(expected.begin(), expected.end(), in[at].begin()),
            "message " << i << " from rank " << from[s] << ": " << statuses[at].count
                       << " bytes, expected " << expected.size() << ", or corrupt (out of order?)");
    }
  }
  return 0;
}

// Progresses until `done()`, at most 30 s.
template <class Done>
int ProgressUntil(DataPlane& plane, Done&& done, const char* what) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    CHECK(std::chrono::steady_clock::now() < limit, what << " did not happen within 30 s");
    plane.Progress();
  }
  return 0;
}

int CheckOptions(const Bootstrap& job, const DataPlane& plane, uint32_t ranks, bool close_idle,
                 const char* mode) {
  CHECK(job.size() == ranks, mode << " needs n = " << ranks << ", not " << job.size());
  CHECK(plane.options().verbs_peers == 1 && plane.options().verbs_close_idle == close_idle &&
            plane.options().verbs_return_after > 0 && plane.options().verbs_return_after <= 8,
        mode << " needs RFT_VERBS_PEERS=1, RFT_VERBS_CLOSE_IDLE=" << (close_idle ? "y" : "n")
             << " and RFT_VERBS_RETURN_AFTER from 1 to 8");
  return 0;
}

// The first step of most modes: pair 0-1 connects (two messages each way, so both ends hold
// their QP), then every rank fences.
int ConnectPairZeroOne(Bootstrap& job, DataPlane& plane) {
  const Rank me = job.rank();
  if (me < 2) {
    RETURN_IF_FAILED(Streams(plane, {1 - me}, {1 - me}, 2, Pace::kFree));
  }
  CHECK_OK(job.Fence(false));
  return 0;
}

}  // namespace

// A closed pair coming back (n = 3):
// 1. Pair 0-1 connects.
// 2. Rank 0 exchanges with rank 2: it has no place, so pair 0-1 closes (idle: rank 1 only
//    progresses) and 0-2 connects.
// 3. Ranks 0 and 1 stream 40 messages each way, every fifth large, progressing between sends.
//    After RFT_VERBS_RETURN_AFTER of them through UCX, one end (or both at once) brings the pair
//    back: rank 0 has no place, so pair 0-2 closes (rank 2 only progresses), and 0-1 connects
//    again. Every message arrives in order across both moves.
// 4. Every rank sends every other one a stream of 5 at once; no rank holds more than one QP.
int Return(Bootstrap& job, DataPlane& plane) {
  RETURN_IF_FAILED(CheckOptions(job, plane, 3, true, "return"));
  const Rank me = job.rank();
  const Rank partner = me == 2 ? kInvalidRank : 1 - me;
  RETURN_IF_FAILED(ConnectPairZeroOne(job, plane));
  // Step 2.
  if (me == 1) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return plane.verbs_pairs_closed() == 1 && !plane.UsesVerbsTo(0); },
        "the close of pair 0-1"));
  } else {
    RETURN_IF_FAILED(Streams(plane, {2 - me}, {2 - me}, 2, Pace::kFree));
  }
  if (me == 0) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return plane.verbs_pairs_closed() == 1 && !plane.UsesVerbsTo(1); },
        "the close of pair 0-1"));
  }
  CHECK(me == 1 || plane.UsesVerbsTo(2 - me), "pair 0-2 is not on verbs");
  CHECK(plane.verbs_qp_count() == (me == 1 ? 0u : 1u), plane.verbs_qp_count() << " QPs");
  std::printf("return step 2 ok rank=%u qps=%u\n", me, plane.verbs_qp_count());
  CHECK_OK(job.Fence(false));
  // Step 3.
  if (me == 2) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return plane.verbs_pairs_closed() == 1 && !plane.UsesVerbsTo(0); },
        "the close of pair 0-2"));
  } else {
    RETURN_IF_FAILED(Streams(plane, {partner}, {partner}, 40, Pace::kFree));
    // Every message after the return went through verbs: the pair is connected at both ends.
    CHECK(plane.UsesVerbsTo(partner) && plane.verbs_pairs_returned() == 1 &&
              plane.verbs_qp_count() == 1,
          "rank " << partner << (plane.UsesVerbsTo(partner) ? " is" : " is not")
                  << " reached by verbs, " << plane.verbs_pairs_returned() << " pairs returned, "
                  << plane.verbs_qp_count() << " QPs");
  }
  std::printf("return step 3 ok rank=%u returned=%llu closed=%llu qps=%u\n", me,
              static_cast<unsigned long long>(plane.verbs_pairs_returned()),
              static_cast<unsigned long long>(plane.verbs_pairs_closed()), plane.verbs_qp_count());
  CHECK_OK(job.Fence(false));
  // Step 4.
  std::vector<Rank> others;
  for (Rank peer = 0; peer < 3; ++peer) {
    if (peer != me) others.push_back(peer);
  }
  RETURN_IF_FAILED(Streams(plane, others, others, 5, Pace::kFree));
  CHECK(plane.verbs_qp_count() <= 1, plane.verbs_qp_count() << " QPs, expected at most 1");
  std::printf("return ok rank=%u\n", me);
  return 0;
}

// A refused pair trying again (n = 3, RFT_VERBS_CLOSE_IDLE=n): pair 1-2 connects; then ranks 0
// and 1 stream 30 messages each way, rank 0 waiting for each send. Rank 1 has no place for
// rank 0 and none can come free, so rank 0's first message is refused a QP, and every attempt
// of rank 0 to come back after RFT_VERBS_RETURN_AFTER messages through UCX is refused again:
// what queued meanwhile moves to UCX each time, in order. Rank 1, with no place, never starts
// an attempt: its messages just go through UCX.
//
// Rank 0's last attempt may still be under way when its last receive completes (it starts in
// Progress, after the send that made the count): rank 0 waits for its refusal before it looks,
// while rank 1 keeps answering until rank 0 says it is done.
int ReturnRefused(Bootstrap& job, DataPlane& plane) {
  RETURN_IF_FAILED(CheckOptions(job, plane, 3, false, "return-refused"));
  const Rank me = job.rank();
  if (me == 1 || me == 2) {
    RETURN_IF_FAILED(Streams(plane, {3 - me}, {3 - me}, 2, Pace::kFree));
  }
  CHECK_OK(job.Fence(false));
  if (me < 2) {
    RETURN_IF_FAILED(Streams(plane, {1 - me}, {1 - me}, 30, Pace::kPaced));
  }
  char done = 0;
  Request* done_request = nullptr;
  const Deadline deadline = Deadline::After(std::chrono::seconds(60));
  MessageStatus status;
  if (me == 0) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return !plane.UsesVerbsTo(1) && plane.verbs_qp_count() == 0; },
        "the refusal of rank 0's last attempt"));
  } else if (me == 1) {
    CHECK_OK(plane.Irecv(&done, 1, 0, kTag + 1, kContext, &done_request));
    CHECK_OK(plane.Wait(&done_request, &status, deadline));
  }
  if (me < 2) {
    CHECK(!plane.UsesVerbsTo(1 - me) && plane.verbs_pairs_returned() == 0,
          "pair 0-1 came back to verbs, though rank 1 has no place");
  }
  if (me == 0) {
    CHECK(plane.verbs_returns_started() >= 2, plane.verbs_returns_started()
                                                  << " attempts to come back, expected at least 2");
  } else {
    CHECK(plane.verbs_returns_started() == 0, plane.verbs_returns_started()
                                                  << " attempts to come back without a place");
  }
  CHECK(plane.verbs_qp_count() == (me == 1 || me == 2 ? 1u : 0u), plane.verbs_qp_count() << " QPs");
  std::printf("return-refused ok rank=%u qps=%u tried=%s\n", me, plane.verbs_qp_count(),
              plane.verbs_returns_started() >= 2 ? "2+" : "0");
  if (me == 0) {
    // Through UCX, so it may count towards one more attempt, which nobody answers: harmless.
    CHECK_OK(plane.Isend(&done, 1, 1, kTag + 1, kContext, &done_request));
    CHECK_OK(plane.Wait(&done_request, &status, deadline));
  }
  return 0;
}

// Churn (n >= 3, RFT_VERBS_PEERS below n - 1, RFT_VERBS_RETURN_AFTER small): every rank streams
// 60 messages to each other one at once with too few places, so pairs close, come back, cross each
// other's attempts and refuse to close while busy, over and over. Every message arrives in order,
// nothing is dropped, and no rank ends with more QPs than places.
int ReturnChurn(Bootstrap& job, DataPlane& plane) {
  const uint32_t places = plane.options().verbs_peers;
  CHECK(job.size() >= 3 && places >= 1 && places + 1 < job.size() &&
            plane.options().verbs_close_idle && plane.options().verbs_return_after > 0 &&
            plane.options().verbs_return_after <= 8,
        "return-churn needs n >= 3, RFT_VERBS_PEERS from 1 to n - 2, RFT_VERBS_CLOSE_IDLE=y and "
        "RFT_VERBS_RETURN_AFTER from 1 to 8");
  const Rank me = job.rank();
  std::vector<Rank> others;
  for (Rank peer = 0; peer < job.size(); ++peer) {
    if (peer != me) others.push_back(peer);
  }
  RETURN_IF_FAILED(Streams(plane, others, others, 60, Pace::kFree));
  CHECK(plane.verbs_qp_count() <= places, plane.verbs_qp_count()
                                              << " QPs, expected at most " << places);
  std::printf("return-churn ok rank=%u closed=%llu started=%llu returned=%llu\n", me,
              static_cast<unsigned long long>(plane.verbs_pairs_closed()),
              static_cast<unsigned long long>(plane.verbs_returns_started()),
              static_cast<unsigned long long>(plane.verbs_pairs_returned()));
  return 0;
}

// A process that does not call into rft while it is asked to close (n = 3, a short
// RFT_VERBS_PLACE_WAIT): pair 0-1 connects, then rank 1 blocks in a fence with rank 2 outside
// rft, which rank 2 joins only once it received rank 0's 5 messages (the last one large). Rank 0
// needs a place for rank 2 and asks rank 1 to close; rank 1 cannot answer, so after
// RFT_VERBS_PLACE_WAIT pair 0-2 is refused and the messages go through UCX: a third process
// holds nothing up. Back in rft, rank 1 agrees to the close that waited; rank 0 then streams
// rank 2 12 messages, and the pair comes back to verbs in the place that came free.
int ReturnStalled(Bootstrap& job, DataPlane& plane) {
  RETURN_IF_FAILED(CheckOptions(job, plane, 3, true, "return-stalled"));
  const Rank me = job.rank();
  RETURN_IF_FAILED(ConnectPairZeroOne(job, plane));
  const RankSet away{1, 2};
  if (me == 1) {
    CHECK_OK(job.Fence(false, away));  // no rft call until rank 2 got rank 0's messages
  } else if (me == 0) {
    RETURN_IF_FAILED(Streams(plane, {2}, {}, 5, Pace::kFree));
    CHECK(!plane.UsesVerbsTo(2) && plane.verbs_pairs_closed() == 0,
          "pair 0-2 " << (plane.UsesVerbsTo(2) ? "is" : "is not") << " on verbs, "
                      << plane.verbs_pairs_closed() << " pairs closed");
  } else {
    RETURN_IF_FAILED(Streams(plane, {}, {0}, 5, Pace::kFree));
    CHECK_OK(job.Fence(false, away));
  }
  std::printf("return-stalled step 2 ok rank=%u\n", me);
  // Rank 1, back, answers the request to close that waited for it.
  if (me < 2) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return plane.verbs_pairs_closed() == 1 && !plane.UsesVerbsTo(1 - me); },
        "the close of pair 0-1"));
  }
  CHECK_OK(job.Fence(false));
  if (me != 1) {
    RETURN_IF_FAILED(Streams(plane, {2 - me}, {2 - me}, 12, Pace::kFree));
    CHECK(plane.UsesVerbsTo(2 - me) && plane.verbs_pairs_returned() == 1,
          "rank " << 2 - me << (plane.UsesVerbsTo(2 - me) ? " is" : " is not")
                  << " reached by verbs, " << plane.verbs_pairs_returned() << " pairs returned");
  }
  std::printf("return-stalled ok rank=%u qps=%u\n", me, plane.verbs_qp_count());
  return 0;
}

// A death during a return (n = 3, rftrun --ft, the runtime's registry,
// RFT_FAULT_INJECT=verbs.return.taken@1): pairs 0-1 and then 0-2 connect, so pair 0-1 closes
// (as in `return`). Rank 0 then sends rank 1 RFT_VERBS_RETURN_AFTER messages through UCX and
// one more: it brings the pair back, closing pair 0-2 for the place, and offers its address;
// rank 1 dies as the offer arrives. The last message, queued for the QP, and a receive from
// rank 1 end with RFT_ERR_PROC_FAILED once the registry reports rank 1, and ranks 0 and 2
// then stream to each other, coming back to verbs in the place rank 1's failure freed.
int ReturnDeath(Bootstrap& job, DataPlane& plane) {
  RETURN_IF_FAILED(CheckOptions(job, plane, 3, true, "return-death"));
  const Rank me = job.rank();
  RETURN_IF_FAILED(ConnectPairZeroOne(job, plane));
  if (me != 1) {
    RETURN_IF_FAILED(Streams(plane, {2 - me}, {2 - me}, 2, Pace::kFree));
  }
  // Nobody sends it: only rank 1's failure ends it. Rank 1 waits on it too, progressing, until
  // rank 0's offer arrives and it dies.
  std::vector<char> never(8);
  Request* from_waited = nullptr;
  const Rank waited = me == 1 ? 0 : 1;
  CHECK_OK(plane.Irecv(never.data(), never.size(), waited, kTag + 1, kContext, &from_waited));
  if (me == 0) {
    RETURN_IF_FAILED(ProgressUntil(
        plane, [&] { return !plane.UsesVerbsTo(1); }, "the close of pair 0-1"));
    // Through UCX, then the attempt: the last one waits for the QP that never connects.
    const uint32_t count = plane.options().verbs_return_after + 1;
    std::vector<std::vector<char>> out;
    std::vector<Request*> sends;
    for (uint32_t i = 0; i < count; ++i) {
      out.push_back(TestBytes(16, i));  // small: through UCX, each complete once sent
      Request* send = nullptr;
      CHECK_OK(plane.Isend(out.back().data(), out.back().size(), 1, kTag, kContext, &send));
      sends.push_back(send);
      plane.Progress();
    }
    std::vector<MessageStatus> statuses(sends.size());
    (void)plane.Waitall(sends, statuses, Deadline::After(std::chrono::seconds(60)));
    CHECK(statuses.back().error == RFT_ERR_PROC_FAILED,
          "the message that waited for the QP: " << rft_error_name(statuses.back().error));
    CHECK(plane.verbs_returns_started() == 1, plane.verbs_returns_started()
                                                  << " attempts to bring pair 0-1 back");
  }
  MessageStatus status;
  const Status ended = plane.Wait(&from_waited, &status, Deadline::After(std::chrono::seconds(60)));
  CHECK(me != 1, "rank 1 was to die as rank 0's offer arrived");
  CHECK(ended.code() == RFT_ERR_PROC_FAILED || status.error == RFT_ERR_PROC_FAILED,
        "a receive from the dead rank 1: " << ended.ToString() << ", "
                                           << rft_error_name(status.error));
  const Rank other = 2 - me;
  RankSet survivors{me, other};
  CHECK_OK(job.Fence(false, survivors));
  RETURN_IF_FAILED(Streams(plane, {other}, {other}, 12, Pace::kFree));
  CHECK(plane.UsesVerbsTo(other) && plane.verbs_pairs_returned() == 1,
        "rank " << other << (plane.UsesVerbsTo(other) ? " is" : " is not") << " reached by verbs, "
                << plane.verbs_pairs_returned() << " pairs returned");
  std::printf("return-death ok rank=%u verbs to %u\n", me, other);
  CHECK_OK(job.Fence(false, survivors));
  return 0;
}

}  // namespace rft::testing
