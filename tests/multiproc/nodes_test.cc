// rftrun across nodes: two or three rftruns on this host, one listening and the others joining
// over loopback (nodes.sh), run one job whose processes see that many nodes. Each node's PMIx
// server holds only its own processes, so everything crossing nodes goes over the node link:
// fences, another node's data, terminations, kills, the job's end. With three nodes, what
// passes between nodes 1 and 2 is relayed by node 0, the hub.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::string kWorker = "tests/multiproc/bootstrap_worker";

// What happens to a node (the last one unless `victim` says) once its output has `pattern`.
enum class Fate { kNone, kLost, kHung };

ScenarioResult RunNodes(const std::vector<std::string>& nodes, Fate fate = Fate::kNone,
                        const std::string& pattern = "",
                        const std::vector<std::string>& env = {"RFT_PMIX_TIMEOUT=2s"},
                        int victim = -1) {
  std::vector<std::string> args = {Runfile("tools/rftrun/rftrun")};
  if (fate == Fate::kLost) {
    args.push_back("--lose");
    args.push_back(std::to_string(victim >= 0 ? victim : static_cast<int>(nodes.size()) - 1));
    args.push_back(pattern);
  } else if (fate == Fate::kHung) {
    args.push_back("--hang");
    args.push_back(pattern);
  }
  args.insert(args.end(), nodes.begin(), nodes.end());
  return RunCommand(Runfile("tests/multiproc/nodes.sh"), args, std::chrono::seconds(150), env);
}

std::string Worker() { return Runfile(kWorker); }

// Whether the output says node `node` exited with `status`.
bool NodeExited(const ScenarioResult& r, int node, int status) {
  return CountLines(r.output,
                    "=== node " + std::to_string(node) + " exit " + std::to_string(status)) == 1;
}

TEST(NodesTest, EveryRankSeesEveryAddressAndItsOwnNode) {
  // Node 0 runs ranks 0-1, node 1 ranks 2-4; the fence's data crosses the link.
  const auto r = RunNodes({"-n 2 --timeout 60 " + Worker() + " exchange --local 2",
                           "-n 3 --timeout 60 " + Worker() + " exchange --local 3"});
  EXPECT_TRUE(NodeExited(r, 0, 0)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 0)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=5 local={0-1}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=5 local={2-4}"), 3) << r.Report();
}

TEST(NodesTest, DataNoFenceCollectedIsFetchedFromItsNode) {
  const std::string job = "-n 2 -v --timeout 60 " + Worker() + " direct";
  const auto r = RunNodes({job, job});
  EXPECT_TRUE(NodeExited(r, 0, 0)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 0)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "direct ok n=4"), 4) << r.Report();
  // Each node asked the other for its ranks' data (rftrun -v says so): once per rank, or once
  // per local process that asked before the first answer came.
  for (const char* asked :
       {"asked node 1 for the data of rank", "asked node 0 for the data of rank"}) {
    EXPECT_GE(CountLines(r.output, asked), 2) << r.Report();
    EXPECT_LE(CountLines(r.output, asked), 4) << r.Report();
  }
}

TEST(NodesTest, AKillOnOneNodeIsReportedOnTheOther) {
  const std::string job =
      "-n 2 --ft --timeout 60 " + Worker() + " failures --victims 3 --end self-abort";
  const auto r = RunNodes({job, job});
  EXPECT_TRUE(NodeExited(r, 0, 0)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 0)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {3}"), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 3 failed (killed by signal 9 (SIGKILL))"), 3) << r.Report();
}

TEST(NodesTest, AnAbortOfRanksOnTheOtherNodeKillsThem) {
  // Rank 0 (node 0) aborts ranks 2 and 3 (node 1): node 1's rftrun kills them.
  const std::string job = "-n 2 --ft --timeout 60 " + Worker() + " abort-subset --victims 2,3";
  const auto r = RunNodes({job, job});
  EXPECT_TRUE(NodeExited(r, 0, 5)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 5)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {2-3}"), 2) << r.Report();
  for (const char* victim : {"rank 2", "rank 3"}) {
    EXPECT_EQ(CountLines(r.output, std::string(victim) +
                                       " was killed by signal 9 (SIGKILL), aborted on request"),
              1)
        << r.Report();
  }
}

TEST(NodesTest, WithoutFtAnAbortOnOneNodeEndsBoth) {
  // Rank 1 (node 0) aborts the whole job with status 7; node 1's ranks wait forever.
  const std::string job = "-n 2 --timeout 60 " + Worker() + " abort-all 7";
  const auto r = RunNodes({job, job});
  EXPECT_TRUE(NodeExited(r, 0, 7)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 7)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "node node0 ended the job: rank 1 aborted the job with status 7"),
            1)
      << r.Report();
}

TEST(NodesTest, ALostNodeIsReportedAsFailed) {
  // Node 1's ranks 2 and 3 announce themselves once the exchange is done; then its rftrun and
  // processes are killed. With --ft, node 0 reports both ranks failed to its own: their node is
  // down.
  const auto r =
      RunNodes({"-n 2 --ft --timeout 60 " + Worker() + " failures --victims 2,3",
                "-n 2 --ft --timeout 60 " + Worker() + " failures --victims 2,3 --end announce"},
               Fate::kLost, "victim 3 ready");
  EXPECT_TRUE(NodeExited(r, 0, 1)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 128 + 9)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {2-3}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rftrun: lost the link to node(s) node1"), 1) << r.Report();
  // Each of node 0's two ranks hears a node-down event per lost rank, naming the node.
  for (const char* victim : {"rank 2", "rank 3"}) {
    EXPECT_EQ(CountLines(r.output, std::string(victim) + " failed (its node node1 went down)"), 2)
        << r.Report();
  }
}

TEST(NodesTest, AJoinerThatLosesNodeZeroLosesEveryOtherNode) {
  // Node 0 (ranks 0-1, the hub) is lost once its ranks are ready. Node 1 goes on without it:
  // with --ft its own ranks hear that node 0's ranks are gone, finish, and rftrun exits 1.
  const auto r =
      RunNodes({"-n 2 --ft --timeout 60 " + Worker() + " failures --victims 0,1 --end announce",
                "-n 2 --ft --timeout 60 " + Worker() + " failures --victims 0,1"},
               Fate::kLost, "victim 1 ready", {"RFT_PMIX_TIMEOUT=2s"}, /*victim=*/0);
  EXPECT_TRUE(NodeExited(r, 0, 128 + 9)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 1)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rftrun: lost the link to node(s) node0"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {0-1}"), 2) << r.Report();
  for (const char* victim : {"rank 0", "rank 1"}) {
    EXPECT_EQ(CountLines(r.output, std::string(victim) + " failed (its node node0 went down)"), 2)
        << r.Report();
  }
  EXPECT_LT(r.seconds, 30) << r.Report();
}

TEST(NodesTest, ATimeoutDoesNotWaitForAHungNode) {
  // Node 1's rftrun is stopped once its process runs; node 0's --timeout ends its own process
  // and, after a grace, rftrun itself. Resumed, node 1 learns the job ended and ends too.
  const auto r =
      RunNodes({"-n 1 --timeout 3 " + Worker() + " pid-sleep", "-n 1 " + Worker() + " pid-sleep"},
               Fate::kHung, "pid ", {});
  EXPECT_TRUE(NodeExited(r, 0, 124)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 124)) << r.Report();
  EXPECT_EQ(
      CountLines(r.output, "rftrun: the other nodes did not end in time; exiting without them"), 1)
      << r.Report();
  EXPECT_LT(r.seconds, 20) << r.Report();
}

// The whole rft stack across the two nodes: control plane and data plane between nodes, and a
// member on the other node dies inside an agreement; the survivors decide one outcome.
TEST(NodesTest, AgreementDecidesOneOutcomeWhenAMemberOnTheOtherNodeDies) {
  const std::string job =
      "-n 2 --ft --timeout 60 " + Runfile("tests/multiproc/agreement_worker") + " during 3";
  const auto r = RunNodes({job, job}, Fate::kNone, "", TolerantHeartbeats());
  EXPECT_TRUE(NodeExited(r, 0, 128 + 9)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 128 + 9)) << r.Report();
  for (int rank : {0, 1, 2}) {
    EXPECT_EQ(CountLines(r.output, "[" + std::to_string(rank) + "] during ok"), 1) << r.Report();
  }
  std::vector<std::string> outcomes;
  size_t at = 0;
  while ((at = r.output.find("decided rc=", at)) != std::string::npos) {
    const size_t end = r.output.find('\n', at);
    const std::string line = r.output.substr(at, end - at);
    if (std::find(outcomes.begin(), outcomes.end(), line) == outcomes.end()) {
      outcomes.push_back(line);
    }
    at = end;
  }
  EXPECT_EQ(outcomes.size(), 1u) << r.Report();
}

// Three nodes: node 0 (rank 0), node 1 (ranks 1-2), node 2 (ranks 3-4). Between nodes 1 and 2
// everything goes through node 0.
std::vector<std::string> ThreeNodes(const std::string& options, const std::string& program) {
  return {"-n 1 " + options + " " + program, "-n 2 " + options + " " + program,
          "-n 2 " + options + " " + program};
}

TEST(NodesTest, ThreeNodesSeeEveryAddressAndTheirOwnNodes) {
  const auto r = RunNodes({"-n 1 --timeout 60 " + Worker() + " exchange --local 1",
                           "-n 2 --timeout 60 " + Worker() + " exchange --local 2",
                           "-n 2 --timeout 60 " + Worker() + " exchange --local 2"});
  for (int node : {0, 1, 2}) EXPECT_TRUE(NodeExited(r, node, 0)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=5 local={0}"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=5 local={1-2}"), 2) << r.Report();
  EXPECT_EQ(CountLines(r.output, "exchange ok n=5 local={3-4}"), 2) << r.Report();
}

TEST(NodesTest, ThreeNodesRelayAKillBetweenTheJoiners) {
  // Rank 4 (node 2) kills itself; node 1 hears of it only through node 0.
  const auto r = RunNodes(ThreeNodes("--ft --timeout 60", Worker() + " failures --victims 4"
                                                                     " --end self-abort"));
  for (int node : {0, 1, 2}) EXPECT_TRUE(NodeExited(r, node, 0)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {4}"), 4) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 4 failed (killed by signal 9 (SIGKILL))"), 4) << r.Report();
}

TEST(NodesTest, ThreeNodesNameTheNodeWhereTheJobEnded) {
  // Rank 1 (node 1) aborts the whole job: node 0 hears it from node 1, node 2 through node 0,
  // and both name node 1.
  const auto r = RunNodes(ThreeNodes("--timeout 60", Worker() + " abort-all 7"));
  for (int node : {0, 1, 2}) EXPECT_TRUE(NodeExited(r, node, 7)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "node node1 ended the job: rank 1 aborted the job with status 7"),
            2)
      << r.Report();
}

TEST(NodesTest, ThreeNodesReportALostNodeToEveryOther) {
  // Node 2 is lost once its ranks 3 and 4 are ready; node 1 hears it through node 0.
  const std::string survivor = "-n 2 --ft --timeout 60 " + Worker() + " failures --victims 3,4";
  const auto r = RunNodes({"-n 1 --ft --timeout 60 " + Worker() + " failures --victims 3,4",
                           survivor, survivor + " --end announce"},
                          Fate::kLost, "victim 4 ready");
  EXPECT_TRUE(NodeExited(r, 0, 1)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 1, 1)) << r.Report();
  EXPECT_TRUE(NodeExited(r, 2, 128 + 9)) << r.Report();
  EXPECT_EQ(CountLines(r.output, "failures ok {3-4}"), 3) << r.Report();
  for (const char* victim : {"rank 3", "rank 4"}) {
    EXPECT_EQ(CountLines(r.output, std::string(victim) + " failed (its node node2 went down)"), 3)
        << r.Report();
  }
}

}  // namespace
}  // namespace rft::testing
