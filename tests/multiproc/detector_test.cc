// The detector across real processes under rftrun: a killed and a stopped rank become known at
// every survivor (and a stopped one is killed: fail-stop), the data plane fails what depended on
// them, the survivors go on; without faults heartbeats flow and nobody is suspected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/detector_worker";

// Sanitizer builds run 2–15× slower on 2 shared cores: a 20 ms heartbeat timeout there declares
// starved processes dead. The tests use a generous timeout; the defaults are checked by a quiet
// run in the plain build and measured by bench/rft_bench_detect.
const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args,
                         const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n),   "--ft", "--timeout",
                                   "60", "--get-stack-traces"};
  args.push_back(Runfile(kWorker));
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(130), env);
}

struct Fault {
  int n;
  const char* kind;
  int victim;
};

class FaultTest : public ::testing::TestWithParam<Fault> {};

TEST_P(FaultTest, EverySurvivorLearnsItAndGoesOn) {
  const Fault f = GetParam();
  const auto r = RunWorker(f.n, {"fault", f.kind, "--victim", std::to_string(f.victim)}, kTolerant);
  if (std::string(f.kind) == "kill") {
    // The victim killed itself: a crash rftrun did not cause, which its status must show even
    // though the survivors went on (--ft).
    ASSERT_EQ(r.exit_status, 128 + 9) << r.Report();
    EXPECT_NE(r.output.find("rank " + std::to_string(f.victim) + " was killed by signal 9"),
              std::string::npos)
        << r.Report();
  } else {
    // A stopped victim is killed by the launcher on the detector's request (fail-stop).
    ASSERT_EQ(r.exit_status, 0) << r.Report();
  }
  EXPECT_EQ(CountLines(r.output, "fault ok"), f.n - 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
  if (std::string(f.kind) == "stop") {
    // Only a heartbeat timeout finds a stopped process; fail-stop has the launcher kill it.
    EXPECT_GE(CountLines(r.output, "source=heartbeat"), 1) << r.Report();
    EXPECT_NE(r.output.find("aborted on request"), std::string::npos) << r.Report();
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultTest,
                         ::testing::Values(Fault{2, "kill", 1}, Fault{4, "kill", 2},
                                           Fault{4, "kill", 0}, Fault{2, "stop", 0},
                                           Fault{4, "stop", 3}, Fault{8, "kill", 5}));

// Two neighbours on the ring die at once: each survivor records exactly both, and the ring
// repaired around them (rank 0 now observes rank 3 or is observed by it) carries on.
TEST(DetectorTest, TwoAdjacentVictimsAreBothRecordedAndTheSurvivorsGoOn) {
  const auto r = RunWorker(6, {"fault", "kill", "--victim", "1,2"}, kTolerant);
  ASSERT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "fault ok"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

// A rank that dies before the start-up exchange: the others start without it (issue: the
// whole --ft job used to fail with a PMIx_Get timeout). Its crash is still the job's status.
TEST(DetectorTest, ARankKilledDuringStartUpIsFailedAndTheOthersStart) {
  // No short RFT_PMIX_TIMEOUT: the launcher's event, not a timeout, must free the others.
  const auto r = RunWorker(4, {"startup", "kill", "--victim", "2"}, kTolerant);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "startup ok"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

// A rank that hangs before publishing: after RFT_PMIX_TIMEOUT the others declare it failed
// and have the launcher kill it (fail-stop), then go on.
TEST(DetectorTest, ARankHungDuringStartUpIsKilledAndTheOthersStart) {
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_PMIX_TIMEOUT=5s");  // live ranks publish well within it, even loaded
  const auto r = RunWorker(4, {"startup", "stop", "--victim", "1"}, env);
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "startup ok rank="), 3) << r.Report();
  // At least one survivor declared it (the others may have heard the launcher first).
  EXPECT_GE(CountLines(r.output, "source=start-up"), 1) << r.Report();
  EXPECT_NE(r.output.find("rank 1 was killed by signal 9 (SIGKILL), aborted on request"),
            std::string::npos)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

class AccusationTest : public ::testing::TestWithParam<std::pair<int, const char*>> {};

// Fail-stop for every source: at n = 2 nobody else would forward the news to the accused.
TEST_P(AccusationTest, AFalselyAccusedRankIsToldAndKilledAndEveryoneLearnsIt) {
  const auto [n, how] = GetParam();
  const auto r = RunWorker(n, {"accuse", how, "--victim", "1"}, kTolerant);
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "accused ok"), n - 1) << r.Report();
  EXPECT_NE(r.output.find("rank 1 was killed by signal 9 (SIGKILL), aborted on request"),
            std::string::npos)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, AccusationTest,
                         ::testing::Values(std::make_pair(2, "transport"),
                                           std::make_pair(4, "transport"),
                                           std::make_pair(3, "application")));

// A rank that ends while the others go on is never recorded failed, even where its closing
// TCP endpoints raise transport errors at the others.
TEST(DetectorTest, ARankThatEndsFirstIsNeverReportedFailed) {
  for (const char* tls : {"UCX_TLS=tcp,self", "UCX_TLS=all"}) {
    std::vector<std::string> env = kTolerant;
    env.push_back(tls);
    const auto r = RunWorker(3, {"staggered"}, env);
    ASSERT_EQ(r.exit_status, 0) << tls << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "staggered ok"), 3) << tls << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << tls << "\n" << r.Report();
  }
}

// Revoke and agreement run as services beside the detector on its control thread.
TEST(DetectorTest, AHostedServiceGetsItsMessagesBroadcastsAndTimers) {
  const auto r = RunWorker(3, {"services"}, kTolerant);
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "services ok"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

// Revocation is not collective: one rank revokes, every rank's pending receive ends REVOKED.
TEST(DetectorTest, ARevocationFromOneRankReachesEveryRank) {
  for (const auto& [n, origin] : {std::pair{1, 0}, std::pair{3, 2}, std::pair{4, 0}}) {
    const auto r = RunWorker(n, {"revoke", "--origin", std::to_string(origin)}, kTolerant);
    ASSERT_EQ(r.exit_status, 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "revoke ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
  }
}

// On one node the control messages go through the same-node sockets; with RFT_CONTROL_SOCKETS=n
// they take the network path (UCX here, verbs SENDs in the soft-RoCE guest) and the revocation
// still reaches every rank.
TEST(DetectorTest, WithoutSocketsTheControlMessagesTakeTheNetworkPath) {
  for (const bool sockets : {true, false}) {
    std::vector<std::string> env = kTolerant;
    env.push_back(std::string("RFT_CONTROL_SOCKETS=") + (sockets ? "y" : "n"));
    const auto r = RunWorker(3, {"revoke", "--origin", "1"}, env);
    ASSERT_EQ(r.exit_status, 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "revoke ok"), 3) << r.Report();
    EXPECT_EQ(CountLines(r.output, "control_by_ucx=0 "), sockets ? 3 : 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "by_verbs=0 received_by_verbs=0"), 3) << r.Report();
  }
}

TEST(DetectorTest, NoFaultNoSuspicion) {
  const auto r = RunWorker(4, {"quiet", "--seconds", "1"}, kTolerant);
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "quiet ok"), 4) << r.Report();
}

TEST(DetectorTest, NoFaultNoSuspicionWithTheDefaults) {
  if (kSanitizedBuild) GTEST_SKIP() << "default 20 ms timeout: too tight for a sanitizer build";
  const auto r = RunWorker(4, {"quiet", "--seconds", "1"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "quiet ok"), 4) << r.Report();
}

TEST(DetectorTest, WithoutTheThreadPollDrivesIt) {
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_PROGRESS_THREAD=n");
  const auto r = RunWorker(3, {"quiet", "--seconds", "1"}, env);
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "quiet ok"), 3) << r.Report();
}

TEST(DetectorTest, ATimeoutNotAboveTwicePeriodIsRefusedByName) {
  const auto r = RunWorker(1, {"quiet", "--seconds", "0.1"},
                           {"RFT_HEARTBEAT_PERIOD=2ms", "RFT_HEARTBEAT_TIMEOUT=3ms"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_NE(r.output.find("RFT_HEARTBEAT_TIMEOUT"), std::string::npos) << r.Report();
}

}  // namespace
}  // namespace rft::testing
