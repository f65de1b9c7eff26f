// Every collective of the C API (rft.h), blocking and non-blocking, across real processes under
// rftrun (collectives_worker.c): results checked with every member alive at several sizes
// (powers of two and not), a killed member, and a revoke.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/collectives_worker";
const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args) {
  std::vector<std::string> args = {"-n", std::to_string(n), "--ft", "--timeout", "100"};
  args.push_back(Runfile(kWorker));
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(110), kTolerant);
}

TEST(CollectivesTest, EveryCollectiveGivesTheRightResultAtEverySize) {
  for (int n : {1, 2, 3, 4, 5, 8}) {
    const auto r = RunWorker(n, {"all"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "all ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

// The victim dies after 20 allreduces; the survivors' next non-blocking allreduce completes with
// RFT_ERR_PROC_FAILED, and later collectives are refused at once.
TEST(CollectivesTest, ASurvivorsCollectivesReturnProcFailed) {
  for (const auto& [n, victim] : {std::pair{2, 1}, std::pair{4, 2}, std::pair{5, 0}}) {
    const auto r = RunWorker(n, {"fail", std::to_string(victim)});
    EXPECT_EQ(r.exit_status, 128 + 9) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "fail ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

TEST(CollectivesTest, ARevokeEndsANonBlockingCollectiveEverywhere) {
  for (int n : {2, 4}) {
    const auto r = RunWorker(n, {"revoke"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "revoke ok"), n) << r.Report();
  }
}

}  // namespace
}  // namespace rft::testing
