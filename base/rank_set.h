// rft::RankSet: a sorted set of process ranks, stored as sorted disjoint half-open intervals.
//
// Failed sets, group membership and agreement results are mostly a few long runs ({0..99999}
// minus a handful of failures), so the run-length form keeps them small on the wire and in
// memory: the memory and the cost of most operations grow with the number of intervals, not the
// number of ranks. Contains, Nth and IndexOf are O(log intervals); Insert and Erase are
// O(intervals) in the worst case (vector shifting); the set algebra is linear in the intervals of
// both operands.
//
// Not thread-safe for concurrent mutation; concurrent const use is fine.
#ifndef RFT_BASE_RANK_SET_H_
#define RFT_BASE_RANK_SET_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rft {

using Rank = uint32_t;

// The largest Rank value is reserved (it marks "no rank"/wildcards in upper layers) so that every
// valid rank r has an exclusive bound r + 1 that fits in a Rank. Inserting it is a bug.
inline constexpr Rank kInvalidRank = UINT32_MAX;
inline constexpr Rank kMaxRank = kInvalidRank - 1;

class RankSet {
 public:
  // The ranks [first, last); never empty inside a RankSet.
  struct Interval {
    Rank first;
    Rank last;
    friend bool operator==(const Interval&, const Interval&) = default;
  };

  // Iterates over the ranks in increasing order. Invalidated by any mutation of the set.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Rank;
    using difference_type = std::ptrdiff_t;
    using pointer = const Rank*;
    using reference = Rank;

    const_iterator() = default;
    Rank operator*() const { return rank_; }
    const_iterator& operator++() {
      if (++rank_ == (*runs_)[index_].last) {
        ++index_;
        rank_ = index_ < runs_->size() ? (*runs_)[index_].first : 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.index_ == b.index_ && a.rank_ == b.rank_;
    }

   private:
    friend class RankSet;
    const_iterator(const std::vector<Interval>* runs, size_t index)
        : runs_(runs), index_(index), rank_(index < runs->size() ? (*runs)[index].first : 0) {}

    const std::vector<Interval>* runs_ = nullptr;
    size_t index_ = 0;
    Rank rank_ = 0;
  };
  using iterator = const_iterator;

  RankSet() = default;
  RankSet(std::initializer_list<Rank> ranks);
  // The ranks [first, last_exclusive); empty when last_exclusive <= first.
  static RankSet Range(Rank first, Rank last_exclusive);

  // `rank` must be <= kMaxRank.
  void Insert(Rank rank);
  // Inserts [first, last_exclusive); nothing when last_exclusive <= first.
  void InsertRange(Rank first, Rank last_exclusive);
  // Erasing an absent rank is a no-op.
  void Erase(Rank rank);
  void EraseRange(Rank first, Rank last_exclusive);

  bool Contains(Rank rank) const;
  // Number of ranks (not intervals).
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();

  RankSet Union(const RankSet& other) const;
  RankSet Intersection(const RankSet& other) const;
  // The ranks of *this that are not in `other`.
  RankSet Difference(const RankSet& other) const;
  RankSet& operator|=(const RankSet& other);
  RankSet& operator&=(const RankSet& other);
  RankSet& operator-=(const RankSet& other);

  friend bool operator==(const RankSet& a, const RankSet& b) { return a.runs_ == b.runs_; }

  const_iterator begin() const { return const_iterator(&runs_, 0); }
  const_iterator end() const { return const_iterator(&runs_, runs_.size()); }

  // The i-th smallest rank; `i` must be < size().
  Rank Nth(size_t i) const;
  // The position of `rank` among the members (Nth(*IndexOf(r)) == r), or nullopt if absent.
  std::optional<size_t> IndexOf(Rank rank) const;

  // The canonical form: sorted, disjoint, non-adjacent, non-empty intervals. For serialization.
  std::span<const Interval> intervals() const { return runs_; }

  // "{0-3,7,9-12}"; "{}" when empty. Ranges are inclusive in the text.
  std::string ToString() const;
  // Accepts the ToString format. The braces are optional, spaces around items are ignored, and
  // items may come in any order and overlap. Anything else is RFT_ERR_ARG naming the bad item.
  static StatusOr<RankSet> Parse(std::string_view text);

 private:
  // Recomputes before_ and size_ from runs_[from] on.
  void Reindex(size_t from);
  // Index of the interval holding `rank`, or nullopt.
  std::optional<size_t> Find(Rank rank) const;

  std::vector<Interval> runs_;
  // before_[i]: number of ranks in runs_[0, i). Lets Nth and IndexOf binary-search.
  std::vector<uint32_t> before_;
  size_t size_ = 0;
};

}  // namespace rft

#endif  // RFT_BASE_RANK_SET_H_
