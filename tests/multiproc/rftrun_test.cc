// rftrun and the bootstrap client, end to end: real processes, real PMIx, real signals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/bootstrap_worker";

std::vector<std::string> Job(std::vector<std::string> rftrun_args,
                             const std::vector<std::string>& worker_args) {
  rftrun_args.push_back(Runfile(kWorker));
  rftrun_args.insert(rftrun_args.end(), worker_args.begin(), worker_args.end());
  return rftrun_args;
}

class ExchangeTest : public ::testing::TestWithParam<int> {};

TEST_P(ExchangeTest, EveryRankSeesEveryAddress) {
  const int n = GetParam();
  const auto r = RunCommand("tools/rftrun/rftrun",
                            Job({"-n", std::to_string(n), "--timeout", "40"}, {"exchange"}),
                            std::chrono::seconds(60), {"RFT_PMIX_TIMEOUT=1s"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=" + std::to_string(n)), n) << r.Report();
  for (int rank = 0; rank < n; ++rank) {
    EXPECT_EQ(CountLines(r.output, "[" + std::to_string(rank) + "] exchange ok"), 1) << r.Report();
  }
  // 2 cores here: more than 2 ranks is oversubscription, and the job says so.
  EXPECT_EQ(CountLines(r.output, "oversubscribed=1"), n > 2 ? n : 0) << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExchangeTest, ::testing::Values(1, 2, 4, 8));

class KillTest : public ::testing::TestWithParam<int> {};

TEST_P(KillTest, EverySurvivorLearnsOfTheKilledRankAndTheJobSucceeds) {
  const int n = GetParam();
  const std::string victim = std::to_string(n - 1);
  const auto r =
      RunRftrun(Job({"-n", std::to_string(n), "--ft", "--timeout", "40", "--kill", victim + "@0.8"},
                    {"failures", "--victims", victim}));
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {" + victim + "}"), n - 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank " + victim + " failed (killed by signal 9 (SIGKILL))"),
            n - 1)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank " + victim + " was killed by signal 9 (SIGKILL)"), 1)
      << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, KillTest, ::testing::Values(2, 4, 8));

TEST(RftrunTest, TwoKillsAreBothReported) {
  const auto r =
      RunRftrun(Job({"-n", "4", "--ft", "--timeout", "40", "--kill", "1@0.8", "--kill", "3@1.0"},
                    {"failures", "--victims", "1,3"}));
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {1,3}"), 2) << r.Report();
}

TEST(RftrunTest, WithoutFtAKillEndsTheJob) {
  const auto r = RunRftrun(Job({"-n", "3", "--timeout", "40", "--kill", "1@0.8"}, {"sleep", "30"}));
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_LT(r.seconds, 15) << r.Report();
  EXPECT_EQ(CountLines(r.output,
                       "rank 1 was killed by signal 9 (SIGKILL), injected by --kill; the "
                       "job was ended (run with --ft to keep it going)"),
            1)
      << r.Report();
}

TEST(RftrunTest, StoppedRankIsKilledOnceTheOthersFinish) {
  const auto r =
      RunRftrun(Job({"-n", "3", "--ft", "--timeout", "40", "--stop", "2@0.1"}, {"sleep", "1"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_LT(r.seconds, 15) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 2 was killed by signal 9 (SIGKILL), injected by --stop"), 1)
      << r.Report();
}

TEST(RftrunTest, TimeoutKillsTheJob) {
  const auto r = RunRftrun(Job({"-n", "2", "--timeout", "1"}, {"sleep", "60"}));
  EXPECT_EQ(r.exit_status, 124) << r.Report();
  EXPECT_LT(r.seconds, 10) << r.Report();
  EXPECT_GE(CountLines(r.output, "rftrun: timeout: the job ran longer than 1"), 1) << r.Report();
}

TEST(RftrunTest, AbortOfASubsetKillsOnlyThatSubset) {
  const auto r =
      RunRftrun(Job({"-n", "4", "--ft", "--timeout", "40"}, {"abort-subset", "--victims", "2,3"}));
  EXPECT_EQ(r.exit_status, 5) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {2-3}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "[0] abort of {2-3} returned"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "aborted rank(s) 2,3 with status 5"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

TEST(RftrunTest, AbortOfTheJobEndsItWithTheAbortStatus) {
  const auto r = RunRftrun(Job({"-n", "3", "--ft", "--timeout", "40"}, {"abort-all"}));
  EXPECT_EQ(r.exit_status, 7) << r.Report();
  EXPECT_LT(r.seconds, 15) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 1 aborted the job with status 7: test aborts the job"), 1)
      << r.Report();
}

TEST(RftrunTest, NonZeroExitOfASurvivorIsTheJobStatus) {
  const auto r = RunRftrun(Job({"-n", "3", "--ft", "--timeout", "40"}, {"exit", "3"}));
  EXPECT_EQ(r.exit_status, 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 1 exited with status 3"), 1) << r.Report();
}

TEST(RftrunTest, SpawnStartsANewJob) {
  const auto r = RunRftrun(Job({"-n", "2", "--timeout", "40"}, {"spawn"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "spawned namespace"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "spawned child 0 of 2 up"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "spawned child 1 of 2 up"), 1) << r.Report();
}

TEST(RftrunTest, OutputIsTaggedWithTheRankUnlessAskedNotTo) {
  auto r = RunRftrun(Job({"-n", "2"}, {"no-pmix"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "[0] no-pmix ran"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "[1] no-pmix ran"), 1) << r.Report();
  r = RunRftrun(Job({"-n", "2", "--no-tag-output"}, {"no-pmix"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "no-pmix ran"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] no-pmix ran"), 0) << r.Report();
}

TEST(RftrunTest, BadUsageIsAClearErrorWithStatus2) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"-n", "2"}, "missing PROGRAM"},
      {{"/bin/true"}, "missing -n N"},
      {{"-n", "0", "/bin/true"}, "-n \"0\": expected a process count from 1 to 4096"},
      {{"-n", "4", "--kill", "9@1", "/bin/true"}, "--kill rank 9: no such rank in a job of 4"},
      {{"-n", "4", "--stop", "1@soon", "/bin/true"}, "--stop \"1@soon\": expected RANK@SECONDS"},
      {{"-n", "1", "--frobnicate", "/bin/true"}, "unknown option \"--frobnicate\""},
      {{"-n", "1", "no-such-program-rft"}, "program \"no-such-program-rft\": not found in PATH"},
  };
  for (const Case& c : cases) {
    const auto r = RunRftrun(c.args, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_status, 2) << r.Report();
    EXPECT_GE(CountLines(r.output, c.message), 1) << "expected: " << c.message << "\n"
                                                  << r.Report();
  }
}

TEST(BootstrapTest, OutsideALauncherInitSaysWhatToDo) {
  const auto r = RunCommand(kWorker, {"exchange"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_status, 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "no PMIx launcher: start this program with rftrun"), 1)
      << r.Report();
}

TEST(BootstrapTest, BadTimeoutSettingIsReportedByName) {
  const auto r = RunRftrun({"-n", "1", "--timeout", "20", Runfile(kWorker), "exchange"},
                           std::chrono::seconds(30));
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  const auto bad = RunCommand("tools/rftrun/rftrun",
                              {"-n", "1", "--timeout", "20", Runfile(kWorker), "exchange"},
                              std::chrono::seconds(30), {"RFT_PMIX_TIMEOUT=soon"});
  EXPECT_EQ(bad.exit_status, 3) << bad.Report();
  EXPECT_EQ(CountLines(bad.output, "RFT_PMIX_TIMEOUT"), 1) << bad.Report();
}

}  // namespace
}  // namespace rft::testing
