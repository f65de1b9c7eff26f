// Seed handling for the simulator's property tests: which seeds to run, and how a failure says
// how to replay itself.
//
//   RFT_SIM_SEED=<seed>   run only that seed (every size the test covers, or RFT_SIM_N's)
//   RFT_SIM_N=<size>      run only that job size
//   RFT_SIM_SEEDS=<count> run seeds 1..count instead of each test's default
#ifndef RFT_TESTS_SIM_SIM_TEST_UTIL_H_
#define RFT_TESTS_SIM_SIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/rank_set.h"

namespace rft::sim {

// True under ASan or TSan, which slow the simulator several times over: the largest runs are
// skipped there to keep the tests fast (UBSan builds at -O1 keep up and run everything).
bool UnderSlowSanitizer();

// The seeds to run: RFT_SIM_SEED alone if set, else 1..RFT_SIM_SEEDS or 1..default_count.
std::vector<uint64_t> SeedsToRun(int default_count);

// Runs `check(seed, n)` for every seed and size (minus those filtered by RFT_SIM_N); `check`
// returns "" when the properties hold, else a one-line description of the violation. Each
// violation is reported with its seed, its size and the command that replays it; the loop
// stops after a few failures so one bug does not print a thousand.
void ForEachSeed(const std::vector<Rank>& sizes, int default_count,
                 const std::function<std::string(uint64_t seed, Rank n)>& check);

}  // namespace rft::sim

#endif  // RFT_TESTS_SIM_SIM_TEST_UTIL_H_
