// rft_finalize after failures never hangs: after 1, 2 and n-1 of n = 4 processes die (each kills
// itself after a barrier), every survivor's finalize returns. Open MPI's ULFM hung here in 1 to 3
// runs of 7, so each case runs many times (fewer under the sanitizers, which are 2-15x slower).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

constexpr int kRepeats = kSanitizedBuild ? 5 : 50;

class FinalizeTest : public ::testing::TestWithParam<int> {};

TEST_P(FinalizeTest, EverySurvivorFinalizes) {
  constexpr int kN = 4;
  const int victims = GetParam();
  for (int run = 0; run < kRepeats; ++run) {
    const auto r =
        RunCommand("tools/rftrun/rftrun",
                   {"-n", std::to_string(kN), "--ft", "--timeout", "30",
                    Runfile("tests/multiproc/api_worker"), "finalize", std::to_string(victims)},
                   std::chrono::seconds(40), TolerantHeartbeats());
    ASSERT_FALSE(r.timed_out) << "run " << run << "\n" << r.Report();
    ASSERT_EQ(r.exit_status, 128 + 9) << "run " << run << "\n" << r.Report();
    ASSERT_EQ(CountLines(r.output, "finalize ok"), kN - victims) << "run " << run << "\n"
                                                                 << r.Report();
    ASSERT_EQ(CountLines(r.output, "] FAILED: "), 0) << "run " << run << "\n" << r.Report();
  }
}

INSTANTIATE_TEST_SUITE_P(Victims, FinalizeTest, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace rft::testing
