// examples/checkin.c under rftrun: the check-in scheme's guarded agreement
// (rft_comm_agree_deadline) cuts off a rank stuck in a loop in any tree role, and the others go on
// with the exact total; an error reported by one rank stops every rank cleanly (each says why,
// status 3), unlike rft_abort (the job killed at once, nobody says anything); the launcher's kill
// at an unknown instant.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunCheckin(int n, const std::vector<std::string>& launcher_args,
                          const std::vector<std::string>& program_args) {
  std::vector<std::string> args = {"-n",  std::to_string(n),   "--ft", "--timeout",
                                   "100", "--get-stack-traces"};
  args.insert(args.end(), launcher_args.begin(), launcher_args.end());
  args.push_back(Runfile("examples/checkin"));
  args.insert(args.end(), program_args.begin(), program_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(170), kTolerant);
}

// "total X (exact X)" lines: survivors whose total is exact.
int ExactTotals(const std::string& output) {
  int exact = 0;
  size_t at = 0;
  while ((at = output.find("total ", at)) != std::string::npos) {
    const size_t open = output.find(" (exact ", at);
    const size_t close = output.find(')', open);
    if (open == std::string::npos || close == std::string::npos) break;
    if (output.substr(at + 6, open - at - 6) == output.substr(open + 8, close - open - 8)) ++exact;
    at = close;
  }
  return exact;
}

TEST(CheckinTest, EveryRankAliveChecksInEveryPhase) {
  for (int n : {1, 2, 4}) {
    const auto r = RunCheckin(n, {}, {"--phases", "30"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(ExactTotals(r.output), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "0 cut-off round(s)"), n) << r.Report();
  }
}

// A rank whose program loops forever at phase 3 (its control thread still runs): the others'
// check-in cuts it off (declared failed, killed by the launcher on request), every survivor names
// it, shrinks, and finishes with the exact total. Stuck as the root (0), an inner member (2 of 4:
// it has a child) and a leaf (3), and at n = 2; a 5-second budget makes the deadline 1 s.
TEST(CheckinTest, ARankStuckInALoopIsCutOffAndTheOthersFinish) {
  for (const auto& [n, stuck] :
       {std::pair{4, 0}, std::pair{4, 2}, std::pair{4, 3}, std::pair{2, 1}, std::pair{5, 4}}) {
    const std::string label = "n=" + std::to_string(n) + " stuck=" + std::to_string(stuck);
    const auto r = RunCheckin(
        n, {}, {"--phases", "10", "--budget", "5", "--stuck", std::to_string(stuck) + ":3"});
    // The stuck rank's death was asked for (fail-stop through the launcher): not a failure of the
    // job.
    EXPECT_EQ(r.exit_status, 0) << label << "\n" << r.Report();
    EXPECT_EQ(ExactTotals(r.output), n - 1) << label << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "phase 3: cut off or failed: " + std::to_string(stuck)), n - 1)
        << label << "\n"
        << r.Report();
    EXPECT_EQ(CountLines(r.output, "with " + std::to_string(n - 1) + " of " + std::to_string(n)),
              n - 1)
        << label << "\n"
        << r.Report();
  }
}

// Rank 1 reports an error before phase 2: every rank learns it from the same check-in and stops
// there, saying so (status 3 from the program); rft_abort instead kills the whole job at once.
TEST(CheckinTest, AnErrorStopsEveryRankCleanlyUnlikeAnAbort) {
  const auto clean = RunCheckin(4, {}, {"--phases", "10", "--error", "1:2"});
  EXPECT_EQ(clean.exit_status, 3) << clean.Report();
  EXPECT_EQ(CountLines(clean.output, "clean stop before phase 2: a rank reported an error"), 4)
      << clean.Report();
  EXPECT_EQ(ExactTotals(clean.output), 0) << clean.Report();

  const auto brutal = RunCheckin(4, {}, {"--phases", "10", "--abort", "1:2"});
  EXPECT_EQ(brutal.exit_status, 4) << brutal.Report();  // rft_abort's code
  EXPECT_EQ(CountLines(brutal.output, "clean stop"), 0) << brutal.Report();
  EXPECT_EQ(ExactTotals(brutal.output), 0) << brutal.Report();
}

// The launcher's kill at 1 s, inside a check-in, an allreduce, an agreement or a shrink: the
// survivors' totals are exact wherever it lands.
TEST(CheckinTest, TheTotalIsExactWheneverTheLauncherKills) {
  const auto r = RunCheckin(4, {"--kill", "2@1"}, {"--phases", "10000", "--budget", "90"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  const int survivors = CountLines(r.output, "injected by --kill") == 1 ? 3 : 4;
  EXPECT_EQ(ExactTotals(r.output), survivors) << r.Report();
}

}  // namespace
}  // namespace rft::testing
