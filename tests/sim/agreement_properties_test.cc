// The agreement's properties (docs/agreement.md) over many seeded random schedules of the same
// EraNode the control plane's service drives: termination of every survivor, uniform agreement
// among the survivors, validity of the flag (the AND of a set holding every survivor), a failed
// set of crashed members only, the acknowledged intersection; and the failure-free latency in
// message delays. A violation prints its seed and the command that replays it.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/sim/agreement_sim.h"
#include "tests/sim/sim_test_util.h"

namespace rft::sim {
namespace {

// Crashes at random points: one to three members (never all), each before it starts or after
// one of its first messages, through three agreements in a row.
std::string CheckRandomSchedule(uint64_t seed, Rank n) {
  std::mt19937_64 pick(seed * 7919 + n);
  AgreementSimOptions options;
  options.n = n;
  options.seed = seed;
  options.agreements = 3;
  options.crashes = static_cast<int>(pick() % 4);
  // The window spans a member's messages of all three agreements (a few per tree level).
  options.crash_window_messages = static_cast<int>(2 + pick() % (6 * (std::bit_width(n) + 1)));
  // Detection sometimes faster than messages, sometimes much slower (views then differ long).
  if (pick() % 2 == 0) {
    options.min_detect_ns = 500;
    options.max_detect_ns = 8000;
  }
  const AgreementSimResult result = RunAgreementSim(options);
  return CheckAgreementProperties(options, result);
}

void RunSizes(const std::vector<Rank>& sizes, int seeds) {
  ForEachSeed(sizes, UnderSlowSanitizer() ? seeds / 10 : seeds, CheckRandomSchedule);
}

// Non-blocking agreements: members keep up to 1..150 outstanding (beyond EraNode::kMaxAhead, so
// Start holds some back), start with skews up to a hundred message delays, and crash at random
// points among their messages (the MPI test: one member posts 100 iagrees while another is late).
std::string CheckManyOutstanding(uint64_t seed, Rank n) {
  std::mt19937_64 pick(seed * 104729 + n);
  AgreementSimOptions options;
  options.n = n;
  options.seed = seed;
  options.agreements = 100 + static_cast<int>(pick() % 101);
  options.outstanding = 1 + static_cast<int>(pick() % 150);
  options.skew_ns = static_cast<int64_t>(pick() % 2 == 0 ? 500'000 : 20'000);
  options.crashes = static_cast<int>(pick() % 4);
  options.crash_window_messages = static_cast<int>(2 + pick() % (40 * options.agreements));
  const AgreementSimResult result = RunAgreementSim(options);
  return CheckAgreementProperties(options, result);
}

TEST(AgreementPropertiesTest, HoldWithManyOutstandingAgreementsAndSkew) {
  ForEachSeed({2, 3, 4, 5, 8, 13}, UnderSlowSanitizer() ? 12 : 120, CheckManyOutstanding);
}

// 100,400 schedules in all across the four tests below (and 30,000 with the fast path after).
TEST(AgreementPropertiesTest, HoldUnderRandomCrashesTwoToSixteen) {
  RunSizes({2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 4000);  // 60,000
}

TEST(AgreementPropertiesTest, HoldUnderRandomCrashesUpToSixtyFour) {
  RunSizes({17, 24, 31, 32, 33, 48, 63, 64}, 4500);  // 36,000
}

TEST(AgreementPropertiesTest, HoldUnderRandomCrashesUpToThousand) {
  RunSizes({100, 128, 255, 256, 1000}, 800);  // 4,000
}

TEST(AgreementPropertiesTest, HoldUnderRandomCrashesAtFourThousand) {
  RunSizes({1024, 4096}, UnderSlowSanitizer() ? 20 : 200);  // 400
}

// The same with the API's fast path in front of every agreement: members that completed it
// and members that fell back to the EraNode must still agree.
std::string CheckRandomScheduleWithFastPath(uint64_t seed, Rank n) {
  std::mt19937_64 pick(seed * 104729 + n);
  AgreementSimOptions options;
  options.n = n;
  options.seed = seed;
  options.agreements = 3;
  options.fast_path = true;
  options.crashes = static_cast<int>(pick() % 4);
  // A member sends n - 1 fast messages per agreement, then its EraNode's.
  options.crash_window_messages = static_cast<int>(2 + pick() % (4 * n + 12));
  if (pick() % 2 == 0) {
    options.min_detect_ns = 500;
    options.max_detect_ns = 8000;
  }
  return CheckAgreementProperties(options, RunAgreementSim(options));
}

// The same, each member finalizing as soon as it decided its last agreement: a member that fell
// back may need a decision from one that completed the fast path and left, which the departure
// hands over (EraNode::Depart). Without that hand-over some survivors never decide here.
std::string CheckRandomScheduleWithDepartures(uint64_t seed, Rank n) {
  std::mt19937_64 pick(seed * 1299709 + n);
  AgreementSimOptions options;
  options.n = n;
  options.seed = seed;
  options.agreements = 2;
  options.fast_path = true;
  options.depart_after_last = true;
  options.crashes = 1 + static_cast<int>(pick() % 2);
  options.crash_window_messages = static_cast<int>(2 + pick() % (2 * n + 8));
  if (pick() % 2 == 0) {
    options.min_detect_ns = 500;
    options.max_detect_ns = 8000;
  }
  return CheckAgreementProperties(options, RunAgreementSim(options));
}

TEST(AgreementPropertiesTest, HoldWhenMembersFinalizeAtOnce) {
  ForEachSeed({2, 3, 4, 5, 8, 13, 16}, UnderSlowSanitizer() ? 200 : 2000,
              CheckRandomScheduleWithDepartures);  // 14,000
}

TEST(AgreementPropertiesTest, HoldWithTheFastPathInFront) {
  ForEachSeed({2, 3, 4, 5, 7, 8, 13, 16, 31, 32}, UnderSlowSanitizer() ? 300 : 3000,
              CheckRandomScheduleWithFastPath);  // 30,000
}

// The guarded agreement (rft_comm_agree_deadline): one to three stuck members (their programs
// loop, their control threads answer) in any tree role, sometimes with crashes too, through
// three agreements. Every stuck member is cut, nobody else is, the agreement's properties hold,
// and each agreement ends within 1.2 deadline + a grace per view change + one (+ message and
// detection delays).
std::string CheckGuardedSchedule(uint64_t seed, Rank n) {
  std::mt19937_64 pick(seed * 15485863 + n);
  AgreementSimOptions options;
  options.n = n;
  options.seed = seed;
  options.agreements = 3;
  options.deadline_ns = 10'000'000;  // 10 ms: a thousand times the message delays
  options.stuck = 1 + static_cast<int>(pick() % 3);
  options.crashes = static_cast<int>(pick() % 2);
  options.crash_window_messages = static_cast<int>(2 + pick() % (6 * (std::bit_width(n) + 1)));
  const AgreementSimResult result = RunAgreementSim(options);
  std::string violation = CheckAgreementProperties(options, result);
  if (violation.empty()) violation = CheckGuardProperties(options, result, 2'000'000);
  return violation;
}

TEST(AgreementPropertiesTest, TheGuardCutsExactlyTheStuckMembers) {
  ForEachSeed({2, 3, 4, 5, 8, 13, 16, 31, 64, 100}, UnderSlowSanitizer() ? 50 : 500,
              CheckGuardedSchedule);  // 5,000
}

// Failure-free, every message one unit late: the decision reaches the last member after at most
// 2⌈log2 n⌉ delays (up the binomial tree, then down), within the target 2⌈log2 n⌉ + 2.
TEST(AgreementPropertiesTest, FailureFreeDecidesWithinTwoLogNDelays) {
  std::vector<Rank> sizes = {2, 3, 4, 7, 8, 100, 1024, 4096};
  if (!UnderSlowSanitizer()) sizes.push_back(65536);
  for (Rank n : sizes) {
    AgreementSimOptions options;
    options.n = n;
    options.unit_delays = true;
    options.agreements = 2;
    const AgreementSimResult result = RunAgreementSim(options);
    ASSERT_EQ(CheckAgreementProperties(options, result), "") << "n=" << n;
    const int64_t log2n = std::bit_width(n - 1);  // ⌈log2 n⌉
    EXPECT_LE(result.decided_ns[0], 2 * log2n) << "n=" << n;
    // Up and down: one message per tree edge each way.
    EXPECT_EQ(result.messages, 2u * 2u * (n - 1)) << "n=" << n;
  }
}

// A few failures at 65,536 members (8,192 under ASan and TSan, which are several times slower),
// two agreements: the properties hold at full scale.
TEST(AgreementPropertiesTest, HoldWithFewCrashesAtSixtyFiveThousand) {
  for (uint64_t seed : SeedsToRun(2)) {
    AgreementSimOptions options;
    options.n = UnderSlowSanitizer() ? 8192 : 65536;
    options.seed = seed;
    options.agreements = 2;
    options.crashes = 2;
    options.crash_window_messages = 40;
    const AgreementSimResult result = RunAgreementSim(options);
    EXPECT_EQ(CheckAgreementProperties(options, result), "") << "seed=" << seed;
  }
}

}  // namespace
}  // namespace rft::sim
