#include "detector/live_ring.h"

#include <algorithm>
#include <optional>

namespace rft::detector {

namespace {

// The failed run holding `rank`, if any.
std::optional<RankSet::Interval> RunHolding(const RankSet& failed, Rank rank) {
  const auto runs = failed.intervals();
  auto it = std::upper_bound(runs.begin(), runs.end(), rank,
                             [](Rank r, const RankSet::Interval& run) { return r < run.first; });
  if (it == runs.begin()) return std::nullopt;
  --it;
  if (rank >= it->last) return std::nullopt;
  return *it;
}

}  // namespace

Rank NextLiveRank(const RankSet& failed, Rank size, Rank from) {
  // `distance` counts steps up from `from`; reaching `size` means we came back around. Each turn
  // either returns or jumps past a whole failed run, and runs are never adjacent, so the loop
  // turns at most three times (the last run may end at size - 1 and wrap onto a run at 0).
  uint64_t distance = 1;
  while (distance < size) {
    const Rank candidate = static_cast<Rank>((from + distance) % size);
    const std::optional<RankSet::Interval> run = RunHolding(failed, candidate);
    if (!run) return candidate;
    distance += run->last - candidate;
  }
  return kInvalidRank;
}

Rank PreviousLiveRank(const RankSet& failed, Rank size, Rank from) {
  uint64_t distance = 1;
  while (distance < size) {
    const Rank candidate = static_cast<Rank>((from + size - distance) % size);
    const std::optional<RankSet::Interval> run = RunHolding(failed, candidate);
    if (!run) return candidate;
    distance += candidate - run->first + 1;
  }
  return kInvalidRank;
}

}  // namespace rft::detector
