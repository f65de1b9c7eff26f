// Properties of the heartbeat ring and the reliable broadcast together, over many seeded
// simulated schedules (see sim_test_util.h for replaying a seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <sstream>
#include <string>

#include "tests/sim/detector_checks.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/simulator.h"

namespace rft::sim {
namespace {

using detector::BroadcastKind;
using detector::BroadcastMessage;

// (a) + (b) without partitions: crashes and hangs reach every survivor within the bound, and no
// running process is ever suspected.
std::string CrashesAndHangs(uint64_t seed, Rank n) {
  const SimOptions o = Options(seed, n);
  Simulator sim(o);
  std::mt19937_64 rng(seed * 7919 + n);
  const size_t faults = 1 + rng() % std::min<Rank>(3, n - 1);
  const int64_t last = InjectCrashesAndHangs(sim, rng, faults, 3 * kMs, 40 * kMs);
  const int64_t bound = KnowledgeBound(o, faults);
  if (!sim.RunUntilAllKnow(last + bound + 10 * kMs, kMs)) {
    return "not every survivor knew every failure by the end of the run";
  }
  if (std::string why = FirstFalseSuspicion(sim); !why.empty()) return why;
  if (sim.failures().size() != faults) return "a rank failed that no fault was injected into";
  return CheckKnowledge(sim, bound);
}

TEST(DetectorPropertiesTest, CrashesAndHangsReachEverySurvivor) {
  ForEachSeed(kSmallSizes, 200, CrashesAndHangs);
}

TEST(DetectorPropertiesTest, CrashesAndHangsReachEverySurvivorAt1000) {
  ForEachSeed({1000}, 4, CrashesAndHangs);
}

// Start-up skew: the processes start their rings up to kSkew apart, as they leave the start-up
// fence on a loaded node. With the first-word rule no running process is suspected, and a rank
// that crashes or hangs (before or after its start) is still known everywhere within the skew
// and the first-word timeout plus the usual bound.
constexpr int64_t kSkew = 200 * kMs;

std::string SkewedStarts(uint64_t seed, Rank n) {
  SimOptions o = Options(seed, n);
  o.start_skew_max_ns = kSkew;
  o.first_word_timeout_ns = kSkew + 50 * kMs;
  Simulator sim(o);
  std::mt19937_64 rng(seed * 6700417 + n);
  const size_t faults = rng() % std::min<Rank>(3, n);  // none in a third of the runs at n = 2
  const int64_t last = InjectCrashesAndHangs(sim, rng, faults, 0, kSkew + 40 * kMs);
  // A rank that fails before its first put is suspected only when its observer's first-word
  // window ends, and that observer may itself start kSkew late.
  const int64_t bound =
      kSkew + o.first_word_timeout_ns + KnowledgeBound(o, std::max<size_t>(faults, 1));
  const int64_t end = std::max(last + bound, kSkew + o.first_word_timeout_ns + 4 * kMs * 10);
  if (!sim.RunUntilAllKnow(end, kMs)) {
    return "not every survivor knew every failure by the end of the run";
  }
  sim.RunUntil(end);  // a failure-free run still goes on past every first-word timeout
  if (std::string why = FirstFalseSuspicion(sim); !why.empty()) return why;
  if (sim.failures().size() != faults) return "a rank failed that no fault was injected into";
  return CheckKnowledge(sim, bound);
}

TEST(DetectorPropertiesTest, SkewedStartsAreNotTakenForSilence) {
  ForEachSeed(kSmallSizes, 200, SkewedStarts);
}

// The rule is what keeps them apart: without it, the same skew makes live processes suspects.
TEST(DetectorPropertiesTest, WithoutTheFirstWordRuleSkewedStartsAreSuspected) {
  size_t false_suspicions = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimOptions o = Options(seed, 5);
    o.start_skew_max_ns = kSkew;
    Simulator sim(o);
    sim.RunUntil(kSkew + 50 * kMs);
    for (const SuspicionRecord& s : sim.suspicions()) false_suspicions += s.suspect_running;
  }
  EXPECT_GT(false_suspicions, 0u);
}

// (b) with partitions: a running process may be suspected (and is then killed) only if no put of
// its own landed at its observer for δ; afterwards every survivor still learns everything.
std::string Partitions(uint64_t seed, Rank n) {
  SimOptions o = Options(seed, n);
  Simulator sim(o);
  std::mt19937_64 rng(seed * 104729 + n);
  const int64_t delta = o.heartbeat.timeout_ns;
  int64_t heal = 0;
  const int cuts = 1 + static_cast<int>(rng() % 2);
  for (int i = 0; i < cuts; ++i) {
    // One side is a contiguous block of ranks, as when a switch or a node drops out.
    const Rank first = static_cast<Rank>(rng() % n);
    const Rank count = 1 + static_cast<Rank>(rng() % std::max<Rank>(1, n / 2));
    RankSet side;
    for (Rank k = 0; k < count; ++k) side.Insert((first + k) % n);
    const int64_t from = 2 * kMs + static_cast<int64_t>(rng() % (30 * kMs));
    const int64_t length = kMs + static_cast<int64_t>(rng() % (2 * delta));
    sim.Partition(side, from, from + length);
    heal = std::max(heal, from + length);
  }
  if (rng() % 2) sim.Crash(static_cast<Rank>(rng() % n), static_cast<int64_t>(rng() % (40 * kMs)));
  // A partition can cascade (each declared rank's predecessor is then watched across the cut),
  // so the run gets room for every rank to be declared once.
  sim.RunUntil(heal);
  if (!sim.RunUntilAllKnow(heal + static_cast<int64_t>(n) * (delta + 10 * kMs), kMs)) {
    return "not every survivor knew every failure after the partitions healed";
  }
  for (const SuspicionRecord& s : sim.suspicions()) {
    if (s.suspect_running && s.silence_ns < delta) {
      std::ostringstream why;
      why << s.observer << " suspected running " << s.suspect << " at " << s.at_ns
          << " ns after only " << s.silence_ns / kUs << " us without a put from it";
      return why.str();
    }
  }
  return CheckKnowledge(sim, INT64_MAX);
}

TEST(DetectorPropertiesTest, PartitionsOnlySuspectProcessesThatMissedTheTimeout) {
  ForEachSeed(kSmallSizes, 200, Partitions);
}

// Fail-stop whatever the source: a rank a transport accuses (alive or not) is told and killed, and
// every survivor learns it; in the end every running process holds the same failed set, which
// holds no running process. Accusations may cross (two ranks accusing each other), and a crash
// may come on top.
std::string Accusations(uint64_t seed, Rank n) {
  const SimOptions o = Options(seed, n);
  Simulator sim(o);
  std::mt19937_64 rng(seed * 2654435761u + n);
  struct Accusation {
    Rank accuser, accused;
  };
  std::vector<Accusation> accusations(1 + rng() % std::min<Rank>(3, n - 1));
  int64_t last = 0;
  for (Accusation& a : accusations) {
    a.accuser = static_cast<Rank>(rng() % n);
    a.accused = static_cast<Rank>((a.accuser + 1 + rng() % (n - 1)) % n);
    const int64_t at = 3 * kMs + static_cast<int64_t>(rng() % (20 * kMs));
    sim.Accuse(a.accuser, a.accused, at);
    last = std::max(last, at);
  }
  size_t crashes = 0;
  if (n > 2 && rng() % 2) {
    const int64_t at = 3 * kMs + static_cast<int64_t>(rng() % (20 * kMs));
    sim.Crash(static_cast<Rank>(rng() % n), at);
    last = std::max(last, at);
    crashes = 1;
  }
  sim.RunUntil(last);  // AllKnow cannot see accusations still to come
  const int64_t bound = KnowledgeBound(o, accusations.size() + crashes);
  if (!sim.RunUntilAllKnow(last + bound + 10 * kMs, kMs)) {
    return "not every survivor knew every failure by the end of the run" + Describe(sim);
  }
  for (const Accusation& a : accusations) {
    // An accuser that was itself gone by then accused nobody.
    if (sim.LearnedAt(a.accuser, a.accused) >= 0 && sim.running(a.accused)) {
      return "rank " + std::to_string(a.accused) + " was accused by " + std::to_string(a.accuser) +
             " and is still running" + Describe(sim);
    }
  }
  for (Rank r = 0; r < n; ++r) {
    if (!sim.running(r)) continue;
    for (Rank failed : sim.known_failures(r)) {
      if (sim.running(failed)) {
        return "survivor " + std::to_string(r) + " holds running rank " + std::to_string(failed) +
               " failed" + Describe(sim);
      }
    }
    if (sim.known_failures(r).size() != sim.failures().size()) {
      return "survivor " + std::to_string(r) + " knows " +
             std::to_string(sim.known_failures(r).size()) + " of " +
             std::to_string(sim.failures().size()) + " failures" + Describe(sim);
    }
  }
  return CheckKnowledge(sim, bound);
}

TEST(DetectorPropertiesTest, AnAccusedRankIsEndedAndEverySurvivorLearnsIt) {
  ForEachSeed(kSmallSizes, 200, Accusations);
}

// (c) without failures a broadcast reaches every process exactly once within ⌈log2 n⌉+1 hops.
// The bound is on the graph's diameter; the first copy to arrive only follows a shortest path
// when the latency spread is small, so this uses uniform jitter below latency / (2⌈log2 n⌉).
std::string HopsWithoutFailures(uint64_t seed, Rank n) {
  SimOptions o = Options(seed, n);
  o.network.jitter = NetworkModel::Jitter::kUniform;
  o.network.jitter_ns = std::max<int64_t>(1, o.network.latency_ns / (2 * (CeilLog2(n) + 1)));
  Simulator sim(o);
  std::mt19937_64 rng(seed);
  const Rank origin = static_cast<Rank>(rng() % n);
  const BroadcastMessage revoke{BroadcastKind::kRevoke, 5, 1, origin, 0};
  sim.Broadcast(origin, revoke, kMs);
  sim.RunUntil(2 * kMs);
  const BroadcastRecord* record = sim.FindBroadcast(revoke);
  if (record == nullptr) return "the broadcast was never delivered";
  const uint32_t limit = CeilLog2(n) + 1;
  for (Rank r = 0; r < n; ++r) {
    std::ostringstream why;
    if (record->deliveries[r] != 1) {
      why << "rank " << r << " delivered " << int{record->deliveries[r]} << " times";
      return why.str();
    }
    if (record->hops[r] > limit) {
      why << "rank " << r << " got it after " << record->hops[r] << " hops (limit " << limit << ")";
      return why.str();
    }
  }
  if (!sim.suspicions().empty()) return "a suspicion in a failure-free run";
  return "";
}

TEST(DetectorPropertiesTest, BroadcastWithinLogHopsWithoutFailures) {
  ForEachSeed(kSmallSizes, 200, HopsWithoutFailures);
  ForEachSeed({1000, 4096}, 3, HopsWithoutFailures);
}

// (d) crashes while a broadcast floods: every process that stays running delivers it exactly
// once (or, if the origin died before any copy got out, none does).
std::string CrashesDuringBroadcast(uint64_t seed, Rank n) {
  SimOptions o = Options(seed, n);
  Simulator sim(o);
  std::mt19937_64 rng(seed * 15485863 + n);
  const Rank origin = static_cast<Rank>(rng() % n);
  const int64_t start = 5 * kMs;
  const BroadcastMessage revoke{BroadcastKind::kRevoke, 3, 0, origin, 0};
  sim.Broadcast(origin, revoke, start);
  const size_t faults = 1 + rng() % std::max<Rank>(1, std::min<Rank>(4, n / 3));
  std::vector<Rank> ranks(n);
  for (Rank r = 0; r < n; ++r) ranks[r] = r;
  std::shuffle(ranks.begin(), ranks.end(), rng);
  // Crash the origin's ring neighbours more often than chance: they carry the repaired edges.
  if (rng() % 2) ranks[0] = (origin + 1) % n;
  for (size_t i = 0; i < faults; ++i) {
    sim.Crash(ranks[i], start + static_cast<int64_t>(rng() % (8 * kUs)));
  }
  if (!sim.RunUntilAllKnow(start + KnowledgeBound(o, faults) + 10 * kMs, kMs)) {
    return "the crashes were not known everywhere by the end of the run";
  }
  sim.RunUntil(sim.now_ns() + 2 * kMs);  // let the last resends land
  const BroadcastRecord* record = sim.FindBroadcast(revoke);
  int delivered = 0, missing = 0;
  for (Rank r = 0; r < n; ++r) {
    if (!sim.running(r)) continue;
    const int count = record == nullptr ? 0 : record->deliveries[r];
    if (count > 1)
      return "rank " + std::to_string(r) + " delivered " + std::to_string(count) + " times";
    (count == 1 ? delivered : missing)++;
  }
  if (missing > 0 && (delivered > 0 || sim.running(origin))) {
    return std::to_string(missing) + " running processes never delivered (origin " +
           std::to_string(origin) + (sim.running(origin) ? " running)" : " crashed)");
  }
  return "";
}

TEST(DetectorPropertiesTest, CrashesDuringBroadcastStillDeliverExactlyOnce) {
  ForEachSeed({3, 5, 16, 64}, 200, CrashesDuringBroadcast);
}

// The full scale: 100,000 processes, one crash, detection and propagation, hops of the flood.
TEST(DetectorPropertiesTest, OneCrashAmongOneHundredThousand) {
  if (UnderSlowSanitizer()) GTEST_SKIP() << "100,000 simulated ranks are too slow under ASan/TSan";
  ForEachSeed({100'000}, 1, [](uint64_t seed, Rank n) -> std::string {
    SimOptions o = Options(seed, n);
    o.network.jitter = NetworkModel::Jitter::kUniform;
    o.network.jitter_ns = o.network.latency_ns / (2 * (CeilLog2(n) + 1));
    Simulator sim(o);
    const Rank victim = static_cast<Rank>(seed * 7777 % n);
    sim.Crash(victim, 3 * kMs);
    const int64_t bound = KnowledgeBound(o, 1);
    if (!sim.RunUntilAllKnow(3 * kMs + bound, kMs)) return "not known everywhere in time";
    const BroadcastRecord* flood = sim.FindBroadcast({BroadcastKind::kFailure, 0, 0, 0, victim});
    if (flood == nullptr) return "no failure broadcast";
    const uint16_t hops =
        *std::max_element(flood->hops.begin(), flood->hops.end(), [](uint16_t a, uint16_t b) {
          return (a == BroadcastRecord::kNoHops ? 0 : a) < (b == BroadcastRecord::kNoHops ? 0 : b);
        });
    if (hops > CeilLog2(n) + 1) return "the failure flood took " + std::to_string(hops) + " hops";
    for (const SuspicionRecord& s : sim.suspicions()) {
      if (s.suspect_running) return "false suspicion of " + std::to_string(s.suspect);
    }
    return CheckKnowledge(sim, bound);
  });
}

}  // namespace
}  // namespace rft::sim
