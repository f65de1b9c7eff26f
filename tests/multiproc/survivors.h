// What the survivors of a failure check in the multi-process tests: that they know who failed, and
// that they still talk to each other.
#ifndef RFT_TESTS_MULTIPROC_SURVIVORS_H_
#define RFT_TESTS_MULTIPROC_SURVIVORS_H_

#include "base/clock.h"
#include "base/rank_set.h"
#include "base/status.h"
#include "detector/failure_registry.h"
#include "transport/dataplane/data_plane.h"

namespace rft::testing {

// Waits until every rank of `ranks` is failed in `registry`; RFT_ERR_TIMEOUT naming the first
// one still alive at `deadline`.
Status AwaitFailed(detector::FailureRegistry& registry, const RankSet& ranks, Deadline deadline);

// One token around the ring of `live` ranks (sorted, containing this rank) over `plane`: the
// survivors of a failure still talk to each other. RFT_ERR_OTHER for a wrong token.
Status TokenRing(transport::DataPlane& plane, const RankSet& live, int32_t tag,
                 uint32_t context_id);

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_SURVIVORS_H_
