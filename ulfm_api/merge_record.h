// rft::api::MergeRecord: what the survivors that spawn replacements tell them
// (docs/recovery.md, "The merge"). The spawning survivor publishes it through PMIx under
// MergeRecordKey(namespace of the replacements); each replacement reads it at start-up, before
// anything connects: the failures its new job has seen, and the communicator it joins.
#ifndef RFT_ULFM_API_MERGE_RECORD_H_
#define RFT_ULFM_API_MERGE_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::api {

struct MergeRecord {
  std::vector<Rank> members;  // the merged communicator's job ranks, by communicator rank
  uint32_t pair = 0;          // its contexts (ContextIds::Allocation)
  uint32_t epoch = 0;
  // 0: `members` is one intracommunicator (a replacement takes a dead member's place). Else the
  // first `parents` members are the spawning group and the rest the spawned processes: an
  // intercommunicator between them (rft_comm_spawn).
  uint32_t parents = 0;
  RankSet failed;  // job ranks known failed, the dead members among them
  friend bool operator==(const MergeRecord&, const MergeRecord&) = default;
};

std::string MergeRecordKey(std::string_view nspace);

// Layout (little-endian u32s): member count, pair, epoch, parents, failed-interval count, the
// members, then each failed interval as first, last (exclusive).
std::vector<std::byte> EncodeMergeRecord(const MergeRecord& record);
// RFT_ERR_ARG naming what is wrong: a length that does not match the counts, a member or an
// interval beyond kMaxRank, an empty or unordered interval, no members, a parent count that
// leaves no spawned member.
StatusOr<MergeRecord> DecodeMergeRecord(std::span<const std::byte> bytes);
// RFT_ERR_ARG naming the rank when a member or a failed rank is not below `job_size`: a record
// the replacement must not act on (it would report billions of failures, or join ranks that do
// not exist).
Status CheckMergeRecordFits(const MergeRecord& record, uint32_t job_size);

}  // namespace rft::api

#endif  // RFT_ULFM_API_MERGE_RECORD_H_
