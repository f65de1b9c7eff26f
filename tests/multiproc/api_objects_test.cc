// Requests the program frees (rft_request_free) and communicators created by their members alone
// (rft_comm_create_group), across real processes under rftrun: api_objects_worker.c's modes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

ScenarioResult RunWorker(int n, const std::string& mode) {
  return RunCommand("tools/rftrun/rftrun",
                    {"-n", std::to_string(n), "--ft", "--timeout", "60", "--get-stack-traces",
                     Runfile("tests/multiproc/api_objects_worker"), mode},
                    std::chrono::seconds(70), TolerantHeartbeats());
}

// Freed sends and receives still deliver, their handles are stale, a freed receive's truncation
// reaches COMM_SELF's handler, and 2,000 freed sends are all released (finalize reports no leak).
TEST(ApiObjectsTest, AFreedRequestRunsToItsEndAndIsReleased) {
  for (int n : {2, 3}) {
    const auto r = RunWorker(n, "request_free");
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "request_free ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "leaked"), 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

TEST(ApiObjectsTest, CreateGroupIsCollectiveOverTheGroupOnly) {
  const auto r = RunWorker(4, "create_group");
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "create_group ok"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// Rank 3 kills itself at an agreed point: the others' group without it still creates; with it,
// PROC_FAILED; on a revoked parent, REVOKED.
TEST(ApiObjectsTest, CreateGroupFailsOnlyForAFailedMember) {
  const auto r = RunWorker(4, "create_group_failure");
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // rank 3's own SIGKILL
  EXPECT_EQ(CountLines(r.output, "create_group_failure ok"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

}  // namespace
}  // namespace rft::testing
