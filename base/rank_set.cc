#include "base/rank_set.h"

#include <algorithm>
#include <charconv>

#include "base/check.h"

namespace rft {

namespace {

using Interval = RankSet::Interval;

// Appends [first, last) to a run list built in increasing order of `first`, merging it with the
// previous run when they overlap or touch so the result stays canonical.
void AppendRun(std::vector<Interval>& runs, Rank first, Rank last) {
  if (first >= last) return;
  if (!runs.empty() && first <= runs.back().last) {
    runs.back().last = std::max(runs.back().last, last);
  } else {
    runs.push_back({first, last});
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses a decimal rank, digits only.
bool ParseRank(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

RankSet::RankSet(std::initializer_list<Rank> ranks) {
  for (Rank r : ranks) Insert(r);
}

RankSet RankSet::Range(Rank first, Rank last_exclusive) {
  RankSet set;
  set.InsertRange(first, last_exclusive);
  return set;
}

void RankSet::Reindex(size_t from) {
  before_.resize(runs_.size());
  uint64_t count =
      from == 0 ? 0 : before_[from - 1] + (runs_[from - 1].last - runs_[from - 1].first);
  for (size_t i = from; i < runs_.size(); ++i) {
    before_[i] = static_cast<uint32_t>(count);
    count += runs_[i].last - runs_[i].first;
  }
  size_ = static_cast<size_t>(count);
}

std::optional<size_t> RankSet::Find(Rank rank) const {
  // First run starting after `rank`; the candidate is the one before it.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), rank,
                             [](Rank r, const Interval& run) { return r < run.first; });
  if (it == runs_.begin()) return std::nullopt;
  --it;
  if (rank >= it->last) return std::nullopt;
  return static_cast<size_t>(it - runs_.begin());
}

void RankSet::Insert(Rank rank) {
  RFT_CHECK(rank <= kMaxRank, "RankSet::Insert: kInvalidRank is not a rank");
  InsertRange(rank, rank + 1);
}

void RankSet::InsertRange(Rank first, Rank last) {
  if (first >= last) return;
  // Runs that overlap or touch [first, last) are [lo, hi): they all merge into one.
  auto lo = std::lower_bound(runs_.begin(), runs_.end(), first,
                             [](const Interval& run, Rank r) { return run.last < r; });
  auto hi = std::upper_bound(lo, runs_.end(), last,
                             [](Rank r, const Interval& run) { return r < run.first; });
  size_t index = static_cast<size_t>(lo - runs_.begin());
  if (lo == hi) {
    runs_.insert(lo, Interval{first, last});
  } else {
    Interval merged{std::min(first, lo->first), std::max(last, (hi - 1)->last)};
    *lo = merged;
    runs_.erase(lo + 1, hi);
  }
  Reindex(index);
}

void RankSet::Erase(Rank rank) {
  if (rank > kMaxRank) return;
  EraseRange(rank, rank + 1);
}

void RankSet::EraseRange(Rank first, Rank last) {
  if (first >= last) return;
  // Runs that overlap [first, last) are [lo, hi).
  auto lo = std::upper_bound(runs_.begin(), runs_.end(), first,
                             [](Rank r, const Interval& run) { return r < run.last; });
  auto hi = std::lower_bound(lo, runs_.end(), last,
                             [](const Interval& run, Rank r) { return run.first < r; });
  if (lo == hi) return;
  size_t index = static_cast<size_t>(lo - runs_.begin());
  // What survives on either side of the erased range.
  Interval left{lo->first, first};
  Interval right{last, (hi - 1)->last};
  std::vector<Interval> keep;
  if (left.first < left.last) keep.push_back(left);
  if (right.first < right.last) keep.push_back(right);
  size_t removed = static_cast<size_t>(hi - lo);
  if (keep.size() <= removed) {
    std::copy(keep.begin(), keep.end(), lo);
    runs_.erase(lo + static_cast<std::ptrdiff_t>(keep.size()), hi);
  } else {
    // Only when one run is split in two.
    *lo = keep[0];
    runs_.insert(lo + 1, keep[1]);
  }
  Reindex(index);
}

bool RankSet::Contains(Rank rank) const { return Find(rank).has_value(); }

void RankSet::clear() {
  runs_.clear();
  before_.clear();
  size_ = 0;
}

RankSet RankSet::Union(const RankSet& other) const {
  RankSet out;
  out.runs_.reserve(runs_.size() + other.runs_.size());
  size_t i = 0, j = 0;
  while (i < runs_.size() || j < other.runs_.size()) {
    const Interval& next =
        (j == other.runs_.size() || (i < runs_.size() && runs_[i].first <= other.runs_[j].first))
            ? runs_[i++]
            : other.runs_[j++];
    AppendRun(out.runs_, next.first, next.last);
  }
  out.Reindex(0);
  return out;
}

RankSet RankSet::Intersection(const RankSet& other) const {
  RankSet out;
  size_t i = 0, j = 0;
  while (i < runs_.size() && j < other.runs_.size()) {
    const Interval& a = runs_[i];
    const Interval& b = other.runs_[j];
    AppendRun(out.runs_, std::max(a.first, b.first), std::min(a.last, b.last));
    // Drop whichever run ends first; the other may still overlap the next one.
    if (a.last < b.last) {
      ++i;
    } else {
      ++j;
    }
  }
  out.Reindex(0);
  return out;
}

RankSet RankSet::Difference(const RankSet& other) const {
  RankSet out;
  size_t j = 0;
  for (const Interval& a : runs_) {
    Rank cursor = a.first;
    // Skip runs of `other` that end before this run; they cannot matter for later runs either.
    while (j < other.runs_.size() && other.runs_[j].last <= cursor) ++j;
    size_t k = j;
    while (k < other.runs_.size() && other.runs_[k].first < a.last) {
      AppendRun(out.runs_, cursor, std::min(other.runs_[k].first, a.last));
      cursor = std::max(cursor, other.runs_[k].last);
      if (other.runs_[k].last > a.last) break;  // also covers part of the next run of *this
      ++k;
    }
    j = k;
    AppendRun(out.runs_, cursor, a.last);
  }
  out.Reindex(0);
  return out;
}

RankSet& RankSet::operator|=(const RankSet& other) { return *this = Union(other); }
RankSet& RankSet::operator&=(const RankSet& other) { return *this = Intersection(other); }
RankSet& RankSet::operator-=(const RankSet& other) { return *this = Difference(other); }

Rank RankSet::Nth(size_t i) const {
  RFT_CHECK(i < size_, "RankSet::Nth: index out of range");
  // Last run whose first member has index <= i.
  auto it = std::upper_bound(before_.begin(), before_.end(), i,
                             [](size_t v, uint32_t before) { return v < before; });
  size_t k = static_cast<size_t>(it - before_.begin()) - 1;
  return runs_[k].first + static_cast<Rank>(i - before_[k]);
}

std::optional<size_t> RankSet::IndexOf(Rank rank) const {
  std::optional<size_t> k = Find(rank);
  if (!k) return std::nullopt;
  return static_cast<size_t>(before_[*k]) + (rank - runs_[*k].first);
}

std::string RankSet::ToString() const {
  std::string out = "{";
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(runs_[i].first);
    if (runs_[i].last - runs_[i].first > 1) {
      out += '-';
      out += std::to_string(runs_[i].last - 1);
    }
  }
  out += '}';
  return out;
}

StatusOr<RankSet> RankSet::Parse(std::string_view text) {
  auto bad = [text](std::string_view item, const char* why) {
    std::string msg = "bad rank set \"";
    msg.append(text);
    msg += "\": \"";
    msg.append(item);
    msg += "\" ";
    msg += why;
    return ArgError(std::move(msg));
  };
  std::string_view body = Trim(text);
  bool open = !body.empty() && body.front() == '{';
  bool close = !body.empty() && body.back() == '}';
  if (open != close || (open && body.size() < 2)) {
    return ArgError("bad rank set \"" + std::string(text) + "\": unbalanced braces");
  }
  if (open) body = Trim(body.substr(1, body.size() - 2));

  RankSet set;
  if (body.empty()) return set;
  while (true) {
    size_t comma = body.find(',');
    std::string_view item = Trim(body.substr(0, comma));
    if (item.empty()) return bad(item, "is an empty item (stray comma?)");
    size_t dash = item.find('-');
    uint64_t first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!ParseRank(item, &first)) return bad(item, "is not a rank or a range a-b");
      last = first;
    } else if (!ParseRank(Trim(item.substr(0, dash)), &first) ||
               !ParseRank(Trim(item.substr(dash + 1)), &last)) {
      return bad(item, "is not a rank or a range a-b");
    }
    if (last < first) return bad(item, "is a range whose end is below its start");
    if (last > kMaxRank) return bad(item, "is out of range (the largest rank is 4294967294)");
    set.InsertRange(static_cast<Rank>(first), static_cast<Rank>(last + 1));
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return set;
}

}  // namespace rft
