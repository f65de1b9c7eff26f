// The public C API (rft.h) across real processes under rftrun: a C99 program (api_worker.c)
// checks the semantics with every member alive, ULFM's PROC_FAILED_PENDING rule with a killed
// process, revocation, the default fatal error handler, and finalisation after failures.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/api_worker";
const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args,
                         const std::vector<std::string>& rftrun_args = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n),   "--ft", "--timeout",
                                   "60", "--get-stack-traces"};
  args.insert(args.end(), rftrun_args.begin(), rftrun_args.end());
  args.push_back(Runfile(kWorker));
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(130), kTolerant);
}

TEST(ApiTest, EverythingWorksWithEveryMemberAlive) {
  for (int n : {1, 2, 3, 4}) {
    const auto r = RunWorker(n, {"basics"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "basics ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

// The seed scenario: Irecv(ANY) [A], Irecv(1) [B]; rank 2 fails; Waitall holds A
// (PROC_FAILED_PENDING) and B (PENDING); after the acknowledgement rank 1's two sends go to A,
// then B, in that order.
TEST(ApiTest, AnAnySourceReceiveIsHeldUntilTheFailureIsAcknowledged) {
  const auto r = RunWorker(3, {"pending"});
  ASSERT_EQ(r.exit_status, 128 + 9) << r.Report();  // rank 2 killed itself
  EXPECT_EQ(CountLines(r.output, "pending ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

TEST(ApiTest, ARevokeInterruptsEveryMember) {
  for (const auto& [n, origin] : {std::pair{2, 0}, std::pair{3, 2}, std::pair{4, 1}}) {
    const auto r = RunWorker(n, {"revoke", std::to_string(origin)});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "revoke ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

// The revoker's data-plane notice reached one member and the revoker died before its flood
// started (fault point revoke.one_notice): that member's relay still revokes the communicator
// at every survivor.
TEST(ApiTest, ARevocationOneMemberHeardReachesEverySurvivor) {
  std::vector<std::string> args = {"-n",          "4", "--ft", "--timeout", "60", Runfile(kWorker),
                                   "revoke-relay"};
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_FAULT_INJECT=revoke.one_notice@1");
  const auto r = RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(90), env);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // rank 1 died at the fault point
  EXPECT_EQ(CountLines(r.output, "revoke-relay ok"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// World's default handler is ERRORS_ARE_FATAL: the survivors' failed collective aborts them.
TEST(ApiTest, ErrorsAreFatalOnWorldByDefault) {
  const auto r = RunWorker(3, {"fatal"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_GE(CountLines(r.output, "fatal error on COMM_WORLD"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "fatal ok"), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// MPI-4's mpi_initial_errhandler: with rftrun --initial-errhandler mpi_errors_return, world
// and self start with ERRORS_RETURN, and a send to a rank past the end comes back as
// RFT_ERR_ARG; without the option, the same send ends the job through ERRORS_ARE_FATAL.
TEST(ApiTest, TheInitialErrorHandlerIsTheOneRftrunNames) {
  const auto returned =
      RunWorker(2, {"initial", "return"}, {"--initial-errhandler", "mpi_errors_return"});
  ASSERT_EQ(returned.exit_status, 0) << returned.Report();
  EXPECT_EQ(CountLines(returned.output, "initial ok"), 2) << returned.Report();
  EXPECT_EQ(CountLines(returned.output, "fatal error on"), 0) << returned.Report();
  EXPECT_EQ(CountLines(returned.output, "] FAILED: "), 0) << returned.Report();

  const auto fatal = RunWorker(2, {"initial", "fatal"});
  EXPECT_NE(fatal.exit_status, 0) << fatal.Report();
  EXPECT_GE(CountLines(fatal.output, "fatal error on COMM_WORLD"), 1) << fatal.Report();
  EXPECT_GE(CountLines(fatal.output, "rank 2"), 1) << fatal.Report();
  EXPECT_EQ(CountLines(fatal.output, "initial ok"), 0) << fatal.Report();
  EXPECT_EQ(CountLines(fatal.output, "] FAILED: "), 0) << fatal.Report();

  // Only the handlers are checked: an erroneous call would abort the job.
  const auto abort =
      RunWorker(2, {"initial", "abort"}, {"--initial-errhandler", "mpi_errors_abort"});
  ASSERT_EQ(abort.exit_status, 0) << abort.Report();
  EXPECT_EQ(CountLines(abort.output, "initial ok"), 2) << abort.Report();
  EXPECT_EQ(CountLines(abort.output, "] FAILED: "), 0) << abort.Report();
}

// A bad RFT_INITIAL_ERRHANDLER fails rft_init with RFT_ERR_ARG, naming it, and leaves nothing
// initialised: rft_init succeeds once the variable is gone.
TEST(ApiTest, ABadInitialErrorHandlerIsRefusedByName) {
  const auto r = RunWorker(2, {"initial-bad"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "initial-bad ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// MPI-4's scopes (§9.3): ERRORS_ARE_FATAL aborts every connected process, ERRORS_ABORT the
// processes of the communicator's group; the other half then sees them failed and goes on.
TEST(ApiTest, ErrorsAreFatalEndsEveryProcessErrorsAbortOnlyTheGroup) {
  const auto fatal = RunWorker(4, {"scope", "fatal"});
  EXPECT_NE(fatal.exit_status, 0) << fatal.Report();
  EXPECT_GE(CountLines(fatal.output, "fatal error on"), 1) << fatal.Report();
  EXPECT_EQ(CountLines(fatal.output, "half B goes on"), 0) << fatal.Report();
  EXPECT_EQ(CountLines(fatal.output, "] FAILED: "), 0) << fatal.Report();
  const auto abort = RunWorker(4, {"scope", "abort"});
  EXPECT_EQ(CountLines(abort.output, "half B goes on"), 2) << abort.Report();
  EXPECT_EQ(CountLines(abort.output, "half B sees the abort"), 2) << abort.Report();
  EXPECT_EQ(CountLines(abort.output, "scope ok"), 2) << abort.Report();
  EXPECT_EQ(CountLines(abort.output, "] FAILED: "), 0) << abort.Report();
}

// MPI allows any number of outstanding non-blocking operations: 100 agreements at each rank
// (beyond the 64 the agreement runs at once), rank 0 half a second behind the others.
TEST(ApiTest, AHundredOutstandingAgreementsAllComplete) {
  for (int n : {2, 4}) {
    const auto r = RunWorker(n, {"iagrees"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "iagrees ok"), n) << r.Report();
  }
}

// rft_abort never returns. Its launcher refusing (fault point abort.refused), the aborting rank
// kills the group's processes on its node by pid and exits with the abort's code: nobody goes
// on, nobody waits for the timeout.
TEST(ApiTest, AnAbortTheLauncherRefusesStillEndsTheGroup) {
  std::vector<std::string> args = {"-n", "3", "--ft", "--timeout", "60", Runfile(kWorker), "abort"};
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_FAULT_INJECT=abort.refused@1");
  const auto r = RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(90), env);
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_GE(CountLines(r.output, "the launcher refused the abort"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "outlived the abort"), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "timed out"), 0) << r.Report();
}

// Senders that finalize right after their last sends, before the receiver looks: every message
// arrives intact (teardown flushes the endpoints that carried them).
TEST(ApiTest, WhatAFinalizingSenderSentArrives) {
  for (int n : {2, 4}) {
    const auto r = RunWorker(n, {"parting"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "parting ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

// RFT_FT_ASYNC: the callback runs once, on the control thread, for the failed rank.
TEST(ApiTest, FaultLevelAsyncCallsBackOncePerFailure) {
  const auto r = RunWorker(3, {"async"});
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "async ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// RFT_FT_NONE: any failure ends the job.
TEST(ApiTest, FaultLevelNoneEndsTheJobOnAFailure) {
  const auto r = RunWorker(3, {"none"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_GE(CountLines(r.output, "the fault level is NONE: the job ends"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "none ok"), 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// rft.hpp from C++17: RAII handles; errors (a bad argument, a failed member, a revoke) thrown;
// the dead rank replaced by Spawn, the replacement finding its spawners by GetParent.
TEST(ApiTest, TheCxx17LayerThrowsWhatTheCApiReturns) {
  const auto r =
      RunCommand("tools/rftrun/rftrun",
                 {"-n", "3", "--ft", "--timeout", "60", Runfile("tests/multiproc/api_cpp_worker")},
                 std::chrono::seconds(70), kTolerant);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // the last rank's own SIGKILL
  EXPECT_EQ(CountLines(r.output, "cpp ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "cpp replacement ok"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "cpp spawned ok"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
}

// examples/master_worker.c: worker 1 dies on receiving its first task; the master learns it
// through PROC_FAILED_PENDING, acknowledges, and hands the task to another worker.
TEST(ApiTest, MasterWorkerReassignsADeadWorkersTask) {
  const auto r =
      RunCommand("tools/rftrun/rftrun",
                 {"-n", "4", "--ft", "--timeout", "60", Runfile("examples/master_worker"),
                  "--tasks", "40", "--die-after", "0"},
                 std::chrono::seconds(70), kTolerant);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // worker 1's own SIGKILL
  EXPECT_EQ(CountLines(r.output, "sum 20540 (expected 20540)"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "worker 1 failed"), 1) << r.Report();
}

// The same with the launcher's kill at a time the protocol does not know: the answer is right
// whenever it lands. At 3 s, with work for several seconds: an earlier kill could hit a process
// still connecting to the launcher, where libpmix 4.2.2 leaves fences hanging (docs/rftrun.md).
TEST(ApiTest, MasterWorkerIsRightWheneverTheLauncherKills) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "4", "--ft", "--timeout", "150", "--kill", "2@3",
                             Runfile("examples/master_worker"), "--tasks", "40000"},
                            std::chrono::seconds(160), kTolerant);
  EXPECT_TRUE(r.exit_status == 0 || r.exit_status == 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "master: 40000 tasks done, sum 21332533340000 "), 1) << r.Report();
}

// examples/stencil.c: rank 2 of 5 dies at iteration 50; ranks 1 and 3 trade with each other
// from then on, and every survivor finishes.
TEST(ApiTest, StencilRoutesAroundADeadNeighbour) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "5", "--ft", "--timeout", "60", Runfile("examples/stencil"),
                             "--iterations", "200", "--victim", "2", "--die-at", "50"},
                            std::chrono::seconds(70), kTolerant);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "done 200 iterations"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 1 done 200 iterations, left 0 right 3"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 3 done 200 iterations, left 1 right 4"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "neighbour 2 failed at iteration 50"), 2) << r.Report();
}

// examples/grid.c: in a 2 x 3 grid, rank 4 dies at iteration 30. Its row's collective fails,
// its row mates revoke their columns, and so on: every survivor stops, none finishes.
TEST(ApiTest, GridRevokesAColumnWhenARowFails) {
  const auto r =
      RunCommand("tools/rftrun/rftrun",
                 {"-n", "6", "--ft", "--timeout", "60", Runfile("examples/grid"), "--rows", "2",
                  "--iterations", "100", "--victim", "4", "--die-at", "30"},
                 std::chrono::seconds(70), kTolerant);
  // How many lines say that `rank` stopped at iteration 29 or 30 with `what`.
  const auto stopped = [&r](int rank, const std::string& what) {
    int lines = 0;
    for (const int iteration : {29, 30}) {
      lines += CountLines(r.output, "rank " + std::to_string(rank) + " stopped at iteration " +
                                        std::to_string(iteration) + ": " + what);
    }
    return lines;
  };
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "stopped at iteration"), 5) << r.Report();
  EXPECT_EQ(CountLines(r.output, "finished"), 0) << r.Report();
  // Rank 4's row mates (3 and 5) can only see the failure, at iteration 30: nobody can revoke
  // their row before their own row collective fails.
  EXPECT_EQ(CountLines(r.output, "rank 3 stopped at iteration 30: RFT_ERR_PROC_FAILED on its row"),
            1)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 5 stopped at iteration 30: RFT_ERR_PROC_FAILED on its row"),
            1)
      << r.Report();
  // Rank 1 (rank 4's column mate) sees the failure in its column collective, unless rank 0 or 2
  // revoked their row while rank 1 was still in its row collective of iteration 30.
  EXPECT_EQ(
      CountLines(r.output, "rank 1 stopped at iteration 30: RFT_ERR_PROC_FAILED on its column") +
          CountLines(r.output, "rank 1 stopped at iteration 30: RFT_ERR_REVOKED on its row"),
      1)
      << r.Report();
  // Ranks 0 and 2 learn through a revoke. It can reach them while they still wait for the last
  // message of iteration 29's column collective, which rank 3 (or 5) sent before it moved on to
  // iteration 30 and revoked that column: a revoke interrupts every operation not yet complete.
  EXPECT_EQ(stopped(0, "RFT_ERR_REVOKED"), 1) << r.Report();
  EXPECT_EQ(stopped(2, "RFT_ERR_REVOKED"), 1) << r.Report();
}

}  // namespace
}  // namespace rft::testing
