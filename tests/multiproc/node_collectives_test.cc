// The node area of blocking small collectives (ulfm_api/node_collectives.h) across real
// processes under rftrun (node_collectives_worker.c): 2 ranks, which poll on a machine of 2 or
// more cores and so share an area (checked in rank 0's info log), and 3 and 4 made to poll, beside
// the same runs through messages (RFT_NODE_COLLECTIVES=n); random sequences of every kind, a member
// killed or hung before a call drawn from the seed, a revocation, and the progress a peer's send
// needs.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/node_collectives_worker";

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args,
                         const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n), "--ft", "--timeout",
                                   "60", Runfile(kWorker)};
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  std::vector<std::string> env = TolerantHeartbeats();
  env.push_back("RFT_LOG_LEVEL=info");
  // More ranks than this machine's 2 cores would block when idle and take messages: polling is
  // forced so that the area's waits on several members run too (bounded: each wait gives the
  // core up after a while, and these runs take a second).
  if (n > 2) env.push_back("RFT_PROGRESS=poll");
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(70), env);
}

std::string Shared(int n) { return "an area shared by its " + std::to_string(n) + " members"; }

// Two polling ranks share an area unless the setting says no; whichever way, every result of a
// random sequence (sizes on both sides of the area's limit, on two communicators) is exact.
TEST(NodeCollectivesTest, RandomSequencesGiveExactResultsThroughTheAreaAndWithout) {
  for (const auto& [n, seed, calls] :
       {std::tuple{2, "1", "3000"}, std::tuple{2, "2", "3000"}, std::tuple{2, "3", "3000"},
        std::tuple{3, "4", "400"}, std::tuple{4, "5", "400"}}) {
    const auto r = RunWorker(n, {"mixed", seed, calls});
    ASSERT_EQ(r.exit_status, 0) << "n " << n << " seed " << seed << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "mixed ok"), n) << r.Report();
    EXPECT_GE(CountLines(r.output, Shared(n)), 2) << "world and its duplicate\n" << r.Report();
  }
  // Mostly calls of at most 8 bytes: bcasts and reduces that run ahead through the entries,
  // around them many times, between barriers and allreduces in the slots.
  for (const auto& [n, seed] : {std::pair{2, "7"}, std::pair{3, "8"}}) {
    const auto r = RunWorker(n, {"mixed", seed, "3000", "small"});
    ASSERT_EQ(r.exit_status, 0) << "n " << n << " seed " << seed << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "mixed ok"), n) << r.Report();
  }
  const auto r = RunWorker(2, {"mixed", "6", "500"}, {"RFT_NODE_COLLECTIVES=n"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "mixed ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, Shared(2)), 0) << r.Report();
  EXPECT_GE(CountLines(r.output, "through messages"), 2) << r.Report();
}

// The last rank SIGKILLs or SIGSTOPs itself before a call drawn from the seed; the survivor's
// calls succeed exactly or return PROC_FAILED, never hang, and its last barrier is refused.
TEST(NodeCollectivesTest, AMemberKilledOrHungAtARandomCallEndsTheOthersWaits) {
  for (const char* mode : {"kill", "hang"}) {
    for (const auto& [n, seed] : {std::pair{2, "11"}, std::pair{2, "12"}, std::pair{2, "13"},
                                  std::pair{2, "14"}, std::pair{4, "15"}, std::pair{4, "16"}}) {
      const auto r = RunWorker(n, {mode, seed});
      // A SIGKILL it raised is the job's status; a hung rank the launcher kills on request is not.
      EXPECT_EQ(r.exit_status, std::string(mode) == "kill" ? 128 + 9 : 0)
          << mode << " n " << n << " seed " << seed << "\n"
          << r.Report();
      EXPECT_EQ(CountLines(r.output, std::string(mode) + " ok rank="), n - 1)
          << mode << " n " << n << " seed " << seed << "\n"
          << r.Report();
      EXPECT_EQ(CountLines(r.output, "FAILED: "), 0) << r.Report();
    }
  }
}

TEST(NodeCollectivesTest, ARevocationEndsWaitsInTheArea) {
  const auto r = RunWorker(2, {"revoke"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "revoke ok"), 2) << r.Report();
}

// An erroneous program: members' lengths differ, on either side of the 8 bytes that choose
// between the area's entries and its slots, or on one side. The member that waits for the other's
// data gets RFT_ERR_TRUNCATE instead of garbage or a hang.
TEST(NodeCollectivesTest, LengthsThatDifferEndInTruncate) {
  const auto r = RunWorker(2, {"mismatch"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "mismatch ok"), 2) << r.Report();
  EXPECT_GE(CountLines(r.output, Shared(2)), 1) << r.Report();
}

// Rank 1 waits in a barrier for rank 0, which is in a synchronous send that ends only once rank
// 1's data plane handled its rendezvous: the wait must progress it.
TEST(NodeCollectivesTest, AWaitInTheAreaProgressesWhatAPeerWaitsFor) {
  const auto r = RunWorker(2, {"progress"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "progress ok"), 2) << r.Report();
}

}  // namespace
}  // namespace rft::testing
