// Replacements joining a running job (tests/multiproc/growth_worker.cc): the survivors and the
// replacement exchange messages and watch each other without suspecting anyone, and later
// failures on either side reach the other.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::vector<std::string>& kEnv = DefaultsUnlessSanitized();

TEST(GrowthTest, AReplacementJoinsTheDetectorAndFailuresCrossBothWays) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "3", "--ft", "--timeout", "60", "--get-stack-traces",
                             Runfile("tests/multiproc/growth_worker")},
                            std::chrono::seconds(90), kEnv);
  EXPECT_EQ(CountLines(r.output, "FAILED"), 0) << r.Report();
  for (const char* rank : {"0", "1", "3"}) {
    EXPECT_EQ(CountLines(r.output, std::string("rank ") + rank + " quiet after the growth"), 1)
        << r.Report();
    EXPECT_EQ(CountLines(r.output,
                         std::string("rank ") + rank + " exchanged messages with the grown job"),
              1)
        << r.Report();
  }
  // The replacement and its parents take the same-node rendezvous exactly when the parents do
  // between themselves (Bootstrap::node_peers).
  const std::string path = CountLines(r.output, "rank 0 reaches 1 by cma") == 1 ? "cma" : "ucx";
  for (const char* pair :
       {"1 reaches 0", "0 reaches 3", "1 reaches 3", "3 reaches 0", "3 reaches 1"}) {
    EXPECT_EQ(CountLines(r.output, std::string("rank ") + pair + " by " + path), 1)
        << pair << r.Report();
  }
  EXPECT_EQ(CountLines(r.output, "rank 0 learned rank 1 failed"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 3 learned rank 1 failed"), 1) << r.Report();
  EXPECT_EQ(CountLines(r.output, "rank 0 learned replacement 3 failed"), 1) << r.Report();
}

}  // namespace
}  // namespace rft::testing
