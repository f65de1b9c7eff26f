// Properties of the detector while the job grows (replacements joining as new ranks), over many
// seeded simulated schedules (see sim_test_util.h for replaying a seed).
//
// The old ranks grow one by one and the new ones start their rings one by one, up to kGrowSkew
// apart; failures come before the growth (known to the merge or still on their way), during it
// and after it, at old and new ranks alike. Whatever the schedule: no running process is
// suspected, every survivor (new ones included) learns every failure within the bound, and once
// the dust settles the ring is whole again: every running rank puts to the next running one.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/sim/detector_checks.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/simulator.h"

namespace rft::sim {
namespace {

constexpr int64_t kGrowAt = 60 * kMs;
constexpr int64_t kGrowSkew = 100 * kMs;  // five heartbeat timeouts

// Every running rank has grown and puts its heartbeats to the next running rank.
std::string CheckRingWhole(const Simulator& sim) {
  std::vector<Rank> running;
  for (Rank r = 0; r < sim.size(); ++r) {
    if (sim.running(r)) running.push_back(r);
  }
  for (size_t i = 0; i < running.size(); ++i) {
    const detector::DetectorNode& node = sim.node(running[i]);
    const Rank expected = running.size() == 1 ? kInvalidRank : running[(i + 1) % running.size()];
    if (node.size() != sim.size() || node.observer() != expected) {
      std::ostringstream why;
      why << "ring not whole: rank " << running[i] << " (size " << node.size() << ") puts to "
          << node.observer() << ", expected " << expected << Describe(sim);
      return why.str();
    }
  }
  return "";
}

std::string GrowthUnderFailures(uint64_t seed, Rank n) {
  SimOptions o = Options(seed, n);
  std::mt19937_64 rng(seed * 2654435761u + n);
  o.grow_to = n + 1 + static_cast<Rank>(rng() % n);  // up to twice the size
  o.grow_at_ns = kGrowAt;
  o.grow_skew_max_ns = kGrowSkew;
  o.first_word_timeout_ns = kGrowSkew + 50 * kMs;
  Simulator sim(o);

  std::vector<Rank> ranks(o.grow_to);
  for (Rank r = 0; r < o.grow_to; ++r) ranks[r] = r;
  std::shuffle(ranks.begin(), ranks.begin() + n, rng);
  // Old ranks fail before the growth: most are declared by then (the merge hands them to the
  // new ranks), one failing late is not (the new ranks must learn it from the broadcast).
  const size_t before = rng() % std::min<Rank>(3, n);
  std::vector<Rank> early(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(before));
  int64_t last = InjectCrashesAndHangs(sim, rng, before, 3 * kMs, kGrowAt - 10 * kMs, early);
  // Then any other rank, old or new, while the growth is under way or soon after.
  std::vector<Rank> rest(ranks.begin() + static_cast<std::ptrdiff_t>(before), ranks.end());
  const size_t after = rng() % 3;
  last = std::max(
      last, InjectCrashesAndHangs(sim, rng, after, kGrowAt, kGrowSkew + 40 * kMs, std::move(rest)));

  const size_t faults = before + after;
  const int64_t bound =
      kGrowSkew + o.first_word_timeout_ns + KnowledgeBound(o, std::max<size_t>(faults, 1));
  const int64_t settled =
      kGrowAt + kGrowSkew + o.first_word_timeout_ns + 10 * o.heartbeat.timeout_ns;
  const int64_t end = std::max(last + bound, settled);
  if (!sim.RunUntilAllKnow(end, kMs)) {
    return "not every survivor knew every failure by the end of the run" + Describe(sim);
  }
  sim.RunUntil(end);  // past every hand-over and first-word window
  if (std::string why = FirstFalseSuspicion(sim); !why.empty()) return why;
  if (sim.failures().size() != faults) {
    return "a rank failed that no fault was injected into" + Describe(sim);
  }
  if (std::string why = CheckKnowledge(sim, bound); !why.empty()) return why;
  return CheckRingWhole(sim);
}

TEST(GrowthPropertiesTest, GrowthUnderFailuresKeepsTheDetectorSound) {
  ForEachSeed(kSmallSizes, 200, GrowthUnderFailures);
}

TEST(GrowthPropertiesTest, GrowthUnderFailuresAt1000) {
  ForEachSeed({1000}, 3, GrowthUnderFailures);
}

// Growth from a single survivor: the last process of a job whose others all failed is joined
// by replacements, and they watch each other again.
TEST(GrowthPropertiesTest, ALoneSurvivorIsJoined) {
  ForEachSeed({2, 3, 8}, 30, [](uint64_t seed, Rank n) -> std::string {
    SimOptions o = Options(seed, n);
    o.grow_to = 2 * n;
    o.grow_at_ns = kGrowAt;
    o.grow_skew_max_ns = kGrowSkew;
    o.first_word_timeout_ns = kGrowSkew + 50 * kMs;
    Simulator sim(o);
    for (Rank r = 1; r < n; ++r) sim.Crash(r, 3 * kMs);
    sim.RunUntil(kGrowAt + kGrowSkew + o.first_word_timeout_ns + 10 * o.heartbeat.timeout_ns);
    if (std::string why = FirstFalseSuspicion(sim); !why.empty()) return why;
    if (std::string why = CheckKnowledge(sim, INT64_MAX); !why.empty()) return why;
    return CheckRingWhole(sim);
  });
}

// The rules are what keep it sound: without the hand-over and the first-word window (both 0),
// the same skew has live processes suspected.
TEST(GrowthPropertiesTest, WithoutTheGrowthRulesSkewedGrowthIsSuspected) {
  size_t false_suspicions = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimOptions o = Options(seed, 5);
    o.grow_to = 8;
    o.grow_at_ns = kGrowAt;
    o.grow_skew_max_ns = kGrowSkew;
    Simulator sim(o);
    sim.RunUntil(kGrowAt + kGrowSkew + 5 * o.heartbeat.timeout_ns);
    for (const SuspicionRecord& s : sim.suspicions()) false_suspicions += s.suspect_running;
  }
  EXPECT_GT(false_suspicions, 0u);
}

}  // namespace
}  // namespace rft::sim
