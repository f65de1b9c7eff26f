// The MPI test programs (mpi_basics.c, mpi_coll_derived.c, mpi_ulfm.c, ...) under rft's mpiexec:
// every group of the MPI layer's functions at several sizes, and ULFM with processes that die at a
// point the program chooses (the victim kills itself) and at instants it does not know (mpiexec
// --kill). Each survivor's last line says how many of its checks failed; the result lines are
// compared with what the survivors must compute.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

ScenarioResult RunMpi(const std::vector<std::string>& mpiexec_args,
                      const std::vector<std::string>& program_args,
                      const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> args = mpiexec_args;
  args.insert(args.end(), {"--timeout", "100", "--get-stack-traces"});
  args.insert(args.end(), program_args.begin(), program_args.end());
  args[args.size() - program_args.size()] = Runfile(program_args[0]);
  std::vector<std::string> env = TolerantHeartbeats();
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return RunCommand("ulfm_api/mpi/sdk/bin/mpiexec", args, std::chrono::seconds(150), env);
}

// Every one of `ranks` printed "NAME: rank R: N checks, 0 failed".
void ExpectAllChecksPassed(const ScenarioResult& r, const std::string& name,
                           const std::vector<int>& ranks) {
  for (int rank : ranks) {
    const std::string line = name + ": rank " + std::to_string(rank) + ": ";
    const size_t at = r.output.find(line);
    ASSERT_NE(at, std::string::npos) << "rank " << rank << " printed no summary\n" << r.Report();
    const size_t end = r.output.find('\n', at);
    EXPECT_NE(r.output.substr(at, end - at).find(" 0 failed"), std::string::npos) << r.Report();
  }
  EXPECT_EQ(CountLines(r.output, "CHECK failed"), 0) << r.Report();
}

TEST(MpiPrograms, BasicsAtTwoThreeAndFiveRanks) {
  for (int n : {2, 3, 5}) {
    const ScenarioResult r = RunMpi({"-n", std::to_string(n)}, {"tests/mpi/mpi_basics"});
    EXPECT_EQ(r.exit_status, 0) << r.Report();
    std::vector<int> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    ExpectAllChecksPassed(r, "mpi_basics", ranks);
  }
}

// The same over UCX alone (no same-node rings, UCX's rendezvous instead of rft's own): the
// other path of every send mode, the synchronous ones above all (UCX's rendezvous, at any size).
TEST(MpiPrograms, BasicsOverUcxAlone) {
  const ScenarioResult r =
      RunMpi({"-n", "3"}, {"tests/mpi/mpi_basics"}, {"RFT_SHM_RINGS=n", "RFT_RENDEZVOUS=ucx"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  ExpectAllChecksPassed(r, "mpi_basics", {0, 1, 2});
  // An empty synchronous send through UCX's own rendezvous left UCX a buffer it never got back
  // (UCX 1.13): it goes as rft's empty descriptor instead.
  EXPECT_EQ(CountLines(r.output, "not returned to mpool"), 0) << r.Report();
}

// Derived datatypes in the non-blocking gathers, scatters and all-to-alls (each equal to its
// blocking twin, byte for byte), and MPI_Alltoallw / MPI_Ialltoallw.
TEST(MpiPrograms, DerivedDatatypeCollectivesAtTwoThreeAndFiveRanks) {
  for (int n : {2, 3, 5}) {
    const ScenarioResult r = RunMpi({"-n", std::to_string(n)}, {"tests/mpi/mpi_coll_derived"});
    EXPECT_EQ(r.exit_status, 0) << r.Report();
    std::vector<int> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    ExpectAllChecksPassed(r, "mpi_coll_derived", ranks);
  }
}

// MPI_Comm_spawn from the whole job at 1 and 3 ranks: 2 children find their parents, data crosses
// both ways, and the merge puts the parents first; both sides disconnect. Then
// MPI_Comm_spawn_multiple: 1 + 2 processes of two programs, MPI_APPNUM 0, 1, 1, one found through
// the "path" info key and the other started in its "wdir"; "host" is named once as not used.
TEST(MpiPrograms, SpawnAndGetParentAtOneAndThreeRanks) {
  for (int n : {1, 3}) {
    const ScenarioResult r = RunMpi({"-n", std::to_string(n)}, {"tests/mpi/mpi_spawn"});
    EXPECT_EQ(r.exit_status, 0) << r.Report();
    std::vector<int> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    ExpectAllChecksPassed(r, "mpi_spawn", ranks);
    ExpectAllChecksPassed(r, "mpi_spawn_child", {0, 1});
    ExpectAllChecksPassed(r, "mpi_spawn_multiple_child", {0, 1, 2});
    EXPECT_EQ(CountLines(r.output, "info key \"host\" is not used"), 1) << r.Report();
  }
}

// Intercommunicators: two groups of the world (sizes differing at odd n), MPI's
// intercommunicator collectives, merge, and a revoke, agree and shrink spanning both groups.
TEST(MpiPrograms, IntercommunicatorsAtTwoThreeAndFiveRanks) {
  for (int n : {2, 3, 5}) {
    const ScenarioResult r =
        RunMpi({"-n", std::to_string(n), "--with-ft", "ulfm"}, {"tests/mpi/mpi_intercomm"});
    EXPECT_EQ(r.exit_status, 0) << r.Report();
    std::vector<int> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    ExpectAllChecksPassed(r, "mpi_intercomm", ranks);
  }
}

TEST(MpiPrograms, FailuresPendingAckRevokeShrinkAgree) {
  const ScenarioResult r =
      RunMpi({"-n", "4", "--with-ft", "ulfm"}, {"tests/mpi/mpi_ulfm", "failures", "2"});
  ExpectAllChecksPassed(r, "mpi_ulfm", {0, 1, 3});
  EXPECT_EQ(CountLines(r.output, "sum over the survivors 4"), 3) << r.Report();
  // mpiexec's status when a rank killed itself and the survivors finished (docs/mpi.md).
  EXPECT_EQ(r.exit_status, 0) << r.Report();
}

// Issue 37's first defect: calls that fail at once (a barrier with a dead member, a send to the
// dead, a dup) must still see the revocation rank 0 makes, or the usual ULFM loop never ends.
TEST(MpiPrograms, CallsThatFailAtOnceSeeTheRevocation) {
  const ScenarioResult r =
      RunMpi({"-n", "4", "--with-ft", "ulfm"}, {"tests/mpi/mpi_ulfm", "revoke-seen", "2"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  ExpectAllChecksPassed(r, "mpi_ulfm", {0, 1, 3});
  EXPECT_EQ(CountLines(r.output, "loop ended by REVOKED"), 9) << r.Report();
}

TEST(MpiPrograms, RevokeAndShrinkAHundredTimes) {
  const ScenarioResult r =
      RunMpi({"-n", "3", "--with-ft", "ulfm"}, {"tests/mpi/mpi_ulfm", "revoke-loop", "100"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  ExpectAllChecksPassed(r, "mpi_ulfm", {0, 1, 2});
  EXPECT_EQ(CountLines(r.output, "100 rounds"), 3) << r.Report();
}

TEST(MpiPrograms, AUserHandlerThatRevokes) {
  const ScenarioResult r =
      RunMpi({"-n", "4", "--with-ft", "ulfm"}, {"tests/mpi/mpi_ulfm", "handler", "1"});
  ExpectAllChecksPassed(r, "mpi_ulfm", {0, 2, 3});
  EXPECT_EQ(CountLines(r.output, "shrunk to 3"), 3) << r.Report();
}

// Two processes killed by mpiexec at instants the program does not know (its loop runs 5 s at
// least, the kills come 2 and 2.6 s after launch, after MPI_Init even under the sanitizers):
// the loop recovers, and every survivor ends with the same number of iterations, three members
// and the exact sum of the survivors' ranks.
TEST(MpiPrograms, IterationsSurviveTwoKillsAtRandomInstants) {
  const ScenarioResult r =
      RunMpi({"-n", "5", "--with-ft", "ulfm", "--kill", "1@2", "--kill", "3@2.6"},
             {"tests/mpi/mpi_ulfm", "iterate", "1000", "5"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, " iterations, 3 members, sum of ranks 6"), 3) << r.Report();
  // The same iteration count at every survivor: the loop's end was agreed.
  std::set<std::string> counts;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("mpi_ulfm iterate: ");
    if (at != std::string::npos) counts.insert(line.substr(at, line.find(" iterations") - at));
  }
  EXPECT_EQ(counts.size(), 1u) << r.Report();
}

TEST(MpiPrograms, InitialErrorHandlerFromMpiexec) {
  const ScenarioResult r =
      RunMpi({"-n", "2", "--with-ft", "ulfm", "--initial-errhandler", "mpi_errors_return"},
             {"tests/mpi/mpi_ulfm", "initial"});
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  ExpectAllChecksPassed(r, "mpi_ulfm", {0, 1});
}

// Without fault tolerance (mpiexec's default), a death is the job's failure.
TEST(MpiPrograms, WithoutFaultToleranceADeathEndsTheJob) {
  const ScenarioResult killed =
      RunMpi({"-n", "3", "--kill", "1@2"}, {"tests/mpi/mpi_ulfm", "iterate", "1000", "5"});
  EXPECT_NE(killed.exit_status, 0) << killed.Report();
  EXPECT_FALSE(killed.timed_out) << killed.Report();
  EXPECT_EQ(CountLines(killed.output, "mpi_ulfm iterate:"), 0) << killed.Report();
}

TEST(MpiPrograms, MpiexecRefusesBadOptionsByName) {
  const ScenarioResult r =
      RunCommand("ulfm_api/mpi/sdk/bin/mpiexec", {"-n", "2", "--with-ft", "maybe", "true"},
                 std::chrono::seconds(20));
  EXPECT_EQ(r.exit_status, 2) << r.Report();
  EXPECT_NE(r.output.find("--with-ft maybe: expected ulfm, mpi or no"), std::string::npos)
      << r.Report();
  // Passed on to rftrun, which checks it.
  const ScenarioResult handler =
      RunCommand("ulfm_api/mpi/sdk/bin/mpiexec",
                 {"-n", "1", "--initial-errhandler", "mpi_errors_ignore", "/bin/true"},
                 std::chrono::seconds(20));
  EXPECT_EQ(handler.exit_status, 2) << handler.Report();
  EXPECT_NE(handler.output.find("--initial-errhandler \"mpi_errors_ignore\": expected "
                                "mpi_errors_are_fatal, mpi_errors_abort or mpi_errors_return"),
            std::string::npos)
      << handler.Report();
  const ScenarioResult mca =
      RunCommand("ulfm_api/mpi/sdk/bin/mpiexec",
                 {"-n", "1", "--mca", "btl", "self,sm", "--bind-to", "core", "/bin/true"},
                 std::chrono::seconds(30));
  EXPECT_EQ(mca.exit_status, 0) << mca.Report();
  EXPECT_NE(mca.output.find("--mca btl self,sm has no meaning for rft; ignored"), std::string::npos)
      << mca.Report();
  EXPECT_NE(mca.output.find("--bind-to core has no meaning for rft; ignored"), std::string::npos)
      << mca.Report();
}

}  // namespace
}  // namespace rft::testing
