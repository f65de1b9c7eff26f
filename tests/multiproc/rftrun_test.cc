// rftrun and the bootstrap client, end to end: real processes, real PMIx, real signals.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
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

void ExpectEveryRankSeesEveryAddress(int n, const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {"-n", std::to_string(n), "--timeout", "40"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  const auto r = RunCommand("tools/rftrun/rftrun", Job(args, {"exchange"}),
                            std::chrono::seconds(60), {"RFT_PMIX_TIMEOUT=1s"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=" + std::to_string(n)), n) << r.Report();
  for (int rank = 0; rank < n; ++rank) {
    EXPECT_EQ(CountLines(r.output, "[" + std::to_string(rank) + "] exchange ok"), 1) << r.Report();
  }
  // rftrun binds nobody: more ranks than the CPUs they share is oversubscription, whether the
  // launcher says it or the ranks judge it from their masks.
  EXPECT_EQ(CountLines(r.output, "oversubscribed=1"), n > UsableCpus() ? n : 0) << r.Report();
}

TEST_P(ExchangeTest, EveryRankSeesEveryAddress) { ExpectEveryRankSeesEveryAddress(GetParam(), {}); }

// As under launchers that give no rft keys: the ranks draw their job token and judge
// oversubscription from each other's CPU masks, in one fence.
TEST_P(ExchangeTest, WithPlainPmixTheRanksWorkItOutThemselves) {
  ExpectEveryRankSeesEveryAddress(GetParam(), {"--plain-pmix"});
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExchangeTest, ::testing::Values(1, 2, 4, 8));

class KillTest : public ::testing::TestWithParam<int> {};

TEST_P(KillTest, EverySurvivorLearnsOfTheKilledRankAndTheJobSucceeds) {
  const int n = GetParam();
  const std::string victim = std::to_string(n - 1);
  // The victim has the launcher kill it once the exchange is done: a kill on a timer could land
  // before a loaded machine finished starting up.
  const auto r = RunRftrun(Job({"-n", std::to_string(n), "--ft", "--timeout", "40"},
                               {"failures", "--victims", victim, "--end", "self-abort"}));
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {" + victim + "}"), n - 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank " + victim + " failed (killed by signal 9 (SIGKILL))"),
            n - 1)
      << r.Report();
  EXPECT_EQ(CountLines(r.output,
                       "rank " + victim + " was killed by signal 9 (SIGKILL), aborted on request"),
            1)
      << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, KillTest, ::testing::Values(2, 4, 8));

TEST(RftrunTest, TwoKillsAreBothReported) {
  const auto r = RunRftrun(Job({"-n", "4", "--ft", "--timeout", "40"},
                               {"failures", "--victims", "1,3", "--end", "self-abort"}));
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {1,3}"), 2) << r.Report();
}

// Under --ft the survivors go on, but a crash rftrun did not cause is still the job's status:
// scripts and CI must see it.
TEST(RftrunTest, ACrashUnderFtIsTheJobStatus) {
  const auto r = RunRftrun(Job({"-n", "3", "--ft", "--timeout", "40"},
                               {"failures", "--victims", "2", "--end", "crash"}));
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {2}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 2 was killed by signal 9 (SIGKILL); exit status 137"), 1)
      << r.Report();
}

// A process that exits with status 0 but never called PMIx_Finalize left its peers without a
// word: after the grace its notice could have used, it is a failure every survivor learns of.
TEST(RftrunTest, AnExitWithoutFinalizeIsAFailureToThePeers) {
  const auto r = RunRftrun(Job({"-n", "3", "--ft", "--timeout", "40"},
                               {"failures", "--victims", "2", "--end", "exit0"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {2}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rftrun: rank 2 exited without calling PMIx_Finalize"), 1)
      << r.Report();
}

// A notice that comes after the exit (libpmix's client waits only 2 s for the answer to its
// PMIx_Finalize, then exits anyway) is the rule of tests/unit/rftrun/finalize_grace_test.cc,
// tested there with the test's clock.

TEST(RftrunTest, AnAbortStatusAbove255IsNotSuccess) {
  const auto r = RunRftrun(Job({"-n", "2", "--ft", "--timeout", "40"}, {"abort-all", "256"}));
  EXPECT_EQ(r.exit_status, 255) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 1 aborted the job with status 256"), 1) << r.Report();
}

// Segments of a rank that died before unlinking them are removed by the launcher at its end.
TEST(RftrunTest, TheLauncherRemovesTheJobsSharedMemoryFiles) {
  const auto r = RunRftrun(Job({"-n", "2", "--ft", "--timeout", "40", "--verbose"}, {"leave-shm"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  const size_t at = r.output.find("left /dev/shm");
  ASSERT_NE(at, std::string::npos) << r.Report();
  const std::string path = r.output.substr(at + 5, r.output.find('\n', at) - at - 5);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << path << " is still there\n" << r.Report();
  EXPECT_EQ(CountLines(r.output, "removed 2 shared-memory file(s) the job left"), 1) << r.Report();
}

// The time bounds below only tell the mechanism under test from the fallback it must beat (the
// ranks' sleep, rftrun's --timeout), with room for a slow start: rftrun's start-up alone took
// ~9 s under ASan when hwloc's PCI discovery parsed pci.ids (.bazelrc now skips it there).
TEST(RftrunTest, WithoutFtAKillEndsTheJob) {
  const auto r = RunRftrun(Job({"-n", "3", "--timeout", "40", "--kill", "1@0.8"}, {"sleep", "30"}));
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_LT(r.seconds, 25) << r.Report();
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
  EXPECT_LT(r.seconds, 30) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 2 was killed by signal 9 (SIGKILL), injected by --stop"), 1)
      << r.Report();
}

// libpmix's server reads the connection handshake with blocking calls: a rank stopped in the
// middle of it froze the server, and with it every other rank's PMIx_Init or PMIx_Finalize,
// until --timeout (seen once in CI under load). A stop due before the handshake waits for it.
TEST(RftrunTest, StopDueBeforeThePmixHandshakeWaitsForIt) {
  const auto r = RunRftrun(
      Job({"-n", "3", "--ft", "--timeout", "40", "--verbose", "--stop", "2@0"}, {"sleep", "1"}));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_LT(r.seconds, 30) << r.Report();
  EXPECT_EQ(CountLines(r.output, "--stop 2 waits for the rank's PMIx handshake to end"), 1)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "sent SIGSTOP to rank 2"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 2 was killed by signal 9 (SIGKILL), injected by --stop"), 1)
      << r.Report();
}

TEST(RftrunTest, TimeoutKillsTheJob) {
  const auto r = RunRftrun(Job({"-n", "2", "--timeout", "1"}, {"sleep", "60"}));
  EXPECT_EQ(r.exit_status, 124) << r.Report();
  EXPECT_LT(r.seconds, 30) << r.Report();
  EXPECT_GE(CountLines(r.output, "rftrun: timeout: the job ran longer than 1"), 1) << r.Report();
}

// A hang ended by --timeout says where every rank waited: gdb's backtrace of each live rank's
// threads, the worker's sleep in it, before the kill.
TEST(RftrunTest, TimeoutWithStackTracesPrintsEveryRanksStacks) {
  const auto r =
      RunRftrun(Job({"-n", "2", "--timeout", "2", "--get-stack-traces"}, {"sleep", "60"}),
                std::chrono::seconds(90));
  EXPECT_EQ(r.exit_status, 124) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rftrun: stack traces of rank 0 (pid"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rftrun: stack traces of rank 1 (pid"), 1) << r.Report();
  // Each rank's main thread is inside the sleep the worker was asked for.
  EXPECT_GE(CountLines(r.output, "nanosleep"), 2) << r.Report();
  EXPECT_GE(CountLines(r.output, "main ("), 2) << r.Report();
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
  EXPECT_LT(r.seconds, 30) << r.Report();
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

// Replacements join the job: they take the next job ranks, speak with the parents' token, read
// the parents' values and are read by them, and a replacement's abnormal end reaches every
// parent as a termination event under its job rank.
TEST(RftrunTest, SpawnedReplacementsJoinTheJobRankSpace) {
  const auto r = RunRftrun(Job({"-n", "2", "--ft", "--timeout", "40"}, {"replace"}));
  EXPECT_EQ(CountLines(r.output, "replacement 2 of 4 joined"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "replacement 3 of 4 joined"), 1) << r.Report();
  for (const char* rank : {"0", "1"}) {
    for (const char* child : {"2", "3"}) {
      EXPECT_EQ(CountLines(r.output, std::string("parent ") + rank + " read replacement " + child),
                1)
          << r.Report();
    }
    EXPECT_EQ(CountLines(r.output, std::string("parent ") + rank +
                                       " saw job rank 3 end: exited with status 7"),
              1)
        << r.Report();
  }
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
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
      {{"-n", "1", "--get-stack-traces", "/bin/true"},
       "--get-stack-traces: takes effect only with --timeout SEC"},
      {{"-n", "1", "no-such-program-rft"}, "program \"no-such-program-rft\": not found in PATH"},
      {{"-n", "1", "--initial-errhandler", "mpi_errors_ignore", "/bin/true"},
       "--initial-errhandler \"mpi_errors_ignore\": expected mpi_errors_are_fatal, "
       "mpi_errors_abort or mpi_errors_return"},
  };
  for (const Case& c : cases) {
    const auto r = RunRftrun(c.args, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_status, 2) << r.Report();
    EXPECT_GE(CountLines(r.output, c.message), 1) << "expected: " << c.message << "\n"
                                                  << r.Report();
  }
}

// A dead (not a zombie awaiting its reaper) process.
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close_paren = line.rfind(')');
  return close_paren != std::string::npos && line.size() > close_paren + 2 &&
         line[close_paren + 2] == 'Z';
}

TEST(RftrunTest, JobDiesWithRftrun) {
  int output_fd = -1;
  std::string command;
  const pid_t rftrun = StartCommand("tools/rftrun/rftrun",
                                    {"-n", "2", "--timeout", "60", Runfile(kWorker), "pid-sleep"},
                                    {}, &output_fd, &command);
  ASSERT_GT(rftrun, 0) << command;
  // Read "[r] pid N" from both ranks, bounded.
  std::vector<pid_t> ranks;
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ranks.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{output_fd, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buffer[512];
    const ssize_t n = read(output_fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
    ranks.clear();
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      int pid = 0;
      if (std::sscanf(line.c_str(), "[%*d] pid %d", &pid) == 1) ranks.push_back(pid);
    }
  }
  if (ranks.size() < 2) kill(-rftrun, SIGKILL);
  ASSERT_EQ(ranks.size(), 2u) << output;

  kill(rftrun, SIGKILL);  // only rftrun: its children must follow by themselves
  int status = 0;
  waitpid(rftrun, &status, 0);
  bool all_gone = false;
  for (int i = 0; i < 500 && !all_gone; ++i) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {  // in case this test is their new reaper
    }
    all_gone = Gone(ranks[0]) && Gone(ranks[1]);
    if (!all_gone) usleep(10000);
  }
  if (!all_gone) kill(-rftrun, SIGKILL);  // leave nothing behind, then fail
  close(output_fd);
  EXPECT_TRUE(all_gone) << "ranks " << ranks[0] << " and " << ranks[1]
                        << " outlived a SIGKILLed rftrun\n"
                        << output;
}

TEST(BootstrapTest, OutsideALauncherInitSaysWhatToDo) {
  const auto r = RunCommand(kWorker, {"exchange"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_status, 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "no PMIx launcher: start this program with rftrun"), 1)
      << r.Report();
}

TEST(BootstrapTest, BadTimeoutSettingIsReportedByName) {
  const auto good = RunCommand("tools/rftrun/rftrun",
                               {"-n", "1", "--timeout", "20", Runfile(kWorker), "exchange"},
                               std::chrono::seconds(30), {"RFT_PMIX_TIMEOUT=1500ms"});
  ASSERT_EQ(good.exit_status, 0) << good.Report();
  EXPECT_EQ(CountLines(good.output, "warning"), 0) << good.Report();
  const auto bad = RunCommand("tools/rftrun/rftrun",
                              {"-n", "1", "--timeout", "20", Runfile(kWorker), "exchange"},
                              std::chrono::seconds(30), {"RFT_PMIX_TIMEOUT=soon"});
  EXPECT_EQ(bad.exit_status, 3) << bad.Report();
  // rftrun warns once up front; the rank's own error names the variable too.
  EXPECT_EQ(CountLines(bad.output, "rftrun: warning: RFT_PMIX_TIMEOUT=\"soon\""), 1)
      << bad.Report();
  EXPECT_EQ(CountLines(bad.output, "[0] FAILED: RFT_ERR_ARG: RFT_PMIX_TIMEOUT=\"soon\""), 1)
      << bad.Report();
}

}  // namespace
}  // namespace rft::testing
