// ControlPlane's part in a growing job (docs/recovery.md): connecting to replacements that
// joined as new job ranks, and the start-up of a replacement itself.
#include "base/clock.h"
#include "base/log.h"
#include "detector/control_plane.h"

namespace rft::detector {

RankSet ControlPlane::StartUpFenceRanks() const {
  RankSet ranks = RankSet::Range(0, size()).Difference(missing_at_start_);
  if (!job_->joined()) return ranks;
  // A replacement's parents are past their start-up: only its siblings fence with it. It
  // starts its ring as it leaves; its parents grow theirs when they have read its record, and
  // until then the first-word rule excuses their silence on either side.
  const transport::RankBlock& own = job_->own_block();
  return ranks.Intersection(RankSet::Range(own.first, own.first + own.count));
}

Status ControlPlane::AddRanks(uint32_t new_size) {
  const uint32_t old_size = size();
  if (new_size <= old_size || new_size > job_->size() || new_size > registry_->size()) {
    return ArgError(
        "control plane: cannot grow from " + std::to_string(old_size) + " to " +
        std::to_string(new_size) + " ranks: expected a larger size, at most the job's " +
        std::to_string(job_->size()) + " and the registry's " + std::to_string(registry_->size()));
  }
  // Read here, not on the control thread: PMIx may wait for a record, and heartbeats may not.
  std::vector<std::optional<PeerRecord>> records(new_size - old_size);
  for (Rank r = old_size; r < new_size; ++r) {
    // One the launcher reported ended has nothing to connect to: no wait for its record.
    if (registry_->IsFailed(r)) continue;
    auto bytes = job_->Get(r, "rft.control");
    if (!bytes.ok()) {
      RFT_LOG_WARN("replacement rank %u: %s", r, bytes.status().ToString().c_str());
      continue;
    }
    auto record = DecodePeerRecord(*bytes, r);
    if (!record.ok()) return record.status();
    records[r - old_size] = std::move(*record);
  }
  // After the bootstrap grew: it has learnt where the new ranks run.
  const RankSet here = job_->node_peers();
  Status grown;
  RunOnControlThreadAndWait([&] { grown = Grow(new_size, std::move(records), here); });
  return grown;
}

Status ControlPlane::Grow(uint32_t new_size, std::vector<std::optional<PeerRecord>> records,
                          const RankSet& here) {
  if (endpoints_ == nullptr) return OtherError("control plane: grown after its end");
  const uint32_t old_size = size();
  std::vector<std::vector<std::byte>> addresses(new_size - old_size);
  RankSet unpublished;
  region_descriptors_.resize(new_size);
  death_watch_segments_.resize(new_size);
  pids_.resize(new_size, 0);
  remote_.resize(new_size);
  std::vector<std::string> sockets(new_size);
  for (Rank r = old_size; r < new_size; ++r) {
    std::optional<PeerRecord>& record = records[r - old_size];
    if (!record.has_value() || registry_->IsFailed(r)) {
      unpublished.Insert(r);
      continue;
    }
    region_descriptors_[r] = std::move(record->region_descriptor);
    addresses[r - old_size] = std::move(record->worker_address);
    // Same node: /proc tells a starved replacement from a hung one (Starved), and a dead one.
    if (here.Contains(r)) {
      pids_[r] = static_cast<pid_t>(record->pid);
      sockets[r] = std::move(record->control_socket);
      same_node_.Insert(r);
    }
  }
  RFT_RETURN_IF_ERROR(endpoints_->Grow(std::move(addresses), unpublished));
  size_.store(new_size, std::memory_order_release);
  GrowVerbs(old_size, records, unpublished);
  if (local_ != nullptr) local_->Grow(new_size);
  ConnectLocalPeers(sockets);
  for (Rank r = old_size; r < new_size; ++r) {
    if (same_node_.Contains(r)) AttachLocalRegion(r);
  }
  const size_t start = actions_.size();
  node_.Grow(new_size, MonotonicNanos(), &actions_);
  Execute(start);
  for (Rank r : unpublished) {
    if (registry_->IsFailed(r)) continue;
    RFT_LOG_WARN("replacement rank %u did not publish its address: it is failed", r);
    registry_->Report(r, FailureSource::kStartup);
    if (options_.enforce_fail_stop) Kill(r);
  }
  return Status::Ok();
}

}  // namespace rft::detector
