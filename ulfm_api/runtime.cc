#include "ulfm_api/runtime.h"

#include <utility>

#include "base/fault_injection.h"
#include "base/timeline.h"

namespace rft::api {

using detector::ControlPlane;
using detector::FailureRecord;
using detector::FailureRegistry;
using transport::Bootstrap;
using transport::DataPlane;

StatusOr<Runtime::Options> Runtime::OptionsFromConfig(const Bootstrap& job) {
  Options options;
  RFT_RETURN_IF_ERROR(fault::ArmFromConfig());
  RFT_ASSIGN_OR_RETURN(options.control, ControlPlane::OptionsFromConfig());
  RFT_ASSIGN_OR_RETURN(options.data, DataPlane::OptionsFromConfig(job));
  return options;
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Create() {
  std::unique_ptr<Bootstrap> job;
  RFT_ASSIGN_OR_RETURN(job, Bootstrap::Init());
  Options options;
  RFT_ASSIGN_OR_RETURN(options, OptionsFromConfig(*job));
  std::optional<MergeRecord> record;
  if (job->joined()) {
    // Waits for it (up to RFT_PMIX_TIMEOUT): the spawner publishes it right after the spawn.
    auto bytes = job->Get(job->spawner(), MergeRecordKey(job->nspace()));
    if (!bytes.ok()) return bytes.status();
    RFT_ASSIGN_OR_RETURN(record, DecodeMergeRecord(*bytes));
    RFT_RETURN_IF_ERROR(CheckMergeRecordFits(*record, job->size()));
    options.known_failed = record->failed;
  }
  std::unique_ptr<Runtime> runtime;
  RFT_ASSIGN_OR_RETURN(runtime, Create(std::move(job), options));
  runtime->merge_record_ = std::move(record);
  return runtime;
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Create(std::unique_ptr<Bootstrap> job,
                                                   const Options& options) {
  if (job == nullptr) return ArgError("Runtime::Create: job is null; expected a joined Bootstrap");
  std::unique_ptr<Runtime> runtime(new Runtime);
  runtime->job_ = std::move(job);
  RFT_RETURN_IF_ERROR(runtime->Build(options));
  return runtime;
}

Status Runtime::Build(const Options& options) {
  RFT_RETURN_IF_ERROR(timeline::Open(job_->rank(), job_->size()));
  RFT_ASSIGN_OR_RETURN(registry_, FailureRegistry::Create(job_->rank(), job_->size()));
  for (Rank rank : options.known_failed) {
    registry_->Report(rank, detector::FailureSource::kPropagated);
  }
  RFT_ASSIGN_OR_RETURN(control_,
                       ControlPlane::Create(job_.get(), registry_.get(), options.control));
  // The control plane owns the launcher's events; the data plane reports what it finds to the
  // registry, which tells it back (and everyone else) once.
  DataPlane::Options data = options.data;
  data.failed_at_start = options.known_failed;
  FailureRegistry* registry = registry_.get();
  data.report_failure = [registry](Rank rank) {
    registry->Report(rank, detector::FailureSource::kTransport);
  };
  RFT_ASSIGN_OR_RETURN(plane_, DataPlane::Create(job_.get(), data));
  DataPlane* plane = plane_.get();
  to_plane_ = registry_->Subscribe(
      [plane](const FailureRecord& record) { plane->ReportPeerFailed(record.rank); });
  // Failures recorded while the data plane was being built (a peer dead at start-up) were
  // dispatched before the subscription: handed over now. Reports are idempotent, so one that
  // came through both ways is harmless.
  for (const FailureRecord& record : registry_->Records()) plane->ReportPeerFailed(record.rank);
  // Revocations reach the data plane from the control thread, through the same queue.
  RFT_ASSIGN_OR_RETURN(revoke_, RevokeService::Create(control_.get(), plane));
  // Agreements run on the control thread; a decision wakes the caller's wait in the data plane.
  RFT_ASSIGN_OR_RETURN(agreement_, agreement::AgreementService::Create(control_.get(), registry,
                                                                       [plane] { plane->Wake(); }));
  return Status::Ok();
}

Status Runtime::AddRanks(std::string_view nspace, uint32_t count) {
  if (plane_ == nullptr) return OtherError("Runtime::AddRanks: the runtime is closed");
  const uint32_t old_size = job_->size();
  RFT_RETURN_IF_ERROR(job_->AddRanks(nspace, count));
  const uint32_t size = job_->size();
  // In the order failures flow: the registry first (a report about a new rank must not be
  // dropped), then the detector, then the data plane, which completes what was reported.
  RFT_RETURN_IF_ERROR(registry_->Grow(size));
  timeline::Record(timeline::Event::kSpawned, size - old_size, nspace);
  // A replacement the launcher reported ended before it was of the job: its event had no job
  // rank then.
  for (Rank rank : job_->DeadRanks()) {
    if (rank >= old_size) registry_->Report(rank, detector::FailureSource::kLauncher);
  }
  RFT_RETURN_IF_ERROR(control_->AddRanks(size));
  return plane_->AddRanks(size, registry_->Failed());
}

void Runtime::Close() {
  // Kept agreement decisions go out first: a member that fell back from an agreement's fast
  // path may still need one from this process (docs/agreement.md, "Fast path").
  if (agreement_ != nullptr) agreement_->Depart();
  // Before the data plane closes its endpoints: the others must not take that for a failure.
  if (control_ != nullptr) control_->AnnounceDeparture();
  // Peers that ended before this process, or end while it closes: closing the endpoints to them
  // must not wait for them. The registry outlives the data plane (see ~Runtime).
  if (plane_ != nullptr && registry_ != nullptr) {
    plane_->WatchDepartures(
        [registry = registry_.get()](Rank rank) { return registry->IsDeparted(rank); });
  }
  agreement_.reset();
  revoke_.reset();
  to_plane_.Reset();
  plane_.reset();
  control_.reset();
  timeline::Close();
}

Runtime::~Runtime() {
  Close();
  registry_.reset();
  job_.reset();
}

}  // namespace rft::api
