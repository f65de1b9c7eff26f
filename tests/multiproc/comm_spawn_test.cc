// rft_comm_spawn across real processes under rftrun (comm_spawn_worker.c): 3 parents start 2
// children of the same program and talk to them over the intercommunicator it returns; bad
// arguments are refused at every member; a child dead at birth fails the spawn at every parent
// and at the other child; a child killed later is recovered from by revoke and shrink.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

ScenarioResult RunWorker(const std::string& mode, const std::string& fault = "") {
  std::vector<std::string> env = DefaultsUnlessSanitized();
  if (!fault.empty()) env.push_back("RFT_FAULT_INJECT=" + fault);
  // A long PMIx timeout: a wait for what a dead child never publishes would show.
  env.push_back("RFT_PMIX_TIMEOUT=40s");
  return RunCommand("tools/rftrun/rftrun",
                    {"-n", "3", "--ft", "--timeout", "60", "--get-stack-traces",
                     Runfile("tests/multiproc/comm_spawn_worker"), mode},
                    std::chrono::seconds(70), env);
}

TEST(CommSpawnTest, ParentsAndChildrenTalkOverTheIntercommunicatorMergeAndSpawnAgain) {
  const auto r = RunWorker("all");
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "parent ok"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] child ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "grandchild ok"), 1) << r.Report();
}

TEST(CommSpawnTest, AChildDeadAtBirthFailsTheSpawnEverywhereAndNobodyWaits) {
  const auto r = RunWorker("child-dies");
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // the child's own SIGKILL
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "child-dies ok"), 3) << r.Report();
  // Child 0 either sees its rft_init fail or is declared failed (comm_spawn_worker.c says why).
  EXPECT_LE(CountLines(r.output, "child init failed: RFT_ERR_PROC_FAILED"), 1) << r.Report();
  EXPECT_LT(r.seconds, 30.0) << r.Report();
}

// A parent dies during the spawn, at a point placed exactly (docs/configuration.md): the root
// once the launcher started the children and before it published anything, or another parent
// in the confirming agreement. The other parents fail, the children's rft_init fails; no wait.
TEST(CommSpawnTest, AParentDeadDuringTheSpawnFailsItAtEveryParentAndChild) {
  for (const char* fault : {"spawn.launched@0", "merge.confirming@2"}) {
    const auto r = RunWorker("parent-dies", fault);
    EXPECT_EQ(r.exit_status, 128 + 9) << fault << "\n" << r.Report();  // the parent's own kill
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << fault << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "parent-dies ok"), 2) << fault << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "child init failed: RFT_ERR_PROC_FAILED"), 2) << fault << "\n"
                                                                                 << r.Report();
    EXPECT_LT(r.seconds, 30.0) << fault << "\n" << r.Report();
  }
}

TEST(CommSpawnTest, AChildKilledLaterIsRevokedAndShrunkAwayOnBothSides) {
  const auto r = RunWorker("child-fault");
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "child-fault ok"), 4) << r.Report();
}

}  // namespace
}  // namespace rft::testing
