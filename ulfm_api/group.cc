#include "ulfm_api/group.h"

#include <algorithm>
#include <string>
#include <utility>

namespace rft::api {

Group::Group(std::vector<Rank> members) : members_(std::move(members)) {
  index_.reserve(members_.size());
  for (Rank i = 0; i < members_.size(); ++i) index_.emplace_back(members_[i], i);
  std::sort(index_.begin(), index_.end());
}

StatusOr<Group> Group::FromJobRanks(std::vector<Rank> job_ranks) {
  Group group(std::move(job_ranks));
  for (size_t i = 0; i < group.index_.size(); ++i) {
    const Rank job_rank = group.index_[i].first;
    if (job_rank == kInvalidRank) {
      return ArgError("group member " + std::to_string(group.index_[i].second) +
                      ": the invalid rank; expected a rank of the job");
    }
    if (i > 0 && group.index_[i - 1].first == job_rank) {
      return ArgError("group: job rank " + std::to_string(job_rank) + " given twice (at " +
                      std::to_string(group.index_[i - 1].second) + " and " +
                      std::to_string(group.index_[i].second) + "); expected distinct ranks");
    }
  }
  return group;
}

Group Group::Range(Rank first, uint32_t count) {
  std::vector<Rank> members(count);
  for (uint32_t i = 0; i < count; ++i) members[i] = first + i;
  return Group(std::move(members));
}

Rank Group::RankOf(Rank job_rank) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(job_rank, Rank{0}));
  return it != index_.end() && it->first == job_rank ? it->second : kUndefined;
}

Status Group::CheckGroupRanks(std::span<const Rank> ranks, const char* what) const {
  std::vector<uint8_t> seen(members_.size(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] >= members_.size()) {
      return ArgError(std::string(what) + ": rank " + std::to_string(ranks[i]) + " (entry " +
                      std::to_string(i) + ") is outside a group of " +
                      std::to_string(members_.size()));
    }
    if (seen[ranks[i]]++ != 0) {
      return ArgError(std::string(what) + ": rank " + std::to_string(ranks[i]) +
                      " given twice; expected distinct ranks");
    }
  }
  return Status::Ok();
}

Status Group::TranslateRanks(std::span<const Rank> ranks, const Group& other,
                             std::vector<Rank>* out) const {
  out->clear();
  out->reserve(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] >= members_.size()) {
      return ArgError("translate ranks: rank " + std::to_string(ranks[i]) + " (entry " +
                      std::to_string(i) + ") is outside a group of " +
                      std::to_string(members_.size()));
    }
    out->push_back(other.RankOf(members_[ranks[i]]));
  }
  return Status::Ok();
}

Group Group::Union(const Group& a, const Group& b) {
  std::vector<Rank> members = a.members_;
  for (Rank job_rank : b.members_) {
    if (!a.Contains(job_rank)) members.push_back(job_rank);
  }
  return Group(std::move(members));
}

Group Group::Intersection(const Group& a, const Group& b) {
  std::vector<Rank> members;
  for (Rank job_rank : a.members_) {
    if (b.Contains(job_rank)) members.push_back(job_rank);
  }
  return Group(std::move(members));
}

Group Group::Difference(const Group& a, const Group& b) {
  std::vector<Rank> members;
  for (Rank job_rank : a.members_) {
    if (!b.Contains(job_rank)) members.push_back(job_rank);
  }
  return Group(std::move(members));
}

StatusOr<Group> Group::Incl(std::span<const Rank> ranks) const {
  RFT_RETURN_IF_ERROR(CheckGroupRanks(ranks, "group incl"));
  std::vector<Rank> members;
  members.reserve(ranks.size());
  for (Rank rank : ranks) members.push_back(members_[rank]);
  return Group(std::move(members));
}

StatusOr<Group> Group::Excl(std::span<const Rank> ranks) const {
  RFT_RETURN_IF_ERROR(CheckGroupRanks(ranks, "group excl"));
  std::vector<uint8_t> excluded(members_.size(), 0);
  for (Rank rank : ranks) excluded[rank] = 1;
  std::vector<Rank> members;
  members.reserve(members_.size() - ranks.size());
  for (Rank i = 0; i < members_.size(); ++i) {
    if (excluded[i] == 0) members.push_back(members_[i]);
  }
  return Group(std::move(members));
}

Group::Comparison Group::Compare(const Group& a, const Group& b) {
  if (a.members_ == b.members_) return Comparison::kIdentical;
  if (a.members_.size() != b.members_.size()) return Comparison::kUnequal;
  for (size_t i = 0; i < a.index_.size(); ++i) {
    if (a.index_[i].first != b.index_[i].first) return Comparison::kUnequal;
  }
  return Comparison::kSimilar;
}

}  // namespace rft::api
