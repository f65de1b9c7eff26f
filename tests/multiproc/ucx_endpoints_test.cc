// The UCX endpoint layer across real processes: connect-all, active messages between every
// pair, blocking progress when oversubscribed, and a peer's failure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/ucx_mesh_worker";

class MeshTest : public ::testing::TestWithParam<int> {};

TEST_P(MeshTest, EveryPairExchangesAMessage) {
  const int n = GetParam();
  const auto r = RunRftrun({"-n", std::to_string(n), "--timeout", "60", Runfile(kWorker), "mesh"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  // More ranks than CPUs: waits must block in the event fd rather than spin.
  EXPECT_EQ(CountLines(r.output, "mesh ok n=" + std::to_string(n) +
                                     " blocking=" + (n > UsableCpus() ? "1" : "0")),
            n)
      << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeshTest, ::testing::Values(1, 2, 4, 8));

// A rank that dies after publishing its address and before the others connect (found by a
// loaded soak: every other rank failed its start-up with "Shared memory error"): it is taken as
// failed, the sink hears it, and the others talk without it.
TEST(EndpointsTest, APeerDeadBeforeTheConnectIsFailedNotFatal) {
  const auto r =
      RunRftrun({"-n", "3", "--ft", "--timeout", "60", Runfile(kWorker), "dead-before-connect"});
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // rank 1's own SIGKILL
  EXPECT_EQ(CountLines(r.output, "dead-before-connect ok"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "ucx reported rank 1 failed"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED:"), 0) << r.Report();
}

class OneSidedTest : public ::testing::TestWithParam<int> {};

TEST_P(OneSidedTest, PutGetAndFetchAddWithoutTheTargetsHelp) {
  const int n = GetParam();
  const auto r =
      RunRftrun({"-n", std::to_string(n), "--timeout", "60", Runfile(kWorker), "one-sided"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "one-sided ok n=" + std::to_string(n)), n) << r.Report();
}

INSTANTIATE_TEST_SUITE_P(Sizes, OneSidedTest, ::testing::Values(2, 4));

// UCX drops shared memory for endpoints with peer error handling unless
// UCX_MM_ERROR_HANDLING=y (NOTES.md); rft sets it. With only shared memory allowed, the mesh
// must still connect (it fails with "Destination is unreachable" when the setting is off).
TEST(UcxEndpointsTest, SharedMemoryStaysInUseWithPeerErrorHandling) {
  const auto r =
      RunCommand("tools/rftrun/rftrun", {"-n", "2", "--timeout", "60", Runfile(kWorker), "mesh"},
                 std::chrono::seconds(60), {"UCX_TLS=sm,self"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "mesh ok n=2"), 2) << r.Report();
}

// A one-sided put to a stopped peer returns within its bound: over TCP the target's progress
// is needed and UCX may not cancel the put, which used to spin forever.
TEST(UcxEndpointsTest, APutToAStoppedPeerReturnsWithinItsBound) {
  const auto tcp =
      RunCommand("tools/rftrun/rftrun",
                 {"-n", "2", "--ft", "--timeout", "60", Runfile(kWorker), "put-to-stopped"},
                 std::chrono::seconds(70), {"UCX_TLS=tcp,self"});
  ASSERT_EQ(tcp.exit_status, 0) << tcp.Report();
  EXPECT_EQ(CountLines(tcp.output, "put to stopped peer: RFT_ERR_TIMEOUT"), 1) << tcp.Report();
  const auto shm =
      RunRftrun({"-n", "2", "--ft", "--timeout", "60", Runfile(kWorker), "put-to-stopped"});
  ASSERT_EQ(shm.exit_status, 0) << shm.Report();
  EXPECT_EQ(CountLines(shm.output, "put to stopped peer:"), 1) << shm.Report();
}

TEST(UcxEndpointsTest, SurvivorsGoOnWithoutAFailedPeer) {
  const auto r = RunRftrun(
      {"-n", "4", "--ft", "--timeout", "60", Runfile(kWorker), "failed-peer", "--victim", "2"});
  ASSERT_EQ(r.exit_status, 0) << r.Report();
  EXPECT_EQ(CountLines(r.output, "survivors ok without rank 2"), 3) << r.Report();
}

}  // namespace
}  // namespace rft::testing
