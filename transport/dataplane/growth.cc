// DataPlane's part in a growing job (docs/recovery.md): replacements joined as new job ranks.
#include <utility>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"

namespace rft::transport {

Status DataPlane::AddRanks(uint32_t new_size, const RankSet& known_failed) {
  const uint32_t old_size = size_;
  if (new_size <= old_size || new_size > job_->size()) {
    return ArgError("data plane: cannot grow from " + std::to_string(old_size) + " to " +
                    std::to_string(new_size) +
                    " ranks: expected a larger size, at most the job's " +
                    std::to_string(job_->size()));
  }
  // The record ExchangeAndConnect publishes: pid, flags and parent first, the UCX address after
  // the prefix. A replacement on this node takes the same-node rendezvous (DecideCma), never
  // the rings: those are laid out at start-up for one namespace's processes.
  // Failures known before (the ones the replacements replace) free their places in the verbs
  // channel (JoinVerbs): completed now, whether or not their news reached this plane yet.
  for (Rank r : known_failed) {
    if (r < old_size && r != rank_) ReportPeerFailed(r);
  }
  ProcessNotices();
  std::vector<std::vector<std::byte>> addresses(new_size - old_size);
  std::vector<DataPlaneRecord> records(new_size - old_size);
  const RankSet same_node = job_->node_peers();  // the bootstrap grew first
  RankSet unreachable;
  for (Rank r = old_size; r < new_size; ++r) {
    if (known_failed.Contains(r)) {  // nothing to connect to: no wait for its record
      unreachable.Insert(r);
      continue;
    }
    auto bytes = job_->Get(r, "rft.dataplane");
    StatusOr<DataPlaneRecord> record =
        bytes.ok() ? DecodeDataPlaneRecord(*bytes, r) : StatusOr<DataPlaneRecord>(bytes.status());
    if (!record.ok()) {
      RFT_LOG_WARN("replacement rank %u: no usable data-plane record: %s", r,
                   record.status().ToString().c_str());
      unreachable.Insert(r);
      continue;
    }
    records[r - old_size] = std::move(*record);
    addresses[r - old_size] = std::move(records[r - old_size].ucx_address);
  }
  GrowPeers(new_size);  // on UCX; verbs below, where both ends offer it
  for (Rank r = old_size; r < new_size; ++r) {
    if (unreachable.Contains(r)) continue;
    peers_[r].pid = static_cast<pid_t>(records[r - old_size].pid);
    DecideCma(r, records[r - old_size], same_node.Contains(r));
  }
  RFT_RETURN_IF_ERROR(endpoints_->Grow(std::move(addresses), unreachable));
  size_ = new_size;
  JoinVerbs(old_size, records, unreachable);
  for (Rank r : unreachable) Discovered(r);
  // Failures of the new ranks that came before: completed now, in the usual way.
  for (Rank r : std::exchange(failed_beyond_size_, RankSet())) {
    ReportPeerFailed(r);  // beyond new_size: kept again by ProcessNotices
  }
  ProcessNotices();
  return Status::Ok();
}

}  // namespace rft::transport
