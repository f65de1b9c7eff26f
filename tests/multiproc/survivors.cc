#include "tests/multiproc/stack.h"

#include <cstdint>
#include <string>

namespace rft::testing {

using detector::ControlPlane;
using detector::FailureRegistry;
using transport::DataPlane;

StatusOr<std::unique_ptr<Stack>> Stack::Create(transport::Bootstrap& job) {
  std::unique_ptr<Stack> stack(new Stack);
  auto registry = FailureRegistry::Create(job.rank(), job.size());
  if (!registry.ok()) return registry.status();
  stack->registry_ = std::move(*registry);
  auto control_options = ControlPlane::OptionsFromConfig();
  if (!control_options.ok()) return control_options.status();
  auto control = ControlPlane::Create(&job, stack->registry_.get(), *control_options);
  if (!control.ok()) return control.status();
  stack->control_ = std::move(*control);
  // The data plane hears of failures through the registry only, and tells it what it finds.
  auto plane_options = DataPlane::OptionsFromConfig(job);
  if (!plane_options.ok()) return plane_options.status();
  plane_options->watch_launcher_events = false;
  FailureRegistry* registry_ptr = stack->registry_.get();
  plane_options->report_failure = [registry_ptr](Rank rank) {
    registry_ptr->Report(rank, detector::FailureSource::kTransport);
  };
  auto plane = DataPlane::Create(&job, *plane_options);
  if (!plane.ok()) return plane.status();
  stack->plane_ = std::move(*plane);
  DataPlane* plane_ptr = stack->plane_.get();
  stack->subscription_ =
      stack->registry_->Subscribe([plane_ptr](const detector::FailureRecord& record) {
        plane_ptr->ReportPeerFailed(record.rank);
      });
  // What was recorded before the subscription (a failure during the data plane's start-up) is
  // not dispatched to it: handed over here (reports are idempotent).
  for (const detector::FailureRecord& record : stack->registry_->Records()) {
    plane_ptr->ReportPeerFailed(record.rank);
  }
  return stack;
}

Stack::~Stack() {
  // Before the data plane closes its endpoints: the others must not take that for a failure.
  if (control_ != nullptr) control_->AnnounceDeparture();
  subscription_.Reset();
  plane_.reset();
  control_.reset();
}

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
