// rft::api::Group: an ordered set of processes, named by their ranks in the job (MPI groups,
// MPI 4.0 §7.3). A group's rank i is the i-th member; the operations keep MPI's orders:
//
//   Union(a, b)         a's members in a's order, then b's members not in a, in b's order
//   Intersection(a, b)  a's members that are in b, in a's order
//   Difference(a, b)    a's members not in b, in a's order
//   Incl(ranks)         the members at `ranks`, in that order
//   Excl(ranks)         the members not at `ranks`, in the group's order
//
// Groups are immutable values; every operation builds a new one. Membership tests cost
// O(log n) (a sorted copy of the members is kept beside the ordered list), so the set
// operations are O(n log n) even at 100,000 ranks. Bad input (a rank outside the group, a
// duplicate, a job rank that is not a rank) is RFT_ERR_ARG naming the value.
#ifndef RFT_ULFM_API_GROUP_H_
#define RFT_ULFM_API_GROUP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::api {

class Group {
 public:
  // A rank with no counterpart (TranslateRanks), or a process not in the group (RankOf).
  static constexpr Rank kUndefined = kInvalidRank;
  enum class Comparison : uint8_t {
    kIdentical,  // the same members in the same order
    kSimilar,    // the same members in another order
    kUnequal,
  };

  Group() = default;  // the empty group
  // The members in group order, by job rank: RFT_ERR_ARG for a duplicate or kInvalidRank.
  static StatusOr<Group> FromJobRanks(std::vector<Rank> job_ranks);
  // Job ranks first, first + 1, ..., first + count - 1 (a job's world group: Range(0, size)).
  static Group Range(Rank first, uint32_t count);

  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }
  bool empty() const { return members_.empty(); }
  // The job rank of group rank `rank` (< size()).
  Rank JobRank(Rank rank) const { return members_[rank]; }
  // The group rank of job rank `job_rank`, or kUndefined if it is not a member.
  Rank RankOf(Rank job_rank) const;
  bool Contains(Rank job_rank) const { return RankOf(job_rank) != kUndefined; }
  const std::vector<Rank>& job_ranks() const { return members_; }

  // For each rank of this group in `ranks`, its rank in `other` (kUndefined if not a member);
  // RFT_ERR_ARG for a rank outside this group. `out` gets one entry per input.
  Status TranslateRanks(std::span<const Rank> ranks, const Group& other,
                        std::vector<Rank>* out) const;

  static Group Union(const Group& a, const Group& b);
  static Group Intersection(const Group& a, const Group& b);
  static Group Difference(const Group& a, const Group& b);
  // RFT_ERR_ARG for a rank outside the group or given twice.
  StatusOr<Group> Incl(std::span<const Rank> ranks) const;
  StatusOr<Group> Excl(std::span<const Rank> ranks) const;
  static Comparison Compare(const Group& a, const Group& b);

  friend bool operator==(const Group& a, const Group& b) { return a.members_ == b.members_; }

 private:
  explicit Group(std::vector<Rank> members);
  // Checks that every rank in `ranks` is a group rank and none repeats; `what` names the call.
  Status CheckGroupRanks(std::span<const Rank> ranks, const char* what) const;

  std::vector<Rank> members_;  // job ranks, in group order
  // (job rank, group rank), sorted by job rank: membership by binary search.
  std::vector<std::pair<Rank, Rank>> index_;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_GROUP_H_
