#include "tests/multiproc/survivors.h"

#include <cstdint>
#include <string>

namespace rft::testing {

using detector::FailureRegistry;
using transport::DataPlane;

Status AwaitFailed(FailureRegistry& registry, const RankSet& ranks, Deadline deadline) {
  for (Rank rank : ranks) {
    while (!registry.IsFailed(rank)) {
      if (!registry.WaitForChange(registry.count(), deadline)) {
        return TimeoutError("rank " + std::to_string(rank) + " is not known failed");
      }
    }
  }
  return Status::Ok();
}

Status TokenRing(DataPlane& plane, const RankSet& live, int32_t tag, uint32_t context_id) {
  if (live.size() < 2) return Status::Ok();
  const size_t at = live.IndexOf(plane.rank()).value_or(0);
  const Rank next = live.Nth((at + 1) % live.size());
  const Rank prev = live.Nth((at + live.size() - 1) % live.size());
  const uint64_t token = 1000 + plane.rank();
  uint64_t got = 0;
  transport::Request* receive = nullptr;
  RFT_RETURN_IF_ERROR(plane.Irecv(&got, sizeof(got), prev, tag, context_id, &receive));
  RFT_RETURN_IF_ERROR(plane.Send(&token, sizeof(token), next, tag, context_id));
  RFT_RETURN_IF_ERROR(plane.Wait(&receive, nullptr, Deadline::After(std::chrono::seconds(20))));
  if (got != 1000 + prev) {
    return OtherError("ring token " + std::to_string(got) + " from rank " + std::to_string(prev));
  }
  return Status::Ok();
}

}  // namespace rft::testing
