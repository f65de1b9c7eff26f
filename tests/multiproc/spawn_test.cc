// Recovery by replacement through the public API (tests/multiproc/spawn_worker.c): a killed
// process's place in COMM_WORLD goes to a spawned one, and the program goes on at its size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
const std::vector<std::string> kEnv = {"RFT_HEARTBEAT_PERIOD=10ms", "RFT_HEARTBEAT_TIMEOUT=1s"};
#else
const std::vector<std::string> kEnv = {};
#endif

TEST(SpawnTest, AReplacementTakesTheKilledRanksPlace) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "4", "--ft", "--timeout", "60", "--get-stack-traces",
                             Runfile("tests/multiproc/spawn_worker")},
                            std::chrono::seconds(90), kEnv);
  // Rank 2 killed itself: a crash rftrun did not cause, which the job's status shows.
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
  for (const char* who : {"survivor 0 has rank 0", "survivor 1 has rank 1", "survivor 3 has rank 3",
                          "replacement has rank 2"}) {
    EXPECT_EQ(CountLines(r.output, std::string(who) + " of 4, sum 6"), 1) << who << r.Report();
  }
}

}  // namespace
}  // namespace rft::testing
