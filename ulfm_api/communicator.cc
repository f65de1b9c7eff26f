#include "ulfm_api/communicator.h"

#include <algorithm>
#include <utility>

#include "base/timeline.h"
#include "ulfm_api/node_collectives.h"

namespace rft::api {

namespace {

bool IsWorldOrder(const Group& group) {
  for (Rank r = 0; r < group.size(); ++r) {
    if (group.JobRank(r) != r) return false;
  }
  return true;
}

}  // namespace

Communicator::Communicator(transport::DataPlane* plane, detector::FailureRegistry* registry,
                           Group group, ContextIds::Allocation contexts, std::string name)
    : plane_(plane),
      registry_(registry),
      group_(std::move(group)),
      rank_(group_.RankOf(plane->rank())),
      world_order_(IsWorldOrder(group_)),
      contexts_(contexts),
      owner_(group_.empty()
                 ? 0
                 : *std::min_element(group_.job_ranks().begin(), group_.job_ranks().end())),
      name_(std::move(name)) {
  peer_count_ = size();
  Reload();
}

Communicator::Communicator(transport::DataPlane* plane, detector::FailureRegistry* registry,
                           Group group, ContextIds::Allocation contexts, std::string name,
                           Group local)
    : Communicator(plane, registry, std::move(group), contexts, std::move(name)) {
  Group remote = Group::Difference(group_, local);
  const bool local_first = !local.empty() && group_.JobRank(0) == local.JobRank(0);
  const Rank local_rank = local.RankOf(plane->rank());
  peer_count_ = remote.size();
  inter_ = std::make_unique<InterGroups>(InterGroups{.local = std::move(local),
                                                     .remote = std::move(remote),
                                                     .local_rank = local_rank,
                                                     .local_first = local_first});
}

Communicator::~Communicator() = default;

void Communicator::DecideNodeArea(std::unique_ptr<NodeCollectives> area) {
  node_area_decided_ = true;
  node_area_ = std::move(area);
}

Status Communicator::CheckPeer(const char* what, int rank) const {
  if (rank >= 0 && static_cast<uint32_t>(rank) < peer_count_) [[likely]]
    return Status::Ok();
  return ArgError(std::string(what) + " rank " + std::to_string(rank) + " on " + name_ +
                  ": expected 0.." + std::to_string(static_cast<int64_t>(peer_count_) - 1) +
                  (inter_ ? " (a rank of the remote group)" : ""));
}

Status Communicator::CheckSource(const char* what, int rank) const {
  if ((rank >= 0 && static_cast<uint32_t>(rank) < peer_count_) || rank == -1) [[likely]]
    return Status::Ok();
  return ArgError(std::string(what) + " rank " + std::to_string(rank) + " on " + name_ +
                  ": expected 0.." + std::to_string(static_cast<int64_t>(peer_count_) - 1) +
                  " or ANY_SOURCE" + (inter_ ? " (a rank of the remote group)" : ""));
}

Status Communicator::CheckTag(const char* what, int tag, bool wildcard) {
  if (tag >= 0 || (wildcard && tag == -1)) [[likely]]
    return Status::Ok();
  return ArgError(std::string(what) + " tag " + std::to_string(tag) + ": expected a tag >= 0" +
                  (wildcard ? " or ANY_TAG" : ""));
}

void Communicator::Reload() {
  // The count first: a failure recorded after it is picked up by the next Refresh.
  seen_count_ = registry_->count();
  // The registry's list only grows, with the old one as its prefix: only the new records count.
  const std::vector<detector::FailureRecord> records = registry_->Records();
  for (size_t i = records_seen_; i < records.size(); ++i) {
    if (group_.Contains(records[i].rank)) failed_.push_back(records[i].rank);
  }
  records_seen_ = records.size();
}

uint32_t Communicator::AckFailed(uint32_t count) {
  Refresh();
  const auto known = static_cast<uint32_t>(failed_.size());
  const uint32_t before = acked_;
  acked_ = std::max(acked_, std::min(count, known));
  if (acked_ > before && timeline::Enabled()) {
    timeline::Record(timeline::Event::kAcknowledged, acked_, name());
  }
  return acked_;
}

size_t Communicator::ReapAbandoned() {
  std::erase_if(abandoned_.requests, [this](transport::Request*& request) {
    bool done = false;
    (void)plane_->Test(&request, &done, nullptr);
    return done;
  });
  if (abandoned_.requests.empty()) abandoned_.buffers.clear();
  return abandoned_.requests.size();
}

}  // namespace rft::api
