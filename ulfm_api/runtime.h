// rft::api::Runtime: the composition root. It alone creates the layers a process runs (the
// bootstrap into the job, the failure registry, the control plane with the detector, the data
// plane), wires them, owns them, and tears them down in the one order that is safe. Programs,
// benchmarks and tests build a Runtime instead of wiring the parts by hand.
//
// The wiring it guarantees:
// - Every failure goes through the registry, from any source: the launcher's events and the
//   detector's findings (control plane), and what the data plane finds itself (a UCX error, a
//   same-node rendezvous whose sender is gone).
// - The data plane hears of every failure the registry records, including those recorded
//   while it was still being built, and completes what depended on the failed rank.
// - The launcher's termination events have one subscriber, the control plane.
// - Revocations delivered by the control plane's reliable broadcast reach the data plane
//   (RevokeService), through the same queued hand-off as failures.
// - At the end, this process first tells its peers it ends cleanly, then closes the data plane,
//   then the control plane, so its closing endpoints are never taken for a failure.
#ifndef RFT_ULFM_API_RUNTIME_H_
#define RFT_ULFM_API_RUNTIME_H_

#include <memory>
#include <optional>

#include "agreement/agreement_service.h"
#include "base/status.h"
#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/merge_record.h"
#include "ulfm_api/revoke_service.h"

namespace rft::api {

class Runtime {
 public:
  struct Options {
    detector::ControlPlane::Options control;
    transport::DataPlane::Options data;
    // Ranks known failed before the start: a replacement's job's failures, as its parents
    // agreed them (docs/recovery.md). Recorded (FailureSource::kPropagated) before anything
    // connects, so nothing connects to them.
    RankSet known_failed;
  };
  // Options from the RFT_* environment (see rft_info); RFT_ERR_ARG naming the variable for a
  // bad value. `job` decides what depends on the node (e.g. blocking progress when the node is
  // oversubscribed).
  static StatusOr<Options> OptionsFromConfig(const transport::Bootstrap& job);

  // Joins the job (Bootstrap::Init) and builds everything with options from the environment.
  // Collective over the job. A replacement (Bootstrap::joined) first reads the merge record its
  // spawner published (merge_record()) and starts with its failures known.
  static StatusOr<std::unique_ptr<Runtime>> Create();
  // Builds over a job this process already joined, taking it over. Collective over the job.
  static StatusOr<std::unique_ptr<Runtime>> Create(std::unique_ptr<transport::Bootstrap> job,
                                                   const Options& options);

  // Close(), then leaves the job.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Ends this process's part in the job's communication: announces the clean end, closes the
  // data plane (requests left pending are reported and leaked), then the control plane. The
  // bootstrap stays joined until destruction, for last words to the launcher (e.g. Abort).
  // Idempotent; from the thread that created the runtime. plane() and control() are gone after.
  void Close();

  // Replacements joined the job (docs/recovery.md): `count` processes of PMIx namespace
  // `nspace`, spawned with Bootstrap::Spawn(join), take the next job ranks in every layer: the
  // bootstrap, the registry, the control plane (detector included), the data plane. Every
  // survivor calls it with the same namespaces in the same order, before any member of a
  // communicator with the replacements sends. RFT_ERR_ARG as Bootstrap::AddRanks.
  Status AddRanks(std::string_view nspace, uint32_t count);

  // For a replacement started by Create(): what its spawner published (the communicator it
  // joins, the failures known); nullopt otherwise.
  const std::optional<MergeRecord>& merge_record() const { return merge_record_; }

  transport::Bootstrap& bootstrap() { return *job_; }
  detector::FailureRegistry& registry() { return *registry_; }
  detector::ControlPlane& control() { return *control_; }
  transport::DataPlane& plane() { return *plane_; }
  RevokeService& revoke() { return *revoke_; }
  agreement::AgreementService& agreement() { return *agreement_; }

 private:
  Runtime() = default;
  Status Build(const Options& options);

  std::optional<MergeRecord> merge_record_;
  // Declared in creation order; Close() and the destructor end them in reverse.
  std::unique_ptr<transport::Bootstrap> job_;
  std::unique_ptr<detector::FailureRegistry> registry_;
  std::unique_ptr<detector::ControlPlane> control_;
  std::unique_ptr<transport::DataPlane> plane_;
  // The registry's calls into the data plane: ends before the data plane does.
  detector::Subscription to_plane_;
  std::unique_ptr<RevokeService> revoke_;  // hosted on control_, feeds plane_: ends first
  // Hosted on control_, wakes plane_: ends before either.
  std::unique_ptr<agreement::AgreementService> agreement_;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_RUNTIME_H_
