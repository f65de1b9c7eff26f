// Intercommunicators of the C API (rft.h) across real processes under rftrun
// (intercomm_worker.c): groups of 2 and 3 joined by rft_intercomm_create; point-to-point, every
// intercommunicator collective, dup and merge checked with every member alive; then a member of
// one group killed, and the revocation, agreement, failure view and shrink spanning both groups.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

ScenarioResult RunWorker(const std::string& mode) {
  const std::vector<std::string> args = {
      "-n", "5", "--ft", "--timeout", "60", Runfile("tests/multiproc/intercomm_worker"), mode};
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(70), TolerantHeartbeats());
}

TEST(IntercommTest, PointToPointCollectivesDupAndMergeCrossBetweenTheGroups) {
  const auto r = RunWorker("all");
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "all ok"), 5) << r.Report();
}

// World rank 4 (of the group of 3) kills itself once the others are past a barrier.
TEST(IntercommTest, AFailureInOneGroupIsRevokedAgreedAndShrunkAcrossBoth) {
  const auto r = RunWorker("fault");
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "fault ok"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED: "), 0) << r.Report();
}

}  // namespace
}  // namespace rft::testing
