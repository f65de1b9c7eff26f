// The data plane across real processes under rftrun: matching rules on real endpoints, many
// ranks on 2 cores (blocking progress), and failure completion when a peer is killed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/dataplane_worker";

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args,
                         const std::vector<std::string>& env = {},
                         const std::vector<std::string>& rftrun_args = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n), "--timeout", "90"};
  args.insert(args.end(), rftrun_args.begin(), rftrun_args.end());
  args.push_back(Runfile(kWorker));
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(100), env);
}

class RulesTest : public ::testing::TestWithParam<int> {};

TEST_P(RulesTest, MatchingCompletionTruncationAndBadInput) {
  const int n = GetParam();
  const auto r = RunWorker(n, {"rules"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rules ok n=" + std::to_string(n)), n) << r.Report();
}

// 1: messages to oneself; 2 and 3: across processes, 3 with more ranks than cores.
INSTANTIATE_TEST_SUITE_P(Sizes, RulesTest, ::testing::Values(1, 2, 3));

// A small eager limit moves the rendezvous boundary, so the same rules run both protocols at
// other sizes; and the limit the user sets is the one used.
TEST(DataPlaneTest, RulesHoldWithAnotherEagerLimit) {
  const auto r = RunWorker(2, {"rules"}, {"RFT_EAGER_LIMIT=256"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rules ok n=2 eager_limit=256"), 2) << r.Report();
}

TEST(DataPlaneTest, ABadEagerLimitIsRefusedByName) {
  const auto r = RunWorker(1, {"rules"}, {"RFT_EAGER_LIMIT=lots"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_NE(r.output.find("RFT_EAGER_LIMIT"), std::string::npos) << r.Report();
  EXPECT_NE(r.output.find("lots"), std::string::npos) << r.Report();
}

// A same-node receive completes only once its done message has left: the receiver may block
// outside rft right after it (docs/reliability.md, the loops under load).
TEST(DataPlaneTest, ASameNodeReceiveWaitsUntilItsDoneMessageLeft) {
  const auto r = RunWorker(2, {"cma-done"});
  if (CountLines(r.output, "cma-done skipped") > 0) GTEST_SKIP() << r.Report();
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "cma-done ok"), 2) << r.Report();
}

// On one node large messages use rft's own rendezvous (process_vm_readv) unless told not to;
// the same rules hold with UCX's.
TEST(DataPlaneTest, RulesHoldWithEitherRendezvous) {
  for (const char* protocol : {"cma", "ucx"}) {
    const auto r = RunWorker(2, {"rules"}, {std::string("RFT_RENDEZVOUS=") + protocol});
    ASSERT_EQ(r.exit_status, 0) << protocol << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, std::string("rendezvous=") + protocol), 2) << r.Report();
  }
}

TEST(DataPlaneTest, ABadRendezvousProtocolIsRefusedByName) {
  const auto r = RunWorker(1, {"rules"}, {"RFT_RENDEZVOUS=rdma"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_NE(r.output.find("RFT_RENDEZVOUS"), std::string::npos) << r.Report();
  EXPECT_NE(r.output.find("rdma"), std::string::npos) << r.Report();
}

// RFT_TRANSPORT (docs/verbs.md). This host has no verbs device (the soft-RoCE guest runs the
// verbs checks, tools/softroce/selftest.sh): auto and ucx fall back to UCX and keep the rules,
// and verbs, which asks for the backend on every rank, fails start-up saying why.
TEST(DataPlaneTest, TheTransportSettingFallsBackOrFailsByName) {
  std::error_code error;
  const bool has_devices = std::filesystem::exists("/sys/class/infiniband", error) &&
                           !std::filesystem::is_empty("/sys/class/infiniband", error);
  for (const char* transport : {"auto", "ucx"}) {
    const auto r = RunWorker(
        2, {"rules"},
        {std::string("RFT_TRANSPORT=") + transport, "RFT_SHM_RINGS=n", "RFT_RENDEZVOUS=ucx"});
    ASSERT_EQ(r.exit_status, 0) << transport << "\n" << r.Report();
    const std::string paths = has_devices && std::string(transport) == "auto"
                                  ? "paths to 1 peers: 0 ring, 1 verbs"
                                  : "paths to 1 peers: 0 ring, 0 verbs";
    EXPECT_EQ(CountLines(r.output, paths), 2) << transport << "\n" << r.Report();
  }
  const auto r = RunWorker(2, {"rules"}, {"RFT_TRANSPORT=verbs"});
  if (has_devices) {
    EXPECT_EQ(r.exit_status, 0) << r.Report();
  } else {
    EXPECT_NE(r.exit_status, 0) << r.Report();
    EXPECT_GE(CountLines(r.output, "RFT_TRANSPORT=verbs: no verbs device on this host"), 1)
        << r.Report();
  }
  const auto bad = RunWorker(1, {"rules"}, {"RFT_TRANSPORT=rdma"});
  EXPECT_NE(bad.exit_status, 0) << bad.Report();
  EXPECT_NE(bad.output.find("RFT_TRANSPORT"), std::string::npos) << bad.Report();
}

class MeshTest : public ::testing::TestWithParam<int> {};

TEST_P(MeshTest, EveryPairStreamsBothProtocolsInOrder) {
  const int n = GetParam();
  const auto r = RunWorker(n, {"mesh"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  // More ranks than CPUs: waits must block in the event fd rather than spin.
  EXPECT_EQ(CountLines(r.output, "mesh ok n=" + std::to_string(n) +
                                     " blocking=" + (n > UsableCpus() ? "1" : "0") + " "),
            n)
      << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeshTest, ::testing::Values(2, 4, 8));

// Between processes of one node that use the same-node rendezvous, messages go through a ring
// per ordered pair (docs/shm.md); with RFT_SHM_RINGS=n through UCX, and both keep the rules.
TEST(DataPlaneTest, SameNodePeersUseRingsUnlessTurnedOff) {
  for (const char* rings : {"y", "n"}) {
    const auto r = RunWorker(4, {"mesh"}, {std::string("RFT_SHM_RINGS=") + rings});
    ASSERT_EQ(r.exit_status, 0) << rings << "\n" << r.Report();
    const bool on = std::string(rings) == "y";
    // Rings go exactly where the same-node rendezvous goes (every peer here, unless the system
    // forbids process_vm_readv: then none).
    const int cma_everywhere = CountLines(r.output, "cma=3");
    EXPECT_EQ(CountLines(r.output, on ? "rings=3 cma=3" : "rings=0 cma=3"), cma_everywhere)
        << r.Report();
    EXPECT_EQ(CountLines(r.output, "rings=0 cma=0"), 4 - cma_everywhere) << r.Report();
  }
  const auto r = RunWorker(2, {"rules"}, {"RFT_SHM_RINGS=n"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
}

TEST(DataPlaneTest, ABadShmRingsValueIsRefusedByName) {
  const auto r = RunWorker(1, {"rules"}, {"RFT_SHM_RINGS=maybe"});
  EXPECT_NE(r.exit_status, 0) << r.Report();
  EXPECT_NE(r.output.find("RFT_SHM_RINGS"), std::string::npos) << r.Report();
  EXPECT_NE(r.output.find("maybe"), std::string::npos) << r.Report();
}

// A receive that matches the rendezvous request of a sender that has died since fails with
// PROC_FAILED: here the same-node read (process_vm_readv) finds the process gone; in the
// soft-RoCE guest the RDMA READ finds its QP dead (tools/softroce/selftest.sh). UCX's own
// rendezvous is left out: with no failure registry (this worker has none) its fetch from a
// dead peer of this node waits for UCX's keepalive, tens of seconds; in a job the registry
// fails it as soon as the launcher reports the death. rftrun --ft reports the rank that raised
// SIGKILL as a crash (137).
TEST(DataPlaneTest, AReadFromADeadSenderFailsTheReceive) {
  const auto r = RunWorker(2, {"read-death"}, {"RFT_RENDEZVOUS=cma"}, {"--ft"});
  EXPECT_EQ(r.exit_status, 137) << r.Report();
  EXPECT_EQ(CountLines(r.output, "read-death ok: PROC_FAILED after"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED:"), 0) << r.Report();
}

TEST(DataPlaneTest, APeersFailureCompletesItsOperationsAndSurvivorsGoOn) {
  const auto r = RunWorker(4, {"failure", "--victim", "2"}, {}, {"--ft"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "survivors ok without rank 2"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

// The same with UCX's rendezvous in place of the same-node one (its descriptors and fetches
// are what failure completion must cancel then).
TEST(DataPlaneTest, APeersFailureWithUcxRendezvous) {
  const auto r = RunWorker(4, {"failure", "--victim", "1"}, {"RFT_RENDEZVOUS=ucx"}, {"--ft"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "survivors ok without rank 1"), 3) << r.Report();
}

// Destroying a data plane with operations in flight to a stopped peer returns within its
// bound instead of aborting or hanging, with either rendezvous and over TCP.
TEST(DataPlaneTest, TeardownWithOperationsInFlightToAStoppedPeer) {
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{}, std::vector<std::string>{"RFT_RENDEZVOUS=ucx"},
        std::vector<std::string>{"RFT_RENDEZVOUS=ucx", "UCX_TLS=tcp,self"}}) {
    const auto r = RunWorker(2, {"teardown"}, env, {"--ft"});
    EXPECT_EQ(r.exit_status, 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "teardown ok"), 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
  }
}

TEST(DataPlaneTest, FailureOfRankZeroOverTcp) {
  // TCP reports a dead peer itself (connection reset), racing the launcher's event.
  const auto r = RunWorker(3, {"failure", "--victim", "0"}, {"UCX_TLS=tcp,self"}, {"--ft"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "survivors ok without rank 0"), 2) << r.Report();
}

}  // namespace
}  // namespace rft::testing
