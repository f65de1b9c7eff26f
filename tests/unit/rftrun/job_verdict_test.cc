// The rules by which rftrun judges process ends and the job's exit status (job_verdict.h), each
// one on its own, without processes.
#include "tools/rftrun/job_verdict.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace rft::rftrun {
namespace {

// waitpid statuses, as Linux encodes them.
int Exited(int status) { return status << 8; }
int Killed(int signal) { return signal; }

ProcessEnd Finalized(int wait_status) {
  return ProcessEnd{.wait_status = wait_status, .connected = true, .finalized = true};
}
ProcessEnd Unfinalized(int wait_status) {
  return ProcessEnd{.wait_status = wait_status, .connected = true, .finalized = false};
}
ProcessEnd InjectedKill() {
  ProcessEnd end = Unfinalized(Killed(SIGKILL));
  end.injected_signal = SIGKILL;
  return end;
}

TEST(JobVerdictTest, ClassifiesEachKindOfEnd) {
  EXPECT_EQ(Classify(Finalized(Exited(0))).kind, EndKind::kNormal);
  // A program that never connected (a shell script, a wrapper) and exited 0 did nothing wrong.
  EXPECT_EQ(Classify(ProcessEnd{.wait_status = Exited(0)}).kind, EndKind::kNormal);
  const EndClass left = Classify(Unfinalized(Exited(0)));
  EXPECT_EQ(left.kind, EndKind::kNoFinalize);
  EXPECT_TRUE(left.failed());
  const EndClass status = Classify(Finalized(Exited(3)));
  EXPECT_EQ(status.kind, EndKind::kExitStatus);
  EXPECT_EQ(status.exit_code, 3);
  const EndClass signaled = Classify(Unfinalized(Killed(SIGSEGV)));
  EXPECT_EQ(signaled.kind, EndKind::kSignaled);
  EXPECT_EQ(signaled.exit_code, 128 + SIGSEGV);
}

TEST(JobVerdictTest, DescribesAnEndAndWhoCausedIt) {
  EXPECT_EQ(Describe(InjectedKill()), "was killed by signal 9 (SIGKILL), injected by --kill");
  EXPECT_EQ(Describe(Finalized(Exited(3))), "exited with status 3");
  EXPECT_EQ(Describe(Unfinalized(Exited(0))), "exited without calling PMIx_Finalize");
  ProcessEnd aborted = Unfinalized(Killed(SIGKILL));
  aborted.aborted = true;
  aborted.injected_signal = SIGKILL;  // an abort asked for says so, not the injection
  EXPECT_EQ(Describe(aborted), "was killed by signal 9 (SIGKILL), aborted on request");
  EXPECT_EQ(Describe(Finalized(Exited(0))), "exited normally");
}

TEST(JobVerdictTest, WithoutFtTheFirstFailureEndsTheJobWithItsStatus) {
  JobVerdict verdict(/*fault_tolerant=*/false, /*deaths_ok=*/false);
  EXPECT_FALSE(verdict.ProcessEnded("0", Finalized(Exited(0)), false));
  EXPECT_TRUE(verdict.ProcessEnded("2", Unfinalized(Killed(SIGSEGV)), false));
  EXPECT_EQ(verdict.ExitStatus(), 128 + SIGSEGV);
  EXPECT_EQ(verdict.summary(),
            "rank 2 was killed by signal 11 (SIGSEGV); the job was ended (run with --ft to keep "
            "it going)");
  // The deaths that follow are the job's end, not new verdicts.
  EXPECT_FALSE(verdict.ProcessEnded("1", Finalized(Exited(5)), true));
  EXPECT_EQ(verdict.ExitStatus(), 128 + SIGSEGV);
}

TEST(JobVerdictTest, WithoutFtAMissingFinalizeFailsWithStatusOne) {
  JobVerdict verdict(false, false);
  EXPECT_TRUE(verdict.ProcessEnded("1", Unfinalized(Exited(0)), false));
  EXPECT_EQ(verdict.ExitStatus(), 1);
}

TEST(JobVerdictTest, WithFtAnInjectedDeathIsReportedButNotAFailedJob) {
  JobVerdict verdict(/*fault_tolerant=*/true, /*deaths_ok=*/false);
  EXPECT_FALSE(verdict.ProcessEnded("1", InjectedKill(), false));
  EXPECT_FALSE(verdict.ProcessEnded("0", Finalized(Exited(0)), false));
  EXPECT_EQ(verdict.ExitStatus(), 0);
  EXPECT_EQ(verdict.summary(), "rank 1 was killed by signal 9 (SIGKILL), injected by --kill");
}

TEST(JobVerdictTest, WithFtACrashNobodyCausedFailsTheJobUnlessDeathsAreOk) {
  JobVerdict strict(true, false);
  EXPECT_FALSE(strict.ProcessEnded("3", Unfinalized(Killed(SIGSEGV)), false));
  EXPECT_EQ(strict.ExitStatus(), 128 + SIGSEGV);
  JobVerdict lenient(true, /*deaths_ok=*/true);
  EXPECT_FALSE(lenient.ProcessEnded("3", Unfinalized(Killed(SIGSEGV)), false));
  EXPECT_EQ(lenient.ExitStatus(), 0);
  // A death while rftrun ends the job is its own doing.
  JobVerdict ending(true, false);
  EXPECT_FALSE(ending.ProcessEnded("3", Unfinalized(Killed(SIGTERM)), true));
  EXPECT_EQ(ending.ExitStatus(), 0);
}

TEST(JobVerdictTest, WithFtTheApplicationsOwnStatusDecidesAndTheJobGoesOn) {
  JobVerdict verdict(true, false);
  EXPECT_FALSE(verdict.ProcessEnded("1", InjectedKill(), false));
  EXPECT_FALSE(verdict.ProcessEnded("2", Finalized(Exited(3)), false));
  EXPECT_EQ(verdict.ExitStatus(), 3);
  EXPECT_EQ(verdict.summary(), "rank 2 exited with status 3");
  // The first status stays.
  EXPECT_FALSE(verdict.ProcessEnded("0", Finalized(Exited(4)), false));
  EXPECT_EQ(verdict.ExitStatus(), 3);
}

TEST(JobVerdictTest, ATimeoutOrASignalDecidesWhateverCameBefore) {
  JobVerdict timed(true, false);
  timed.ProcessEnded("2", Finalized(Exited(3)), false);
  timed.TimedOut("timeout: the job ran longer than 1 s");
  EXPECT_EQ(timed.ExitStatus(), kTimeoutExitStatus);
  EXPECT_TRUE(timed.stopped_from_outside());
  EXPECT_EQ(timed.summary(), "timeout: the job ran longer than 1 s");
  JobVerdict interrupted(false, false);
  EXPECT_FALSE(interrupted.stopped_from_outside());
  interrupted.Interrupted(SIGINT);
  EXPECT_EQ(interrupted.ExitStatus(), 128 + SIGINT);
  EXPECT_EQ(interrupted.summary(), "interrupted by Interrupt");
}

TEST(JobVerdictTest, AnAbortsStatusBecomesAnExitStatusThatReadsAsFailure) {
  EXPECT_EQ(ExitCodeOf(7), 7);
  EXPECT_EQ(ExitCodeOf(256), 255);  // as 8 bits it would read as success
  EXPECT_EQ(ExitCodeOf(-1), 255);
  JobVerdict zero(true, false);
  zero.JobAborted("1", 0, "");
  EXPECT_EQ(zero.ExitStatus(), 1);  // aborting the whole job is a failure even with status 0
  JobVerdict first(true, false);
  first.JobAborted("1", 300, ": out of memory");
  first.JobAborted("2", 4, "");
  EXPECT_EQ(first.ExitStatus(), 255);
  EXPECT_EQ(first.summary(), "rank 1 aborted the job with status 300: out of memory");
}

TEST(JobVerdictTest, AbortingRanksWithStatusZeroIsAFailStopNotAVerdict) {
  JobVerdict verdict(true, false);
  verdict.RanksAborted("0", "2,3", 0, "");
  EXPECT_EQ(verdict.ExitStatus(), 0);
  verdict.RanksAborted("0", "", 5, "");  // they had ended already: nothing was aborted
  EXPECT_EQ(verdict.ExitStatus(), 0);
  verdict.RanksAborted("0", "2", 5, "");
  EXPECT_EQ(verdict.ExitStatus(), 5);
  EXPECT_EQ(verdict.summary(), "rank 0 aborted rank(s) 2 with status 5");
}

TEST(JobVerdictTest, ALostNodeEndsTheJobOnlyWithoutFt) {
  JobVerdict plain(false, false);
  EXPECT_TRUE(plain.LostNodes("b", false));
  EXPECT_EQ(plain.ExitStatus(), 1);
  EXPECT_EQ(plain.summary(), "lost the link to node(s) b");
  JobVerdict tolerant(true, false);
  EXPECT_FALSE(tolerant.ProcessEnded("1", InjectedKill(), false));
  EXPECT_FALSE(tolerant.LostNodes("b,c", false));
  EXPECT_EQ(tolerant.ExitStatus(), 1);
  EXPECT_EQ(tolerant.summary(),
            "rank 1 was killed by signal 9 (SIGKILL), injected by --kill; lost node(s) b,c");
}

TEST(JobVerdictTest, AnotherNodesEndKeepsAnEarlierStatus) {
  JobVerdict verdict(true, false);
  verdict.NodeEndedJob("b", 0, "rank 4 exited without calling PMIx_Finalize");
  EXPECT_EQ(verdict.ExitStatus(), 1);
  verdict.NodeEndedJob("c", 9, "later");
  EXPECT_EQ(verdict.ExitStatus(), 1);
  EXPECT_EQ(verdict.summary(), "node c ended the job: later");
}

TEST(JobVerdictTest, TheJobsStatusIsTheFirstFailedNodesInNodeOrder) {
  EXPECT_EQ(JobVerdict::CombineNodes({}), 0);
  EXPECT_EQ(JobVerdict::CombineNodes({0, 0, 0}), 0);
  EXPECT_EQ(JobVerdict::CombineNodes({0, 3, 2}), 3);
  EXPECT_EQ(JobVerdict::CombineNodes({124, 3}), 124);
}

}  // namespace
}  // namespace rft::rftrun
