// Shared pieces of the detector's property tests (detector_properties_test.cc,
// growth_properties_test.cc): the simulated model they run, the bound on how long news takes,
// fault injection, and the checks, each returning "" when the property holds and else a one-line
// description of the violation with the run's faults and suspicions.
#ifndef RFT_TESTS_SIM_DETECTOR_CHECKS_H_
#define RFT_TESTS_SIM_DETECTOR_CHECKS_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/rank_set.h"
#include "tests/sim/simulator.h"

namespace rft::sim {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;
inline const std::vector<Rank> kSmallSizes = {2, 3, 5, 16, 64};

uint32_t CeilLog2(Rank n);

// Default model plus occasional scheduling stalls well below δ - 2η.
SimOptions Options(uint64_t seed, Rank n);

// The worst time, in a schedule with `faults` faults and no partition, from a fault until every
// survivor knows it. One timeout per fault, each plus a period of tick granularity, scheduling
// lateness and propagation, is not enough: faults at adjacent ranks chain. If the observer of a
// dead process dies itself just before its timeout, the wait was wasted, and the next observer
// must first declare the dead observer and only then starts watching the first dead process:
// with F faults, up to F - 1 wasted windows plus F timeouts.
int64_t KnowledgeBound(const SimOptions& o, size_t faults);

// The run's faults and suspicions, to append to a violation (a dozen at most).
std::string Describe(const Simulator& sim);

// Every declared failure known by every running process, within `bound` of the fault (or of the
// process's birth, for a rank that joined in a growth after the fault).
std::string CheckKnowledge(const Simulator& sim, int64_t bound);

// Crashes or hangs (a coin decides each) `faults` distinct ranks drawn from `candidates`
// (all ranks when empty) at times drawn from [from, from + span); returns the last fault's time.
int64_t InjectCrashesAndHangs(Simulator& sim, std::mt19937_64& rng, size_t faults, int64_t from,
                              int64_t span, std::vector<Rank> candidates = {});

// The first suspicion of a process that was still running, described; empty if none.
std::string FirstFalseSuspicion(const Simulator& sim);

}  // namespace rft::sim

#endif  // RFT_TESTS_SIM_DETECTOR_CHECKS_H_
