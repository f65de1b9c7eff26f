// The verbs backend's pair connections on demand (docs/verbs.md, "Connecting on demand"), for
// the data plane's multi-process worker (dataplane_worker.cc): run in the soft-RoCE guest.
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

}  // namespace rft::testing
