// Intercommunicators of the C API (rft.h) across real processes under rftrun
// (intercomm_worker.c): groups of 2 and 3 joined by rft_intercomm_create; point-to-point, every
// intercommunicator collective, dup and merge checked with every member alive; then a member of
// one group killed, and the revocation, agreement, failure view and shrink spanning both groups.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

ScenarioResult RunWorker(const std::string& mode, const std::vector<std::string>& extra = {},
                         const std::vector<std::string>& launcher = {}) {
  std::vector<std::string> args = {"-n", "5", "--ft", "--timeout", "60"};
  args.insert(args.end(), launcher.begin(), launcher.end());
  args.push_back(Runfile("tests/multiproc/intercomm_worker"));
  args.push_back(mode);
  args.insert(args.end(), extra.begin(), extra.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(70), TolerantHeartbeats());
}

// The survivors' lines "churn ok local L remote R": how many have L + R == `members`.
int ChurnLines(const std::string& output, int members) {
  int good = 0;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    int local = 0, remote = 0;
    const size_t at = line.find("churn ok local ");
    if (at != std::string::npos &&
        std::sscanf(line.c_str() + at, "churn ok local %d remote %d", &local, &remote) == 2) {
      good += local + remote == members;
    }
  }
  return good;
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
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// A member of the larger group dies before the creation: its group cannot pool its proposals,
// its leader tells the other leader so, and every survivor's creation fails; none waits.
TEST(IntercommTest, ACreationWithADeadMemberFailsAtEverySurvivor) {
  const auto r = RunWorker("create-fault");
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "create-fault ok"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// Two members killed by the launcher at random instants (the seed is printed) while the groups
// run allreduces over the intercommunicator, one agreement per step deciding whether to recover
// (revoke + shrink) and whether to go on: the 3 survivors end with one intercommunicator of 3.
// The victims are one of each group or both of the larger one (never A's two: a group must
// survive for the intercommunicator to mean anything).
TEST(IntercommTest, TwoKillsAtRandomInstantsAreRecoveredInEitherGroup) {
  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  const std::pair<int, int> victims[] = {{1, 3}, {3, 4}, {1, 4}, {0, 2}};
  for (int round = 0; round < 3; ++round) {
    const auto [a, b] = victims[random() % 4];
    // After the start-up and the intercommunicator's creation even of a sanitizer build on a
    // loaded machine (CI's ASan stage once saw a kill at 2.5 s land in the first split).
    std::uniform_real_distribution<double> instant(4.0, 6.0);
    char first[32], second[32];
    std::snprintf(first, sizeof first, "%d@%.2f", a, instant(random));
    std::snprintf(second, sizeof second, "%d@%.2f", b, instant(random));
    const std::string faults =
        "seed " + std::to_string(seed) + ": --kill " + first + " --kill " + second + "\n";
    const auto r = RunWorker("churn", {"9"}, {"--kill", first, "--kill", second});
    EXPECT_EQ(r.exit_status, 0) << faults << r.Report();  // rftrun's own kills
    EXPECT_EQ(ChurnLines(r.output, 3), 3) << faults << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << faults << r.Report();
  }
}

}  // namespace
}  // namespace rft::testing
