// rft::transport::RankSpace: the job ranks of a job that grows by spawned replacements.
//
// PMIx gives every spawned job a namespace of its own with ranks 0..k-1; rft keeps one space of
// job ranks across them. The job's own namespace holds job ranks 0..n-1; each spawn of
// replacements appends a block: that namespace's rank i is job rank first + i, first being the
// job size before the spawn. A job rank is never reused (a failed one stays failed), so every
// layer above only ever grows. docs/recovery.md, "Replacements".
//
// A spawned process learns the blocks of the job it joins from its parent (Bootstrap::Spawn
// puts them in its environment, Encode/Decode) and appends its own.
#ifndef RFT_TRANSPORT_BOOTSTRAP_RANK_SPACE_H_
#define RFT_TRANSPORT_BOOTSTRAP_RANK_SPACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::transport {

// Job ranks [first, first + count) are the ranks 0..count-1 of PMIx namespace `nspace`.
struct RankBlock {
  std::string nspace;
  Rank first = 0;
  uint32_t count = 0;
  friend bool operator==(const RankBlock&, const RankBlock&) = default;
};

class RankSpace {
 public:
  // Appends `count` ranks held by `nspace` (first: the current size). RFT_ERR_ARG naming the
  // value for an empty namespace or one with ';' or ':' in it (Encode's separators), a namespace
  // already in the space, a count of 0, or a size beyond kMaxRank + 1.
  Status Add(std::string_view nspace, uint32_t count);

  uint32_t size() const { return size_; }
  const std::vector<RankBlock>& blocks() const { return blocks_; }
  // The block holding `job_rank`; nullptr beyond the size.
  const RankBlock* BlockOf(Rank job_rank) const;
  // The job rank of rank `pmix_rank` of `nspace`; kInvalidRank when the namespace is not in the
  // job or the rank is beyond its block.
  Rank JobRankOf(std::string_view nspace, uint32_t pmix_rank) const;

  // "count:nspace;count:nspace...", in order; Decode refuses anything else, naming what is wrong.
  std::string Encode() const;
  static StatusOr<RankSpace> Decode(std::string_view text);

 private:
  std::vector<RankBlock> blocks_;
  uint32_t size_ = 0;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_BOOTSTRAP_RANK_SPACE_H_
