// Check macros and the rule checks shared by the data plane's multi-process worker.
#ifndef RFT_TESTS_MULTIPROC_DATAPLANE_CHECKS_H_
#define RFT_TESTS_MULTIPROC_DATAPLANE_CHECKS_H_

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"

namespace rft::testing {

// Prints "FAILED: <what>" (the test driver looks for it) and returns the exit status 3.
inline int Fail(const std::string& what) {
  std::printf("FAILED: %s\n", what.c_str());
  std::fflush(stdout);
  return 3;
}

#define CHECK(cond, what)                                                         \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::ostringstream check_out_;                                              \
      check_out_ << __FILE__ << ":" << __LINE__ << ": " << #cond << ": " << what; \
      return ::rft::testing::Fail(check_out_.str());                              \
    }                                                                             \
  } while (0)

#define CHECK_OK(expr)                                   \
  do {                                                   \
    const ::rft::Status check_status_ = (expr);          \
    CHECK(check_status_.ok(), check_status_.ToString()); \
  } while (0)

// Returns from the calling check with the exit status of a check helper (`expr`) that failed.
#define RETURN_IF_FAILED(expr)              \
  do {                                      \
    if (const int rc_ = (expr); rc_ != 0) { \
      return rc_;                           \
    }                                       \
  } while (0)

// Deterministic message content: byte i is a function of i and `seed`, so a message
// delivered to the wrong receive, reordered or corrupted shows.
inline std::vector<char> TestBytes(size_t size, uint32_t seed) {
  std::vector<char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + seed * 17) & 0xff);
  return bytes;
}

// Matching rules, completion calls, truncation, probe, cancel, boundary sizes, bad
// arguments and malformed input (dataplane_rules.cc). n = 1 (to itself) or more (each rank
// with its ring neighbours).
int Rules(transport::Bootstrap& job, transport::DataPlane& plane);
// Revocation of a context (dataplane_revocation.cc): what was pending completes with
// RFT_ERR_REVOKED, what arrived is discarded, new operations are refused, a new epoch lives.
int Revocation(transport::Bootstrap& job, transport::DataPlane& plane);

// The verbs backend's pairs on demand (dataplane_verbs_links.cc; n = 4, in the soft-RoCE
// guest): QPs only for the pairs that talk, whichever end sends first; and with
// RFT_VERBS_PEERS=1, pairs beyond a process's one place refused and moved to UCX, their queued
// messages intact and in order.
int OnDemand(transport::Bootstrap& job, transport::DataPlane& plane);
// UCX's worker resting while verbs carries the messages (n = 2, poll mode): a link message
// still reaches a process whose worker rests, and verbs round trips let it rest.
int UcxRest(transport::Bootstrap& job, transport::DataPlane& plane);
// The same with the pair on UCX (rank 1 without verbs): the worker never rests.
int UcxRestMixed(transport::Bootstrap& job, transport::DataPlane& plane);
int WorkingSet(transport::Bootstrap& job, transport::DataPlane& plane);
// The same with idle pairs closing to give their place to a pair that needs one.
int GiveBack(transport::Bootstrap& job, transport::DataPlane& plane);
// Both ends of a pair asking each other to close at once.
int GiveBackCrossing(transport::Bootstrap& job, transport::DataPlane& plane);
// A death during a close (n = 3, rftrun --ft, the runtime's registry, RFT_FAULT_INJECT).
int GiveBackDeath(transport::Bootstrap& job, transport::DataPlane& plane, Rank victim);
// Pairs that moved to UCX coming back to verbs (dataplane_verbs_return.cc, RFT_VERBS_PEERS=1,
// a small RFT_VERBS_RETURN_AFTER): a closed pair (n = 3), a refused one refused again (n = 3,
// RFT_VERBS_CLOSE_IDLE=n), and every pair streaming at once (n = 3).
int Return(transport::Bootstrap& job, transport::DataPlane& plane);
int ReturnRefused(transport::Bootstrap& job, transport::DataPlane& plane);
int ReturnChurn(transport::Bootstrap& job, transport::DataPlane& plane);
// A process asked to close that does not call into rft: the waiting pair goes through UCX,
// and comes back later (n = 3, a short RFT_VERBS_PLACE_WAIT).
int ReturnStalled(transport::Bootstrap& job, transport::DataPlane& plane);
// A death during a return (n = 3, rftrun --ft, RFT_FAULT_INJECT=verbs.return.taken@1).
int ReturnDeath(transport::Bootstrap& job, transport::DataPlane& plane);

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_DATAPLANE_CHECKS_H_
