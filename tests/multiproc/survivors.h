// The detector and the data plane wired together as a multi-process test needs them (and as the
// runtime will): every failure, from any source, goes through the failure registry, which tells
// the data plane; what the data plane finds itself goes to the registry.
#ifndef RFT_TESTS_MULTIPROC_STACK_H_
#define RFT_TESTS_MULTIPROC_STACK_H_

#include <memory>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"

namespace rft::testing {

class Stack {
 public:
  // Options from the RFT_* environment, as a user's job would have them.
  static StatusOr<std::unique_ptr<Stack>> Create(transport::Bootstrap& job);
  // Departs (so the others do not take this end for a failure), then closes the data plane
  // before the detector.
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  detector::FailureRegistry& registry() { return *registry_; }
  detector::ControlPlane& control() { return *control_; }
  transport::DataPlane& plane() { return *plane_; }

 private:
  Stack() = default;
  // Destroyed in reverse: the subscription before the data plane it calls into.
  std::unique_ptr<detector::FailureRegistry> registry_;
  std::unique_ptr<detector::ControlPlane> control_;
  std::unique_ptr<transport::DataPlane> plane_;
  detector::Subscription subscription_;
};

// Waits until every rank of `ranks` is failed in `registry`; RFT_ERR_TIMEOUT naming the first
// one still alive at `deadline`.
Status AwaitFailed(detector::FailureRegistry& registry, const RankSet& ranks, Deadline deadline);

// One token around the ring of `live` ranks (sorted, containing this rank) over `plane`: the
// survivors of a failure still talk to each other. RFT_ERR_OTHER for a wrong token.
Status TokenRing(transport::DataPlane& plane, const RankSet& live, int32_t tag,
                 uint32_t context_id);

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_STACK_H_
