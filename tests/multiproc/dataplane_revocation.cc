// Revocation in the data plane, on real UCX endpoints: each rank sends to its successor and
// receives from its predecessor (with one process, to itself), then every rank revokes a context.
#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "base/clock.h"
#include "tests/multiproc/dataplane_checks.h"
#include "tests/multiproc/dataplane_test_access.h"

namespace rft::testing {

using transport::DataPlane;
using transport::DecodeError;
using transport::kAnySource;
using transport::MessageStatus;
using transport::Request;
using transport::WireHeader;

namespace {

constexpr uint32_t kRevoked = 7;

Deadline Soon() { return Deadline::After(std::chrono::seconds(20)); }

// Whether `request` completed with `code` (waiting for it at most 20 s).
std::string ExpectCompletion(DataPlane& plane, Request** request, rft_error_t code) {
  const Status status = plane.Wait(request, nullptr, Soon());
  if (status.code() == code) return "";
  return status.ToString() + " (expected " + rft_error_name(code) + ")";
}

}  // namespace

int Revocation(transport::Bootstrap& job, DataPlane& plane) {
  const Rank me = job.rank();
  const Rank n = job.size();
  const Rank next = (me + 1) % n;
  const Rank prev = (me + n - 1) % n;
  const size_t requests_before = plane.requests_in_use();

  // Pending in the context when it is revoked: two receives (one ANY_SOURCE), a small message
  // and a large one that arrived unreceived, and the large send waiting for its receiver.
  std::array<char, 8> any_in{}, named_in{};
  Request* any = nullptr;
  Request* named = nullptr;
  CHECK_OK(plane.Irecv(any_in.data(), any_in.size(), kAnySource, 1, kRevoked, &any));
  CHECK_OK(plane.Irecv(named_in.data(), named_in.size(), prev, 2, kRevoked, &named));
  const std::vector<char> small = TestBytes(8, 1);
  const std::vector<char> large = TestBytes(plane.options().eager_limit * 4 + 1, 2);
  CHECK_OK(plane.Send(small.data(), small.size(), next, 3, kRevoked));
  Request* pending_send = nullptr;
  CHECK_OK(plane.Isend(large.data(), large.size(), next, 4, kRevoked, &pending_send));
  for (int32_t tag : {3, 4}) {
    const Deadline deadline = Soon();
    for (bool found = false; !found;) {
      CHECK_OK(plane.Iprobe(prev, tag, kRevoked, &found, nullptr));
      CHECK(!deadline.expired(), "tag " << tag << " from rank " << prev << " never arrived");
    }
  }
  CHECK_OK(job.Fence(false));

  plane.ReportContextRevoked(kRevoked, 0);
  plane.ReportContextRevoked(kRevoked, 0);  // idempotent
  std::string why = ExpectCompletion(plane, &any, RFT_ERR_REVOKED);
  CHECK(why.empty(), "ANY_SOURCE receive: " << why);
  why = ExpectCompletion(plane, &named, RFT_ERR_REVOKED);
  CHECK(why.empty(), "receive from rank " << prev << ": " << why);
  CHECK(plane.IsRevoked(kRevoked), "context " << kRevoked << " not revoked after its receives");
  // The large send ends once its receiver discarded it: REVOKED when this process had revoked
  // first (always when it sends to itself), success when the receiver was faster (ULFM leaves
  // that order open). It must end either way.
  const Status sent = plane.Wait(&pending_send, nullptr, Soon());
  CHECK(sent.code() == RFT_ERR_REVOKED || (n > 1 && sent.ok()),
        "pending large send: " << sent.ToString());

  // New operations are refused with REVOKED, blocking or not; probes too.
  Request* late = nullptr;
  CHECK_OK(plane.Irecv(any_in.data(), any_in.size(), kAnySource, 5, kRevoked, &late));
  why = ExpectCompletion(plane, &late, RFT_ERR_REVOKED);
  CHECK(why.empty(), "receive posted after the revoke: " << why);
  CHECK_OK(plane.Isend(small.data(), small.size(), next, 5, kRevoked, &late));
  why = ExpectCompletion(plane, &late, RFT_ERR_REVOKED);
  CHECK(why.empty(), "send started after the revoke: " << why);
  const Status blocking = plane.Send(small.data(), small.size(), next, 5, kRevoked);
  CHECK(blocking.code() == RFT_ERR_REVOKED, "blocking send: " << blocking.ToString());
  bool found = false;
  const Status probed = plane.Iprobe(kAnySource, 5, kRevoked, &found, nullptr);
  CHECK(probed.code() == RFT_ERR_REVOKED, "probe: " << probed.ToString());

  // What arrives for the revoked context is dropped and counted.
  WireHeader header;
  header.source = me;
  header.context_id = kRevoked;
  header.tag = 6;
  header.length = 4;
  header.job_token = job.job_token();
  std::array<std::byte, transport::kWireHeaderSize> bytes;
  transport::EncodeHeader(header, bytes);
  const std::byte payload[4] = {};
  const uint64_t revoked_drops = plane.drops().count(DecodeError::kRevoked);
  DataPlaneTestAccess::Inject(plane, bytes, payload);
  CHECK(plane.drops().count(DecodeError::kRevoked) == revoked_drops + 1,
        "a message for the revoked context was not dropped as revoked");

  // A new epoch is a new life: messages flow, and a late copy of the old revocation is ignored.
  CHECK_OK(job.Fence(false));  // every send of the old life has ended everywhere
  CHECK_OK(plane.SetContextEpoch(kRevoked, 1));
  CHECK(!plane.IsRevoked(kRevoked), "epoch 1 of context " << kRevoked << " born revoked");
  // What arrived in epoch 0 was discarded by the revocation, not kept for the new life.
  for (int32_t tag : {3, 4, 6}) {
    CHECK_OK(plane.Iprobe(kAnySource, tag, kRevoked, &found, nullptr));
    CHECK(!found, "a message of tag " << tag << " from the revoked epoch is still receivable");
  }
  CHECK_OK(job.Fence(false));  // every rank is in epoch 1 before anyone sends in it
  plane.ReportContextRevoked(kRevoked, 0);
  Request* receive = nullptr;
  std::array<char, 8> in{};
  CHECK_OK(plane.Irecv(in.data(), in.size(), prev, 8, kRevoked, &receive));
  CHECK_OK(plane.Send(small.data(), small.size(), next, 8, kRevoked));
  MessageStatus status;
  CHECK_OK(plane.Wait(&receive, &status, Soon()));
  CHECK(std::equal(small.begin(), small.end(), in.begin()), "epoch 1 delivered the wrong bytes");
  CHECK(!plane.IsRevoked(kRevoked), "a stale revocation revoked epoch 1");
  CHECK_OK(job.Fence(false));

  // Lives are named by epoch and owner: another owner's revocation of the same context and
  // epoch (a disjoint communicator sharing it) changes nothing; one of a life not started yet
  // applies when it starts, and only to that life.
  {
    constexpr uint32_t kShared = kRevoked + 2;
    constexpr uint32_t kAhead = kRevoked + 3;
    CHECK_OK(plane.SetContextEpoch(kShared, 4, 1));
    plane.ReportContextRevoked(kShared, 4, 2);
    plane.ReportContextRevoked(kAhead, 6, 1);  // epoch 6 of owner 1: not started here
    plane.ReportContextRevoked(kAhead, 7, 2);  // epoch 7 of owner 2: never started here
    plane.Progress();
    CHECK(!plane.IsRevoked(kShared), "another owner's revocation revoked context " << kShared);
    CHECK(!plane.IsRevoked(kAhead), "a future life's revocation revoked the current one");
    CHECK_OK(plane.SetContextEpoch(kAhead, 6, 1));
    CHECK(plane.IsRevoked(kAhead), "a revocation that came first did not apply to its life");
    CHECK_OK(plane.SetContextEpoch(kAhead, 7, 1));
    CHECK(!plane.IsRevoked(kAhead), "owner 2's revocation applied to owner 1's epoch 7");
  }

  // A revoke notice from the predecessor (the data plane's fast path) ends a waiting receive.
  if (n > 1) {
    constexpr uint32_t kNotified = kRevoked + 1;
    Request* waiting = nullptr;
    CHECK_OK(plane.Irecv(in.data(), in.size(), prev, 9, kNotified, &waiting));
    CHECK_OK(job.Fence(false));  // every receive is posted
    plane.SendRevocation(next, kNotified, 0, 0);
    const std::string outcome = ExpectCompletion(plane, &waiting, RFT_ERR_REVOKED);
    CHECK(outcome.empty(), "a receive after a revoke notice: " << outcome);
    CHECK(plane.IsRevoked(kNotified), "the notice did not revoke context " << kNotified);
    CHECK_OK(job.Fence(false));
  }
  CHECK(plane.requests_in_use() == requests_before,
        plane.requests_in_use() - requests_before << " requests leaked");
  return 0;
}

}  // namespace rft::testing
