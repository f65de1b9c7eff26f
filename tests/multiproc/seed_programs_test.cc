// The seed programs of examples/ under rftrun: safe_split.c, row_column.c and all_failures.c,
// with every process alive and with processes killed (by themselves at a point the program
// chooses, or by the launcher at an instant it does not know). Each survivor's final line is
// compared with the one computed here from who survived: the exact sums over each new
// communicator, and the same failed set at every survivor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunExample(const std::string& example, int n,
                          const std::vector<std::string>& example_args,
                          const std::vector<std::string>& launcher_args = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n),   "--ft", "--timeout",
                                   "60", "--get-stack-traces"};
  args.insert(args.end(), launcher_args.begin(), launcher_args.end());
  args.push_back(Runfile("examples/" + example));
  args.insert(args.end(), example_args.begin(), example_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(130), kTolerant);
}

// The same seed programs in their MPI form (examples/mpi/), under rft's mpiexec with fault
// tolerance: they print the same lines as their rft.h twins.
ScenarioResult RunMpiExample(const std::string& example, int n,
                             const std::vector<std::string>& example_args,
                             const std::vector<std::string>& launcher_args = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n),   "--with-ft", "ulfm", "--timeout",
                                   "60", "--get-stack-traces"};
  args.insert(args.end(), launcher_args.begin(), launcher_args.end());
  args.push_back(Runfile("examples/mpi/" + example));
  args.insert(args.end(), example_args.begin(), example_args.end());
  return RunCommand("ulfm_api/mpi/sdk/bin/mpiexec", args, std::chrono::seconds(130), kTolerant);
}

// The lines of `output` that contain `marker`, from the marker on (without rftrun's "[rank] "),
// sorted: the order in which the processes printed is not the program's.
std::vector<std::string> LinesFrom(const std::string& output, const std::string& marker) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find(marker);
    if (at != std::string::npos) lines.push_back(line.substr(at));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The world ranks 0..n-1 without `dead`, in order: the shrunken communicator's members.
std::vector<int> Survivors(int n, const std::set<int>& dead) {
  std::vector<int> alive;
  for (int r = 0; r < n; ++r) {
    if (dead.count(r) == 0) alive.push_back(r);
  }
  return alive;
}

// What each survivor of safe_split prints: the parent (the survivors, in world order) split by
// parent rank % 2, each half summing its world ranks.
std::vector<std::string> SafeSplitLines(int n, const std::set<int>& dead) {
  const std::vector<int> alive = Survivors(n, dead);
  const int size = static_cast<int>(alive.size());
  std::vector<std::string> lines;
  for (int i = 0; i < size; ++i) {
    long sum = 0;
    int members = 0;
    for (int j = i % 2; j < size; j += 2, ++members) sum += alive[j];
    const std::string s = std::to_string(sum);
    lines.push_back("safe_split: rank " + std::to_string(alive[i]) + " ok: color " +
                    std::to_string(i % 2) + ", " + std::to_string(members) + " members, sum " + s +
                    " (expected " + s + "), " + std::to_string(size) + " of " + std::to_string(n) +
                    " processes after " + std::to_string(dead.empty() ? 0 : 1) + " shrink(s)");
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(SeedProgramsTest, SafeSplitWithEveryProcessAlive) {
  for (int n : {1, 2, 4}) {
    const auto r = RunExample("safe_split", n, {});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "safe_split: rank"), SafeSplitLines(n, {})) << r.Report();
  }
}

// The victim dies just before its split: nobody's split can succeed (each needs the victim's
// color), the agreement says so everywhere, and the survivors split the shrunken parent: the
// halves are those of the survivors' order, not of the world's. Victims: the parent's rank 0,
// its last rank, a middle one (which moves every later process to the other half).
TEST(SeedProgramsTest, SafeSplitRetriesOverTheSurvivors) {
  for (const auto& [n, victim] : {std::pair{4, 0}, std::pair{4, 3}, std::pair{5, 2}}) {
    const auto r = RunExample("safe_split", n, {"--victim", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "safe_split: rank"), SafeSplitLines(n, {victim})) << r.Report();
  }
}

// What each survivor of row_column prints: the survivors in rows of w = ceil(sqrt(size)), the
// last row ragged; row and column sums of world ranks.
std::vector<std::string> RowColumnLines(int n, const std::set<int>& dead) {
  const std::vector<int> alive = Survivors(n, dead);
  const int size = static_cast<int>(alive.size());
  int width = 1;
  while (width * width < size) ++width;
  std::vector<std::string> lines;
  for (int i = 0; i < size; ++i) {
    long row_sum = 0, column_sum = 0;
    for (int j = 0; j < size; ++j) {
      if (j / width == i / width) row_sum += alive[j];
      if (j % width == i % width) column_sum += alive[j];
    }
    const std::string row = std::to_string(row_sum), column = std::to_string(column_sum);
    lines.push_back("row_column: rank " + std::to_string(alive[i]) + " ok: " +
                    std::to_string(size) + " processes in rows of " + std::to_string(width) +
                    ", row " + std::to_string(i / width) + " sum " + row + " (expected " + row +
                    "), column " + std::to_string(i % width) + " sum " + column + " (expected " +
                    column + "), after " + std::to_string(dead.empty() ? 0 : 1) + " shrink(s)");
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Square, ragged (5: rows of 3 and 2; 7: rows of 3, 3, 1) and degenerate grids.
TEST(SeedProgramsTest, RowColumnWithEveryProcessAlive) {
  for (int n : {1, 2, 4, 5, 7}) {
    const auto r = RunExample("row_column", n, {});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "row_column: rank"), RowColumnLines(n, {})) << r.Report();
  }
}

// The victim dies right before creating its row and column: one agreement discards both
// everywhere, and the grid is laid out again over the survivors (6 -> 5: rows of 3 then 2;
// 5 -> 4: a 2 x 2 square; 2 -> 1). Victims: world rank 0, the last rank, middle ones.
TEST(SeedProgramsTest, RowColumnIsRebuiltOverTheSurvivors) {
  for (const auto& [n, victim] :
       {std::pair{6, 0}, std::pair{6, 5}, std::pair{6, 3}, std::pair{5, 2}, std::pair{2, 1}}) {
    const auto r = RunExample("row_column", n, {"--victim", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "row_column: rank"), RowColumnLines(n, {victim})) << r.Report();
  }
}

// all_failures's checks: every survivor prints the same failed set, that of `dead`, and its
// communicator of survivors sums their world ranks exactly.
void ExpectTheSameFailedSetEverywhere(const ScenarioResult& r, int n, const std::set<int>& dead) {
  const std::vector<int> alive = Survivors(n, dead);
  const int survivors = static_cast<int>(alive.size());
  std::string failed = "all_failures: failed:";
  for (int v : dead) failed += " " + std::to_string(v);
  if (dead.empty()) failed += " none";
  EXPECT_EQ(LinesFrom(r.output, "all_failures: failed:"),
            std::vector<std::string>(survivors, failed))
      << r.Report();
  long sum = 0;
  for (int v : alive) sum += v;
  const std::string s = std::to_string(sum);
  const std::string tail = " ok: " + std::to_string(survivors) + " of " + std::to_string(n) +
                           " processes survive, sum " + s + " (expected " + s + ");";
  for (int v : alive) {
    EXPECT_EQ(CountLines(r.output, "all_failures: rank " + std::to_string(v) + tail), 1)
        << "rank " << v << "\n"
        << r.Report();
  }
  EXPECT_EQ(CountLines(r.output, "all_failures: rank "), survivors) << r.Report();
}

TEST(SeedProgramsTest, AllFailuresWithEveryProcessAlive) {
  for (int n : {1, 3, 4}) {
    const auto r = RunExample("all_failures", n, {});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    ExpectTheSameFailedSetEverywhere(r, n, {});
  }
}

// The victims die together after a barrier; the survivors may each know some of them only when
// they shrink, and still print the same complete set. One victim in each role, then several,
// rank 0 among them or not.
TEST(SeedProgramsTest, AllFailuresGivesEverySurvivorTheSameCompleteSet) {
  const std::vector<std::pair<int, std::set<int>>> cases = {
      {5, {0}}, {5, {4}}, {5, {2}}, {5, {1, 3}}, {6, {0, 2, 5}}, {4, {1, 2, 3}}};
  for (const auto& [n, dead] : cases) {
    std::string victims;
    for (int v : dead) victims += (victims.empty() ? "" : ",") + std::to_string(v);
    const auto r = RunExample("all_failures", n, {"--victims", victims});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victims=" << victims << "\n" << r.Report();
    ExpectTheSameFailedSetEverywhere(r, n, dead);
  }
}

// The launcher kills rank 1 at 3 s, inside 8 s of allreduce rounds, at an instant the program
// does not know (in a round, between two): the survivors still print one failed set, {1}. A kill
// that lands after the job ended (it would not: the rounds outlast it) leaves the set empty.
TEST(SeedProgramsTest, AllFailuresAgreesWheneverTheLauncherKills) {
  const auto r = RunExample("all_failures", 4, {"--busy", "8"}, {"--kill", "1@3"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();  // a death rftrun caused leaves the status 0
  const bool killed = CountLines(r.output, "injected by --kill") == 1;
  ExpectTheSameFailedSetEverywhere(r, 4, killed ? std::set<int>{1} : std::set<int>{});
}

// MPIX_Comm_split_safe and MPIX_Comm_failures_allget as MPI programs: the same exact lines, with
// the victims dying at the program's chosen point and by the launcher at an instant it does not
// know. mpiexec --with-ft ulfm exits 0 when the survivors do (Open MPI 5's verdict).
TEST(SeedProgramsTest, MpiSafeSplitRetriesOverTheSurvivors) {
  for (const auto& [n, victim] : {std::pair{4, 0}, std::pair{5, 2}}) {
    const auto r = RunMpiExample("safe_split", n, {"--victim", std::to_string(victim)});
    EXPECT_EQ(r.exit_status, 0) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "safe_split: rank"), SafeSplitLines(n, {victim})) << r.Report();
  }
  const auto alive = RunMpiExample("safe_split", 4, {});
  EXPECT_EQ(alive.exit_status, 0) << alive.Report();
  EXPECT_EQ(LinesFrom(alive.output, "safe_split: rank"), SafeSplitLines(4, {})) << alive.Report();
}

TEST(SeedProgramsTest, MpiAllFailuresGivesEverySurvivorTheSameSet) {
  const auto r = RunMpiExample("all_failures", 5, {"--victims", "1,3"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  ExpectTheSameFailedSetEverywhere(r, 5, {1, 3});
  const auto killed = RunMpiExample("all_failures", 4, {"--busy", "8"}, {"--kill", "1@3"});
  EXPECT_EQ(killed.exit_status, 0) << killed.Report();
  const bool was_killed = CountLines(killed.output, "injected by --kill") == 1;
  ExpectTheSameFailedSetEverywhere(killed, 4, was_killed ? std::set<int>{1} : std::set<int>{});
}

// What comm_replace prints: every rank of n once, summing 0..n-1; the ranks in `replaced` from
// the new process that took the place (sorted, as LinesFrom gives them).
std::vector<std::string> CommReplaceLines(int n, const std::set<int>& replaced) {
  std::vector<std::string> lines;
  for (int r = 0; r < n; ++r) {
    lines.push_back("comm_replace: rank " + std::to_string(r) + " of " + std::to_string(n) +
                    " ok: sum " + std::to_string(n * (n - 1) / 2) +
                    (replaced.count(r) != 0 ? " (a replacement)" : ""));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The seed's MPIX_Comm_replace as an MPI program (shrink, spawn, agree, merge, split): the dead
// ranks' places go to new processes and every rank keeps its number.
TEST(SeedProgramsTest, MpiCommReplaceGivesTheDeadRanksToNewProcesses) {
  for (const auto& [list, victims] :
       {std::pair<std::string, std::set<int>>{"2", {2}}, {"0,3", {0, 3}}, {"", {}}}) {
    const auto r = RunMpiExample(
        "comm_replace", 4,
        list.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--victims", list});
    EXPECT_EQ(r.exit_status, 0) << "victims " << list << "\n" << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "comm_replace: rank"), CommReplaceLines(4, victims))
        << "victims " << list << "\n"
        << r.Report();
  }
}

// Two faults at random instants (the seed is printed) while the members run allreduce rounds:
// two launcher kills, then a kill and a hang (--stop: the detector declares the process failed
// and kills it). Each is replaced, new processes join the rounds, and at the end every rank of
// 4 is held once.
TEST(SeedProgramsTest, MpiCommReplaceRecoversFromTwoFaultsAtRandomInstants) {
  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  // After the start-up even of a sanitizer build on a loaded machine (a kill during PMIx's
  // start-up fence is libpmix's known hang, docs/rftrun.md), well inside the rounds.
  std::uniform_real_distribution<double> instant(3.5, 5.5);
  for (const char* second_fault : {"--kill", "--stop"}) {
    const int a = static_cast<int>(random() % 4);
    const int b = (a + 1 + static_cast<int>(random() % 3)) % 4;
    char first[32], second[32];
    std::snprintf(first, sizeof first, "%d@%.2f", a, instant(random));
    std::snprintf(second, sizeof second, "%d@%.2f", b, instant(random));
    const std::string faults = "seed " + std::to_string(seed) + ": --kill " + first + " " +
                               second_fault + " " + second + "\n";
    const auto r =
        RunMpiExample("comm_replace", 4, {"--busy", "10"}, {"--kill", first, second_fault, second});
    EXPECT_EQ(r.exit_status, 0) << faults << r.Report();
    EXPECT_EQ(LinesFrom(r.output, "comm_replace: rank"), CommReplaceLines(4, {a, b}))
        << faults << r.Report();
  }
}

}  // namespace
}  // namespace rft::testing
