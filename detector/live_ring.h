// Navigation on the ring of ranks 0..size-1 that skips the ranks known to have failed.
//
// Shared by the heartbeat ring (who observes whom) and the reliable broadcast (its repaired
// distance-1 edges). The failed set is a RankSet (sorted intervals), so a step over a run of
// consecutive failures costs one binary search, not one probe per failed rank: finding the next
// live rank is O(log intervals) whatever the size of the job.
#ifndef RFT_DETECTOR_LIVE_RING_H_
#define RFT_DETECTOR_LIVE_RING_H_

#include "base/rank_set.h"

namespace rft::detector {

// The nearest rank after `from` going up (size - 1 wraps to 0) that is not in `failed`, or
// kInvalidRank when every rank other than `from` is in `failed`. `from` itself may be failed;
// it is never returned. Requires size >= 1, from < size and every member of `failed` < size.
Rank NextLiveRank(const RankSet& failed, Rank size, Rank from);

// The same going down (0 wraps to size - 1).
Rank PreviousLiveRank(const RankSet& failed, Rank size, Rank from);

}  // namespace rft::detector

#endif  // RFT_DETECTOR_LIVE_RING_H_
